"""docs/statistics.md keeps its promises (issue 39.8): the Tarone/Holm table it announces is there."""

from __future__ import annotations

from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"


def test_the_announced_tarone_holm_table_is_there() -> None:
    text = DOC.read_text()
    after = text.split("family dropping 90% → 70% for the power, 1,000 session pairs per row:)", 1)[1]
    first = after.strip().splitlines()[0]
    assert first.startswith("| cases x runs/side | any false flag, Tarone + Holm |")
    rows = [line for line in after.strip().splitlines()[2:] if line.startswith("| ")][:5]
    assert len(rows) == 5 and all(float(r.split("|")[2].strip().rstrip("%")) <= 5 for r in rows)
