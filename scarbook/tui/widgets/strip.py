"""The ✓ ✗ ! strip of a case's runs, coloured by status (symbols from scarbook.reports.table)."""

from __future__ import annotations

from rich.text import Text

from scarbook.models import RunRecord
from scarbook.reports.table import STRIP

STATUS_STYLE = {"pass": "green", "fail": "red", "error": "yellow", "unjudged": "dim"}
BAND_STYLE = {"green": "bold green", "yellow": "bold yellow", "red": "bold red", "none": "dim"}


def strip_text(runs: list[RunRecord], width: int = 20, running: int = 0) -> Text:
    """The newest `width` runs in run order; `running` adds a dim dot per run still in flight."""
    text = Text()
    for r in sorted(runs, key=lambda r: r.k)[-width:]:
        text.append(STRIP[r.status], style=STATUS_STYLE[r.status])
    if running:
        text.append("·" * min(running, 5), style="dim")
    return text


def rate_text(rate: float | None, band: str) -> Text:
    return Text("–" if rate is None else f"{100 * rate:.0f}%", style=BAND_STYLE.get(band, ""))
