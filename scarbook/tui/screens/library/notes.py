"""The library's notes column: what to know about a case's latest figures, most important first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from scarbook.text import cut_words
from scarbook.tui.widgets.strip import MARK_STYLE

if TYPE_CHECKING:
    from scarbook.views.library_rows import LibraryRow


def notes_text(r: LibraryRow, width: int = 0) -> Text:
    """"damaged" first (the runs file was read only in part: the rate is not the whole session's, and a
    narrow column must not cut that off), "2 infra" beside a red rate, the latest session's marks (cancelled, partial, ...),
    "regressed since <session>", then "stale"; cut at a word to `width` when given."""
    text = Text("damaged" if r.damaged else "", style="bold red")
    if r.infra_note:  # beside a red rate: part of the red is the machine's
        text.append((", " if text.plain else "") + r.infra_note, style="bold magenta")
    text.append((", " if text.plain and r.marks else "") + ", ".join(r.marks), style=MARK_STYLE)
    if r.trend is not None and r.trend.regressed_since is not None:
        text.append((", " if text.plain else "") + r.trend.regressed_note(), style="bold red")
    if r.stale:
        text.append((", " if text.plain else "") + "stale", style="yellow")
    cut = cut_words(text.plain, width) if width else text.plain
    return text if cut == text.plain else text[:len(cut) - 1] + Text("…")
