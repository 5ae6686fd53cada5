"""Forcing the one ordering in which Textual loses an after-paint callback.

`call_after_refresh` posts a request to the screen that asks; when that screen handles it, Textual 8.2
hands the callback to the screen *on top* then (`MessagePump._on_invoke_later` → `app.screen._invoke_later`),
which runs it at its own next paint. A screen pushed in between takes it, and one popped before that
paint drops it with itself. `HeldRequests` keeps a screen class's requests until the test lets them go
(with the other screen on top); `drop_after_paint` makes that screen drop them, as one left that fast does.
"""

from __future__ import annotations

from collections.abc import Callable


class HeldRequests:
    def __init__(self, monkeypatch, screen_class) -> None:
        self.real = screen_class.call_after_refresh
        self.held: list = []
        self.holding = True
        held = self

        def call_after_refresh(screen, callback, *args):
            if held.holding:
                held.held.append((screen, callback, args))
                return True
            return held.real(screen, callback, *args)

        monkeypatch.setattr(screen_class, "call_after_refresh", call_after_refresh)

    def let_go(self) -> None:
        """The requests kept so far are made now (whatever screen is on top takes them); later ones at once."""
        self.holding = False
        for screen, callback, args in self.held:
            self.real(screen, callback, *args)


def drop_after_paint(screen, method: Callable) -> list:
    """`screen` drops the after-paint callbacks that call `method` (the list they go to, for the test to
    wait on) and runs the rest as before."""
    keep = screen._invoke_later  # Textual's own queue of after-paint callbacks, which goes with the screen
    dropped: list = []

    def invoke_later(callback, sender) -> None:
        if getattr(getattr(callback, "func", None), "__func__", None) is method:
            dropped.append(callback)
        else:
            keep(callback, sender)

    screen._invoke_later = invoke_later
    return dropped
