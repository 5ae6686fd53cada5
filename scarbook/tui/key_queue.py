"""Keys typed while a screen is still opening wait for it, then reach it in the order they were typed.

A screen that reads files when it opens (the editor loads its case in a thread) is on top of the
stack before it has a focused widget; Textual hands a key that arrives then to the bare screen, which
drops it. So the App asks `hold(event)` first: while the screen on top says `accepts_keys` is False
(or earlier keys are still waiting), the key is kept here. The screen calls `release()` once it is
ready; the keys are then sent again one by one, each only after the one before has been handled all
the way (by the focused widget, its parents, and the bindings), so "type a title, then Ctrl+S" saves
the title. Quitting (Ctrl+Q) never waits.
"""

from __future__ import annotations

import asyncio
from collections import deque

from textual import events
from textual.app import App

PASS_THROUGH = {"ctrl+q"}  # never held: a screen stuck opening must not keep the user in
REPLAYED = "_scarbook_replayed"
SETTLE_TIMEOUT_S = 10.0  # one key's handling; past it the next key goes anyway


def accepts_keys(screen) -> bool:
    """A screen that opens in steps says when it is ready with `accepts_keys`; others always are."""
    return bool(getattr(screen, "accepts_keys", True))


class KeyQueue:
    def __init__(self, app: App) -> None:
        self.app = app
        self.keys: deque[events.Key] = deque()
        self.replaying = False

    def hold(self, event: events.Key) -> bool:
        """Keep `event` for later when the screen on top is not ready (or keys before it wait)."""
        if getattr(event, REPLAYED, False) or event.key in PASS_THROUGH:
            return False
        if self.keys or self.replaying or not accepts_keys(self.app.screen):
            self.keys.append(event)
            return True
        return False

    def release(self) -> None:
        """The screen on top became ready: send it the keys typed meanwhile."""
        if self.keys and not self.replaying:
            self.replaying = True
            self.app.run_worker(self._replay(), group="key-replay", exit_on_error=False)

    async def _replay(self) -> None:
        try:
            # A replayed key may open another screen that is not ready yet: the rest wait for it.
            while self.keys and accepts_keys(self.app.screen):
                held = self.keys.popleft()
                key = events.Key(held.key, held.character)
                setattr(key, REPLAYED, True)
                key.set_sender(self.app)
                self.app.post_message(key)
                await self._handled()
        finally:
            self.replaying = False

    async def _handled(self) -> None:
        """Wait until the last key sent has been through every queue it goes through: the App's
        (priority bindings, then forwarded to the focused widget), the focused widget's, each parent's
        it bubbles to, and the App's again (the other bindings). A callback follows it the same way."""
        done = asyncio.Event()

        def chase() -> None:
            chain = list((self.app.focused or self.app.screen).ancestors_with_self)

            def hop(i: int) -> None:
                if i >= len(chain):
                    done.set()
                elif not chain[i].call_later(hop, i + 1):  # a node already closed: skip it
                    hop(i + 1)

            hop(0)

        if not self.app.call_later(chase):
            return
        try:
            await asyncio.wait_for(done.wait(), SETTLE_TIMEOUT_S)
        except asyncio.TimeoutError:
            pass
