"""Keys typed while a screen loads are kept, then acted on once it is ready — never lost (a widget).

A screen that reads files off the UI thread shows a `KeyCatcher` ("loading…") and focuses it while
it loads. The catcher takes every key that reaches it (priority bindings such as the app's quit, and
the keys in `passes`, e.g. escape to leave, still act at once) and keeps them in order. When the data
is there the screen calls `release(widget)`: the catcher hides, `widget` gets the focus, and the kept
keys are posted to the app again, in order, as if typed then. A key that was already on its way to
the catcher when it was released is passed on the same way.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Static


class KeyCatcher(Static, can_focus=True):
    def __init__(self, text: str = "loading…", *, passes: tuple[str, ...] = ("escape",), **kw) -> None:
        super().__init__(text, **kw)
        self.passes = passes
        self.kept: list[tuple[str, str | None]] = []
        self.released = False

    def on_key(self, event: events.Key) -> None:
        self.catch(event)

    def catch(self, event: events.Key) -> None:
        """Keep `event` (or, once released, pass it on). The screen calls this too for a key that reached
        it before the catcher had the focus."""
        if event.key in self.passes:
            return  # bubbles on to the screen's bindings
        event.stop()
        event.prevent_default()
        if self.released:
            self.app.post_message(events.Key(event.key, event.character))
        else:
            self.kept.append((event.key, event.character))

    def hold(self, text: str) -> None:
        """Catch keys again, saying `text` (e.g. while a draft is read for the editor it opens)."""
        self.update(text)
        self.released = False
        self.display = True
        self.focus()

    def release(self, focus: Widget | None) -> None:
        self.released = True
        self.display = False
        if focus is not None:
            focus.focus()
        kept, self.kept = self.kept, []
        for key, character in kept:
            self.app.post_message(events.Key(key, character))
