"""`?` / F1: the keys of the screen you are on, every one (the footer shows only the everyday ones).

The list is read from the screen's live bindings when help opens, so it cannot drift from what the
keys do. Ctrl+P (the command palette) reaches the same actions by name.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def keys_table(title: str, bindings: dict[str, ActiveBinding], key_display) -> Table:
    """One row per action: its key(s) and what it does (bindings without a description are left out)."""
    rows: dict[str, list[str]] = {}
    for active in bindings.values():
        b = active.binding
        if not b.description or b.system:
            continue
        rows.setdefault(b.description, [])
        shown = key_display(b)
        if shown not in rows[b.description]:
            rows[b.description].append(shown)
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("key", style="bold yellow", no_wrap=True)
    table.add_column("does")
    for description, keys in rows.items():
        table.add_row(" / ".join(keys), description)
    table.add_row("? / F1", "this help")
    table.add_row("Ctrl+P", "command palette: every action by name")
    return table


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,f1,q", "app.pop_screen", "Close")]

    def __init__(self, title: str, bindings: dict[str, ActiveBinding]) -> None:
        super().__init__()
        self.title_text, self.bindings_shown = title, bindings

    def compose(self) -> ComposeResult:
        self.table = keys_table(f"keys on {self.title_text}", self.bindings_shown, self.app.get_key_display)
        with VerticalScroll(id="help"):
            yield Static(self.table, id="help-keys")
            yield Static(Text("Escape closes", style="dim"))
