"""Blocking work handed off the event loop to a few threads, for less than asyncio.to_thread costs.

`asyncio.to_thread` (loop.run_in_executor) makes a concurrent.futures.Future for every call — with a
threading.Condition and its lock — chains it to an asyncio Future through callbacks on both sides and
copies the context. A run made three such trips (seed its workspace, start its agent, read what the
agent did), and at -j16 on two cores they were a quarter of the main process's time. Here a trip is a
tuple on a SimpleQueue; a thread runs it and hands the result to the loop with one
call_soon_threadsafe. Threads that finish while the loop has not yet taken the last result add
theirs to it: one wake-up of the loop for all of them.

The context is not copied (nothing run here reads a contextvar). Cancelling the awaited future does
not stop the call: it runs to its end, and its result is dropped (as with to_thread).
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
THREADS = 4  # trips at once: most of their time is in system calls (mkdir, a spawn's exec), without the GIL


class _Landing:
    """Results waiting for one loop; the loop is woken once for all that arrive before it takes them."""

    __slots__ = ("loop", "lock", "results", "waking")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.results: list[tuple[asyncio.Future, Any, BaseException | None]] = []
        self.waking = False

    def put(self, fut: asyncio.Future, result: Any, exc: BaseException | None) -> None:
        """On a trip's thread: hand the result over, waking the loop unless a wake-up is pending."""
        with self.lock:
            self.results.append((fut, result, exc))
            if self.waking:
                return
            self.waking = True
        try:
            self.loop.call_soon_threadsafe(self.deliver)
        except RuntimeError:  # the loop is closed: nobody waits for these any more
            pass

    def deliver(self) -> None:
        """On the loop: settle every future whose result has arrived (a cancelled one is left)."""
        with self.lock:
            results, self.results = self.results, []
            self.waking = False
        for fut, result, exc in results:
            if fut.done():
                continue
            if exc is None:
                fut.set_result(result)
            else:
                fut.set_exception(exc)


class Trips:
    """A few daemon threads that run blocking calls for event loops (one set per process: a fork
    makes its own)."""

    def __init__(self, threads: int = THREADS, name: str = "scarbook-trip") -> None:
        self.threads, self.name = threads, name
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._owner = 0
        self._landings: dict[asyncio.AbstractEventLoop, _Landing] = {}

    def call(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Run fn(*args) on one of the threads; a future of the loop it is called from, for its result."""
        loop = asyncio.get_running_loop()
        if self._owner != os.getpid():
            self._start()
        landing = self._landings.get(loop)
        if landing is None:
            if len(self._landings) > 8:  # loops that are closed (a test's, a TUI worker's) go
                self._landings = {lp: ld for lp, ld in self._landings.items() if not lp.is_closed()}
            landing = self._landings[loop] = _Landing(loop)
        fut = loop.create_future()
        self._queue.put((landing, fut, fn, args))
        return fut

    def _start(self) -> None:
        self._queue = queue.SimpleQueue()  # (a forked child's threads are not there: a fresh queue, fresh threads)
        self._landings = {}
        self._owner = os.getpid()
        for i in range(self.threads):
            threading.Thread(target=self._work, args=(self._queue,), name=f"{self.name}_{i}", daemon=True).start()

    @staticmethod
    def _work(work: queue.SimpleQueue) -> None:
        while True:
            landing, fut, fn, args = work.get()
            result = None
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 — handed to whoever awaits it, as to_thread does
                landing.put(fut, None, exc)
            else:
                landing.put(fut, result, None)
            del landing, fut, fn, args, result  # (nothing kept alive by an idle thread)


trips = Trips()


def off_loop(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """`await off_loop(fn, *args)`: fn(*args) on a trip thread, as `asyncio.to_thread` would."""
    return trips.call(fn, *args)
