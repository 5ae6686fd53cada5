"""A case's trend drawn as text: one block per session (▁ 0% … █ 100%) coloured by band, a marked
session (cancelled, partial, damaged, ...) in the mark colour, and `·` where a session has no rate."""

from __future__ import annotations

from rich.text import Text

from scarbook.stats.rates import band
from scarbook.stats.trends import CaseTrend, TrendPoint
from scarbook.text import pct_beside
from scarbook.tui.widgets.strip import BAND_STYLE

BLOCKS = "▁▂▃▄▅▆▇█"
MARK_STYLE = "bold magenta"  # the library's colour for a session that did not run or judge all it planned
NO_RATE = "·"
# Flake grid backgrounds, from 0% to 100% in five steps (a red-to-green ramp readable on dark themes).
RAMP = ["#8b1a1a", "#b34a1a", "#a07a10", "#5d8a1f", "#1f7a3a"]


def block(rate: float) -> str:
    return BLOCKS[min(len(BLOCKS) - 1, int(rate * (len(BLOCKS) - 1) + 0.5))]


def point_style(point: TrendPoint, threshold: float, green: float) -> str:
    if point.rate is None or point.marks:
        return MARK_STYLE
    return BAND_STYLE[band(point.rate, threshold, green)]


def trend_text(trend: CaseTrend | None, green: float, width: int = 8) -> Text:
    """The newest `width` sessions, oldest at the left; empty when the case never ran."""
    text = Text()
    if trend is None:
        return text
    for p in trend.points[-width:]:
        text.append(NO_RATE if p.rate is None else block(p.rate), style=point_style(p, trend.threshold, green))
    return text


def grid_cell(point: TrendPoint | None, threshold: float, width: int = 5) -> Text:
    """One cell of the flake grid: the rate on a background by rate, `·` without one, blank if not run."""
    if point is None:
        return Text(" " * width)
    if point.rate is None:
        return Text(f"{NO_RATE:^{width}}", style=MARK_STYLE)
    shade = RAMP[min(len(RAMP) - 1, int(point.rate * len(RAMP)))]
    label = pct_beside(point.rate, threshold, unit="") + ("*" if point.marks else "")
    return Text(f"{label:^{width}}", style=f"bold white on {shade}")
