"""The library shows a judged case's rate corrected for the judge's measured error (issue 23)."""

from __future__ import annotations

from scarbook.tui.app import make_app
from tests.helpers.tui_fixtures import SIZE, library_loaded, move_library_cursor, plain
from tests.judge.test_label_files import ITEM, make_project
from tests.reports.test_judge_truth import calibrate

CASE = "id: alpha\ntask: summarize\nchecks:\n  - type: llm_judge\n    rubric: [{item}]\n"


def judged_project(tmp_path, yaml: str = ""):
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10})
    (root / "scarbook.yaml").write_text(yaml)
    (root / "cases" / "alpha").mkdir(parents=True)
    (root / "cases" / "alpha" / "case.yaml").write_text(CASE.format(item=ITEM))
    calibrate(root)
    return root


async def test_the_library_detail_shows_the_corrected_rate(tmp_path):
    app = make_app(judged_project(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, "alpha")
        detail = " ".join(plain(lib.query_one("#detail")).split())
        assert ("judge: ≈ rates corrected for its measured error (40 labels, last 2026-12-02); the gate decides on "
                "them") in detail
        fixed = next(r for r in lib.rows if r.key == "alpha").stats.corrected
        assert f"≈ {100 * fixed.rate:.0f}% corrected for the judge's error (90% CI {100 * fixed.lo:.0f}–" in detail
        assert "raw 75%" in detail


async def test_the_library_says_why_the_raw_rate_stands(tmp_path):
    app = make_app(judged_project(tmp_path, "judge:\n  correct: false\n"))
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, "alpha")
        detail = " ".join(plain(lib.query_one("#detail")).split())
        assert "judge: rates not corrected for the judge's error — off (judge.correct: false in scarbook.yaml)" in detail
        assert "≈" not in detail


def test_list_says_the_corrected_rates_as_the_library_does(tmp_path):
    from tests.judge.test_label_files import scarbook
    root = judged_project(tmp_path)
    out = scarbook(root, "list").output
    assert "judge: ≈ rates corrected for its measured error (40 labels, last 2026-12-02); the gate decides on them" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("  alpha: ≈ "))
    assert "corrected for the judge's error (90% CI " in line and "raw 75%" in line
