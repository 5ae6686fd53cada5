"""A histogram of pass rates across cases: how many cases sit in each 10% bucket."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from scarbook.stats.rates import CaseStats

BUCKETS = 10
BARS = 6  # the bars' height at most; the counts and the bucket labels take a line each under them


def histogram_text(stats: list[CaseStats], threshold: float, height: int = BARS) -> Text:
    counts = [0] * BUCKETS
    for s in stats:
        if s.rate is not None:
            counts[min(BUCKETS - 1, int(s.rate * BUCKETS))] += 1
    peak = max(counts) or 1
    text = Text()
    for level in range(height, 0, -1):
        for b, n in enumerate(counts):
            filled = n * height / peak >= level - 0.5 and n > 0
            low = (b + 1) / BUCKETS <= threshold
            text.append(" ██ " if filled else "    ", style="red" if low else "green")
        text.append("\n")
    for n in counts:
        text.append(f"{n:^4}", style="bold")
    text.append("\n")
    for b in range(BUCKETS):
        text.append(f"{b * 10:>3}%", style="dim")
    text.append("  pass rate (cases per 10% bucket)", style="dim")
    return text


class Distribution(Static):
    """Shows `histogram_text` for the stats it is given, its bars `bars` high (the widget's height follows:
    the screen above it may need lines, and the histogram is what gives them up)."""

    bars = BARS

    def show(self, stats: list[CaseStats], threshold: float, bars: int = BARS) -> None:
        if bars != self.bars:
            self.bars = bars
            self.styles.height = bars + 2 + self.styles.gutter.height  # (its border's line on top)
        self.update(histogram_text(stats, threshold, height=bars))
