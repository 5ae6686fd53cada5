"""A candidate's difference from the baseline drawn as a bar on a −100…+100 point axis: the 95% interval as
a span, the difference as a dot, zero as `┊`, and the ±margin band shaded, so "is it worse by more than the
margin?" is visible at a glance (a span wholly left of the band: shown worse by more than the margin)."""

from __future__ import annotations

from rich.text import Text

from scarbook.models import Versus
from scarbook.stats.head_to_head import VersusRow

CALL_STYLE = {Versus.BETTER: "bold green", Versus.WORSE: "bold red", Versus.SAME: "bold cyan",
              Versus.UNDECIDED: "yellow", Versus.NO_VERDICT: "yellow"}


def diff_bar(row: VersusRow | None, margin: float, width: int = 21, call: str = "") -> Text:
    """The bar of `row` (None or no difference yet: the axis alone). `call`: the decision reached, if any
    (colours the span; before it, the span is dim)."""
    cells = ["─"] * width
    styles = ["grey42"] * width

    def at(x: float) -> int:
        return min(width - 1, max(0, int(round((x + 1) / 2 * (width - 1)))))

    for i in range(at(-margin), at(margin) + 1):
        styles[i] = "grey42 on grey19"
    zero = at(0.0)
    cells[zero], styles[zero] = "┊", "white on grey19"
    if row is not None and row.diff is not None and row.lo is not None and row.hi is not None:
        style = CALL_STYLE.get(Versus(call), "white") if call else "white"
        for i in range(at(row.lo), at(row.hi) + 1):
            cells[i], styles[i] = "━", style.replace("bold ", "")
        cells[at(row.diff)], styles[at(row.diff)] = "●", style
    text = Text()
    for ch, st in zip(cells, styles, strict=True):
        text.append(ch, style=st)
    return text
