"""A yes/no modal used before destructive steps (cancel a session, discard unsaved edits)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape,q", "answer(False)", "No")]
    # No is focused the moment the buttons are built, never Yes (the first button) for a turn before an
    # on_mount focus() moves it: Enter typed in that turn answered yes (tests/tui/test_first_focus.py)
    AUTO_FOCUS = "#no"

    def __init__(self, question: str | Text, yes: str = "Yes", no: str = "No") -> None:
        """`question`: markup text, or a rich Text (how a question quoting a user's name stays literal)."""
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(self.question, id="question")
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes} (y)", id="yes", variant="error")
                yield Button(f"{self.no} (n)", id="no", variant="primary")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
