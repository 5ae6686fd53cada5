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


def is_own(active: ActiveBinding) -> bool:
    """A key scarbook binds (in a screen's, the App's or a scarbook widget's BINDINGS), not one Textual's
    classes bring (cursor keys, Tab, copy)."""
    for cls in type(active.node).__mro__:
        if not cls.__module__.startswith("scarbook."):
            continue
        for b in cls.__dict__.get("BINDINGS", ()):
            if isinstance(b, Binding) and (b.action, b.description) == (active.binding.action,
                                                                         active.binding.description):
                return True
    return False


def keys_table(title: str, bindings: dict[str, ActiveBinding], key_display) -> Table:
    """One row per action: its key(s) and what it does (bindings without a description are left out).
    scarbook's own keys come first; the generic keys of the focused widget (cursor, scrolling) after them."""
    sections: tuple[dict[str, list[str]], dict[str, list[str]]] = ({}, {})
    for active in bindings.values():
        b = active.binding
        if not b.description or b.system or b.action in ("help", "app.help"):  # "? / F1 this help" below
            continue
        rows = sections[0 if is_own(active) else 1]
        rows.setdefault(b.description, [])
        shown = key_display(b)
        if shown not in rows[b.description]:
            rows[b.description].append(shown)
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("key", style="bold yellow", no_wrap=True)
    table.add_column("does")
    own, generic = sections
    for description, keys in own.items():
        table.add_row(" / ".join(keys), description)
    table.add_row("? / F1", "this help")
    table.add_row("Ctrl+P", "command palette: every action by name")
    if generic:
        table.add_row("", "")
        table.add_row(Text("moving around", style="dim"), "")
        for description, keys in generic.items():
            table.add_row(" / ".join(keys), description)
    return table


Q_MEANS = ("q goes back, like Escape, on every screen and dialog (the editor with unsaved changes and a "
           "running session ask first; in a text field q is a letter); on the library, the first screen, it "
           "quits. Ctrl+Q quits from anywhere.")


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,f1,q", "app.pop_screen", "Close")]

    def __init__(self, title: str, bindings: dict[str, ActiveBinding]) -> None:
        super().__init__()
        self.title_text, self.bindings_shown = title, bindings

    def compose(self) -> ComposeResult:
        self.table = keys_table(f"keys on {self.title_text}", self.bindings_shown, self.app.get_key_display)
        with VerticalScroll(id="help"):
            yield Static(self.table, id="help-keys")
            yield Static(Text(Q_MEANS, style="dim"), id="help-q")
            yield Static(Text("Escape or q closes", style="dim"))
