"""The ✓ ✗ ! strip of a case's runs, coloured by status (glyphs: scarbook.models.STATUS_GLYPH)."""

from __future__ import annotations

from rich.text import Text

from scarbook.models import STATUS_GLYPH, RunRecord, RunStatus
from scarbook.text import pct_beside

STATUS_STYLE: dict[str, str] = {RunStatus.PASS: "green", RunStatus.FAIL: "red", RunStatus.ERROR: "yellow", RunStatus.UNJUDGED: "dim"}
BAND_STYLE = {"green": "bold green", "yellow": "bold yellow", "red": "bold red", "none": "dim"}
MARK_STYLE = "bold magenta"  # a session that did not run or judge all it planned (library, sessions)


def strip_text(runs: list[RunRecord], width: int = 20, running: int = 0) -> Text:
    """The newest `width` runs in run order; `running` adds a dim dot per run still in flight."""
    text = Text()
    for r in sorted(runs, key=lambda r: r.k)[-width:]:
        text.append(STATUS_GLYPH[r.status], style=STATUS_STYLE[r.status])
    if running:
        text.append("·" * min(running, 5), style="dim")
    return text


def rate_text(rate: float | None, band: str, threshold: float) -> Text:
    """The rate coloured by band, never rounded across the case's threshold (scarbook.text.pct_beside)."""
    return Text(pct_beside(rate, threshold), style=BAND_STYLE.get(band, ""))
