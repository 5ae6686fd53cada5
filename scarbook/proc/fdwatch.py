"""Watching the pipes of running agents through one epoll set per event loop.

`loop.add_reader` / `remove_reader` cost about ten times an `epoll_ctl` in Python-side bookkeeping,
and a run registers two or three descriptors. So each event loop gets one epoll set of its own,
which the loop watches as a single descriptor; a run's pipes are added to and removed from that set
directly. When any of them is ready the set is readable, and `_dispatch` hands each ready
descriptor to its callback (level-triggered, like add_reader: what is not read yet is reported
again). Only spawn.py's Linux path uses it; elsewhere programs run on asyncio's own transports.
"""

from __future__ import annotations

import asyncio
import select
import weakref
from collections.abc import Callable

Callback = Callable[[], object]  # (what it returns is not looked at)
MAX_EVENTS = 64


class EpollReaders:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._epoll = select.epoll()
        self._callbacks: dict[int, Callback] = {}
        self._loop = weakref.ref(loop)
        loop.add_reader(self._epoll.fileno(), self._dispatch)

    def add(self, fd: int, callback: Callback) -> None:
        self._epoll.register(fd, select.EPOLLIN)
        self._callbacks[fd] = callback

    def remove(self, fd: int) -> None:
        if self._callbacks.pop(fd, None) is not None:
            self._epoll.unregister(fd)

    def _dispatch(self) -> None:
        for fd, _events in self._epoll.poll(0, MAX_EVENTS):
            callback = self._callbacks.get(fd)  # an earlier callback may have removed it
            if callback is None:
                continue
            try:
                callback()
            except Exception as exc:  # as the loop does for its own readers: report, go on
                loop = self._loop()
                if loop is not None:
                    loop.call_exception_handler({"message": f"exception in the reader of fd {fd}",
                                                 "exception": exc})


_by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def readers_for(loop: asyncio.AbstractEventLoop) -> EpollReaders:
    """The reader set of `loop`, made on first use and kept while the loop lives."""
    readers = _by_loop.get(loop)
    if readers is None:
        readers = EpollReaders(loop)
        _by_loop[loop] = readers
    return readers
