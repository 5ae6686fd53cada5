"""The sandbox slots of one agent's session (`isolation: slot`): started as runs need them, one run at a time each.

Each slot has its own thread: it starts the slot's bwrap (whose --die-with-parent follows the thread that
started it, so the thread lives as long as the slot) and closes it; the slot's runs, one after another, are
waited for on the event loop (proc/slot_wait.py). A slot that failed (proc/slot.py's SlotFailed) is closed and
forgotten; the next run starts a new one.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

from scarbook.proc.common import Finished
from scarbook.proc.slot import Slot, SlotRun


class SlotPool:
    def __init__(self, line: list[str], private: list[str], wipe: list[str]) -> None:
        """`line`: the slots' bwrap line, which binds the `private` folders for their launchers (proc/slot.py)."""
        self.line, self.private, self.wipe = line, private, wipe
        self._free: list[_SlotThread] = []
        self._all: set[_SlotThread] = set()

    async def run(self, job: SlotRun) -> Finished:
        """`job` run in a free slot (one started if none is): its exit status (128+N for signal N), or SlotFailed.
        The run is waited for on the event loop (proc/slot_wait.py); only a slot's start and end are its thread's."""
        worker = self._free.pop() if self._free else await self._start()
        slot = worker.slot
        assert slot is not None  # started before its first run
        try:
            code, timed_out = await slot.run(job)
        finally:
            self._give_back(worker)
        return Finished(code, timed_out=timed_out)

    async def _start(self) -> _SlotThread:
        worker = _SlotThread()
        self._all.add(worker)
        try:
            await worker.call(worker.start, self.line, self.private, self.wipe)
        except BaseException:
            self._all.discard(worker)
            worker.stop()
            raise
        return worker

    def _give_back(self, worker: _SlotThread) -> None:
        if worker.slot is not None and not worker.slot.broken:
            self._free.append(worker)
            return
        self._all.discard(worker)
        worker.stop()  # closes a broken slot on its own thread

    async def close(self) -> None:
        """Every slot ended and reaped (on its thread)."""
        workers, self._free = list(self._all), []
        self._all.clear()
        for worker in workers:
            worker.stop()
        await asyncio.to_thread(_wait, workers)

    def close_now(self) -> None:
        """`close` without an event loop (at exit)."""
        workers, self._free = list(self._all), []
        self._all.clear()
        for worker in workers:
            worker.stop()
        _wait(workers)


def _wait(workers: list[_SlotThread]) -> None:
    for worker in workers:
        worker.thread.join(10)


class _SlotThread:
    """One slot's own thread: it starts the slot, runs its runs, and closes it when stopped."""

    def __init__(self) -> None:
        self.slot: Slot | None = None
        self.calls: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="scarbook-slot", daemon=True)
        self.thread.start()

    def start(self, line: list[str], private: list[str], wipe: list[str]) -> None:
        self.slot = Slot(line, private, wipe)

    def call(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.calls.put((loop, fut, fn, args))
        return fut

    def stop(self) -> None:
        self.calls.put(None)

    def _serve(self) -> None:
        while (item := self.calls.get()) is not None:
            loop, fut, fn, args = item
            result, exc = None, None
            try:
                result = fn(*args)
            except BaseException as caught:  # noqa: BLE001 — handed to whoever awaits it
                exc = caught
            try:
                loop.call_soon_threadsafe(_settle, fut, result, exc)
            except RuntimeError:  # the loop is closed: nobody waits for it
                pass
            del item, loop, fut, fn, args, result, exc
        if self.slot is not None:
            self.slot.close()


def _settle(fut: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is None:
        fut.set_result(result)
    else:
        fut.set_exception(exc)
