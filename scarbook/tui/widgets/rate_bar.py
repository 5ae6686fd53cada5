"""The pass rate drawn as a bar: the 95% interval as a shaded span, the rate as a mark, and the
threshold as a `|` marker, so "is this case really above its line?" is visible at a glance. A rate that
falls on the threshold's cell is `Φ`: the dot with the line through it, so neither hides the other."""

from __future__ import annotations

from rich.text import Text

from scarbook.stats.rates import CaseStats
from scarbook.text import interval_beside
from scarbook.tui.widgets.strip import BAND_STYLE

ON_THE_LINE = "Φ"  # the rate's dot and the threshold's bar in one cell


def rate_bar(stats: CaseStats, width: int = 24) -> Text:
    cells = [" "] * width
    styles = ["on grey11"] * width

    def at(x: float) -> int:
        return min(width - 1, max(0, int(round(x * (width - 1)))))

    if stats.rate is not None:
        for i in range(at(stats.lo), at(stats.hi) + 1):
            cells[i], styles[i] = "━", BAND_STYLE[stats.band].replace("bold ", "") + " on grey11"
        cells[at(stats.rate)], styles[at(stats.rate)] = "●", BAND_STYLE[stats.band] + " on grey11"
    t = at(stats.threshold)
    if cells[t] == "●":  # the rate on the line: both show, the dot with the line through it
        cells[t], styles[t] = ON_THE_LINE, BAND_STYLE[stats.band].replace("bold ", "") + " bold on grey23"
    else:
        cells[t] = "|" if cells[t] == " " else "┃"  # inside the interval: a heavier bar, never hidden in it
        styles[t] = "bold white on grey23"
    text = Text()
    for ch, st in zip(cells, styles, strict=False):
        text.append(ch, style=st)
    return text


def interval_text(stats: CaseStats) -> str:
    return "–" if stats.rate is None else interval_beside(stats.lo, stats.hi, stats.threshold)
