"""A rubric item's figures in words: `scarbook rubric stats` prints them, the editor's rubric list shows them."""

from __future__ import annotations

from scarbook.stats.items import ItemFigures
from scarbook.text import pct, plural


def figures_line(f: ItemFigures) -> str:
    """runs judged, FAIL rate and its interval, only-failing count, disagreement, labels — one line."""
    t = f.tally
    if not t.judged:
        return "never judged yet"
    lo, hi = f.interval or (0.0, 1.0)
    parts = [f"{plural(t.judged, 'run')} judged ({plural(t.sessions, 'session')})",
             f"FAIL {pct(f.fail_rate)} (95%: {pct(lo, unit='')}–{pct(hi)})",
             f"only failing item {t.only_failing}×"]
    if t.repeated:
        parts.append(f"repeats disagree {t.disputed}/{t.repeated}")
    labels = t.labels
    if labels.n:
        parts.append(f"labels {labels.n}: agree {pct(f.agreement)}, sens {pct(f.sensitivity)}, "
                     f"spec {pct(f.specificity)}")
    return " · ".join(parts)


def flags_lines(f: ItemFigures) -> list[str]:
    """One line per flag: the flag and its evidence."""
    return [f"{flag}: {why}" for flag, why in f.reasons.items()]


def item_note(f: ItemFigures) -> str:
    """The figures and flags of one item in one line (under the item in the editor's rubric list)."""
    return " · ".join([figures_line(f), *flags_lines(f)])
