"""Watching the pipes of running agents through one epoll set per event loop.

`loop.add_reader` / `remove_reader` cost about ten times an `epoll_ctl` in Python-side bookkeeping,
and a run registers two or three descriptors. So each event loop gets one epoll set of its own,
which the loop watches as a single descriptor; a run's pipes are added to and removed from that set
directly. When any of them is ready the set is readable, and `_dispatch` hands each ready
descriptor to its callback (level-triggered, like add_reader: what is not read yet is reported
again). `PipeReaders` reads a program's output pipes through it; `TaskWriter` writes the rest of its task. Only the Linux paths use it (spawn.py's,
slot_wait.py's); elsewhere programs run on asyncio's own transports.
"""

from __future__ import annotations

import asyncio
import functools
import os
import select
import weakref
from collections.abc import Callable

from scarbook.proc.common import READ_CHUNK, Sink, fill_pipe

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


class PipeReaders:
    """A program's output pipes (read ends, owned from `watch` on): each chunk handed to its sink as the loop's
    epoll set reports it; `on_end` is called once a pipe has reached its end (it is then closed and forgotten).
    spawn.py's programs and slot_wait.py's slot runs read their output through it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_end: Callable[[], object]) -> None:
        self._fds = readers_for(loop)
        self._sinks: dict[int, Sink] = {}
        self._on_end = on_end

    def __bool__(self) -> bool:
        """Some pipe is still open."""
        return bool(self._sinks)

    def watch(self, fd: int, sink: Sink) -> None:
        os.set_blocking(fd, False)
        self._sinks[fd] = sink
        self._fds.add(fd, functools.partial(self.read, fd))

    def read(self, fd: int) -> bool:
        """One chunk of the pipe to its sink; False when it held nothing now (or was at its end)."""
        try:
            data = os.read(fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if data:
            self._sinks[fd](data)
            return True
        self.drop(fd)
        self._on_end()
        return False

    def read_all(self, most: int | None = None) -> None:
        """What every pipe holds now read (`most` chunks of each at the most: a leftover may go on writing)."""
        for fd in list(self._sinks):
            n = 0
            while fd in self._sinks and (most is None or n < most) and self.read(fd):
                n += 1

    def drop(self, fd: int) -> None:
        self._fds.remove(fd)
        del self._sinks[fd]
        os.close(fd)

    def drop_all(self) -> None:
        for fd in list(self._sinks):
            self.drop(fd)


class TaskWriter:
    """The part of a task that did not fit in a program's stdin pipe, written as the program reads (`fd`: the
    pipe's write end, non-blocking, owned from here); the pipe is closed once all is written, or the program
    stopped reading (it closed its stdin or died), or `close`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, rest: memoryview) -> None:
        self.loop, self.fd, self.rest = loop, fd, rest
        loop.add_writer(fd, self._write)

    def _write(self) -> None:
        try:
            self.rest = fill_pipe(self.fd, self.rest)
        except OSError:  # the program closed its stdin (or died) before reading all of the task
            self.rest = memoryview(b"")
        if not self.rest:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            self.loop.remove_writer(self.fd)
            os.close(self.fd)
            self.fd = -1
