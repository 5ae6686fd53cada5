"""Keys typed while a screen is still opening wait for it, then reach it in the order they were typed.

A screen that reads files when it opens (the editor loads its case in a thread) is on top of the
stack before it has a focused widget; Textual hands a key that arrives then to the bare screen, which
drops it; and a key bound on the library (`e`) acts only after it has bubbled back up to the App,
by which time the keys typed after it have already gone to the library's table. So the App asks
`hold(event)` first and keys go one at a time: a key is sent on only once the one before has been
handled all the way (by the focused widget, its parents, and the bindings), and while the screen on top
says `accepts_keys` is False they wait here until it calls `release()`. So "e, type a title, Ctrl+S"
saves the title, however fast it is typed. Quitting (Ctrl+Q) never waits.

A screen built in steps may take some keys before others: `takes_key(event)` False keeps that key (and
every key typed after it, so the order holds) until the screen's next `release()`. The editor takes
typing into its first fields once they are built and keeps Tab and Ctrl+S until the whole form is.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from textual import events
from textual.app import App

PASS_THROUGH = {"ctrl+q"}  # never held: a screen stuck opening must not keep the user in
REPLAYED = "_scarbook_replayed"
SETTLE_TIMEOUT_S = 5.0  # one key's handling; past it the next key goes anyway


def accepts_keys(screen) -> bool:
    """A screen that opens in steps says when it is ready with `accepts_keys`; others always are."""
    return bool(getattr(screen, "accepts_keys", True))


def takes(screen, event: events.Key) -> bool:
    """`screen` takes `event` now: it accepts keys, and (a screen built in steps) this one already."""
    if not accepts_keys(screen):
        return False
    takes_key = getattr(screen, "takes_key", None)
    return takes_key is None or bool(takes_key(event))


def passes_while_loading(screen, key: str) -> bool:
    """Keys a loading screen takes at once (`KEYS_NOT_HELD`, e.g. escape: a long read can be left);
    such a screen drops the keys held for it (`KeyQueue.drop`) when it goes."""
    return not accepts_keys(screen) and key in getattr(screen, "KEYS_NOT_HELD", ())


class KeyQueue:
    def __init__(self, app: App) -> None:
        self.app = app
        self.keys: deque[events.Key] = deque()
        self.busy = False  # a key is on its way through the app: the next one waits for it
        self._task: asyncio.Task | None = None
        self._requested = False  # the key on its way asked the App for something (tui/messages.AppRequest)
        self._after_keys: list[Callable[[], object]] = []  # waiting for the keys on their way (`when_handled`)
        self.app_busy = False  # the App prepares what the next keys are for (`wait_for_app`)

    def request_posted(self) -> None:
        """A screen posted a request to the App (`OpenEditor` for `e`): the key that did it is handled
        only once the App has handled that request too."""
        self._requested = True

    def wait_for_app(self) -> None:
        """The App is preparing the screen the next keys are for (a session prepared on a thread, whose
        live screen opens when it is ready): keys typed from now on wait until `app_ready()`."""
        self.app_busy = True

    def app_ready(self) -> None:
        self.app_busy = False
        self.release()

    def _takes(self, event: events.Key) -> bool:
        return not self.app_busy and takes(self.app.screen, event)

    def hold(self, event: events.Key) -> bool:
        """True: `event` is kept for later (a key before it is still being handled, or the screen on
        top is not ready). False: it goes on now, and the keys after it wait until it is handled."""
        if (getattr(event, REPLAYED, False) or event.key in PASS_THROUGH
                or passes_while_loading(self.app.screen, event.key)):
            return False
        if self.busy or not self._takes(event):
            self.keys.append(event)
            return True
        if self.keys:  # held for a screen that went without release(): they go first, then this one
            self.keys.append(event)
            self._pump(first_sent=False)
            return True
        self._pump(first_sent=True)
        return False

    def release(self) -> None:
        """The screen on top became ready (or readier): send it the keys typed meanwhile that it takes."""
        if self.keys and not self.busy:
            self._pump(first_sent=False)

    def when_handled(self, callback: Callable[[], object]) -> None:
        """Call `callback` once the keys on their way have acted (at once when none are): the keys a
        screen takes now go before the work it has left (the editor builds the rest of its form after)."""
        if self.busy:
            self._after_keys.append(callback)
        else:
            callback()

    def drop(self) -> None:
        """The screen the held keys were typed for is left before it was ready: they go nowhere."""
        self.keys.clear()

    def _pump(self, first_sent: bool) -> None:
        self.busy = True
        self._task = asyncio.get_running_loop().create_task(self._drain(first_sent))

    async def _drain(self, first_sent: bool) -> None:
        try:
            if first_sent:
                await self._handled()
            # A key may open a screen that is not ready yet (`e`): the rest wait for its release().
            while self.keys and self._takes(self.keys[0]):
                held = self.keys.popleft()
                key = events.Key(held.key, held.character)
                setattr(key, REPLAYED, True)
                key.set_sender(self.app)
                self.app.post_message(key)
                await self._handled()
        finally:
            self.busy = False
            waiting, self._after_keys = self._after_keys, []
            for callback in waiting:
                callback()

    async def _handled(self) -> None:
        """Wait until the last key sent has been through every queue it goes through: the App's
        (priority bindings, then forwarded to the focused widget), the focused widget's, each parent's
        it bubbles to, and the App's again (the other bindings, such as `e` on the library). A
        callback follows it the same way. When the key asked the App for another screen (`e` posts
        OpenEditor, tui/messages.py), that request is in the App's queue now: one more turn of it, so the
        next key finds the screen it opens on top."""
        await self._chase()
        if not self._requested:
            return
        self._requested = False
        turned = asyncio.Event()
        if self.app.call_later(turned.set):
            try:
                await asyncio.wait_for(turned.wait(), SETTLE_TIMEOUT_S)
            except TimeoutError:
                pass

    async def _chase(self) -> None:
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
        except TimeoutError:
            pass


def keys_welcome(screen) -> None:
    """`screen` shows what it read (or why it could not): it takes keys from now on, and the keys typed
    while it loaded act on it now, in order."""
    screen.accepts_keys = True
    release_held_keys(screen.app)


def release_held_keys(app: App) -> None:
    """A screen on `app` became ready: the keys typed meanwhile go to it (an app without a queue: none)."""
    queue = getattr(app, "keys", None)
    if isinstance(queue, KeyQueue):
        queue.release()


def when_keys_handled(app: App, callback: Callable[[], object]) -> None:
    """`callback` once the keys on their way on `app` have acted (an app without a queue: at once)."""
    queue = getattr(app, "keys", None)
    if isinstance(queue, KeyQueue):
        queue.when_handled(callback)
    else:
        callback()


def drop_held_keys(app: App) -> None:
    queue = getattr(app, "keys", None)
    if isinstance(queue, KeyQueue):
        queue.drop()
