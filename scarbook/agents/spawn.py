"""Run one program to completion with the event loop watching its pipes and its exit.

asyncio's subprocess layer (transports, protocols, stream readers, a child watcher) cost about as
much per run as spawning the program itself. Here raw pipe fds are watched (through one epoll set
per loop, see fdwatch.py), so a run costs a spawn, a few reads and one waitpid. A task that fits in
the pipe is written before the spawn (no writer to watch). The exit is looked at once the program's pipes close (they close as it
exits), and watched through a Linux pidfd only when it is still running then, or must be killed.
Where pidfds are missing (not Linux, or a kernel older than 5.3) the exit is awaited in a thread.

The program gets its own process group, so a timeout or a cancel kills its children too.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Callable

from scarbook.agents.fdwatch import readers_for

KILL_GRACE_S = 2.0
READ_CHUNK = 1 << 16

Sink = Callable[[bytes], None]


@dataclass
class Finished:
    returncode: int | None
    timed_out: bool = False


async def run_program(argv: list[str], *, cwd, env: dict[str, str] | None, stdin_data: bytes | None,
                      on_stdout: Sink, on_stderr: Sink | None, timeout_s: float) -> Finished:
    """Start `argv`, feed it `stdin_data` (None: /dev/null), hand every chunk it prints to the sinks
    (on_stderr None: stderr joins stdout) and return once it has exited and closed its pipes.
    After `timeout_s` the whole process group is terminated, then killed. Cancelling kills it too.
    OSError from the spawn itself (program not found, cwd gone) propagates."""
    loop = asyncio.get_running_loop()
    watch = _Watch(loop, argv, cwd, env, stdin_data, on_stdout, on_stderr)
    timer = loop.call_later(timeout_s, watch.expire)
    try:
        await watch.done
    except asyncio.CancelledError:
        timer.cancel()
        try:
            await watch.kill_group()
        finally:
            watch.close()
        raise
    timer.cancel()
    if watch.timed_out:
        try:
            await watch.kill_group()
        finally:
            watch.close()
        return Finished(watch.proc.returncode, timed_out=True)
    return Finished(watch.proc.returncode)


class _Watch:
    def __init__(self, loop: asyncio.AbstractEventLoop, argv, cwd, env, stdin_data: bytes | None,
                 on_stdout: Sink, on_stderr: Sink | None) -> None:
        self.loop = loop
        self._fds = readers_for(loop)
        self.timed_out = False
        self.done: asyncio.Future = loop.create_future()
        self.exited: asyncio.Future = loop.create_future()
        self._readers: dict[int, Sink] = {}
        self._stdin: tuple[int, memoryview] | None = None
        self._writing = False
        self._pidfd: int | None = None
        self._watching = False  # the exit is watched (pidfd or thread)
        child_ends: list[int] = []
        mine: list[int] = []
        try:
            out_r, out_w = os.pipe()
            mine.append(out_r), child_ends.append(out_w)
            err_w = out_w
            if on_stderr is not None:
                err_r, err_w = os.pipe()
                mine.append(err_r), child_ends.append(err_w)
            in_fd: int = _devnull()
            rest = memoryview(b"")
            if stdin_data is not None:
                in_fd, in_w = os.pipe()
                mine.append(in_w), child_ends.append(in_fd)
                os.set_blocking(in_w, False)
                rest = _fill(in_w, memoryview(stdin_data))
                if not rest:  # all of it is in the pipe: the program reads it, then end of file
                    mine.remove(in_w)
                    os.close(in_w)
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=in_fd, stdout=out_w, stderr=err_w,
                                         start_new_session=True)
        except BaseException:
            for fd in mine:
                os.close(fd)
            raise
        finally:
            for fd in child_ends:
                os.close(fd)
        self._watch_reader(out_r, on_stdout)
        if on_stderr is not None:
            self._watch_reader(err_r, on_stderr)
        if rest:  # a task larger than the pipe: the rest goes as the program reads
            self._stdin = (in_w, rest)
            self._write_stdin()

    # pipes ------------------------------------------------------------------------------------
    def _watch_reader(self, fd: int, sink: Sink) -> None:
        os.set_blocking(fd, False)
        self._readers[fd] = sink
        self._fds.add(fd, functools.partial(self._read, fd))

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            self._readers[fd](data)
            return
        self._drop_reader(fd)
        self._maybe_done()

    def _drop_reader(self, fd: int) -> None:
        self._fds.remove(fd)
        del self._readers[fd]
        os.close(fd)

    def _write_stdin(self) -> None:
        fd, rest = self._stdin
        try:
            rest = _fill(fd, rest)
        except OSError:  # the program closed its stdin (or died) before reading all of the task
            rest = memoryview(b"")
        if rest:  # the pipe is full: go on when the program has read some
            self._stdin = (fd, rest)
            if not self._writing:
                self._writing = True
                self.loop.add_writer(fd, self._write_stdin)
            return
        self._close_stdin()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            if self._writing:
                self.loop.remove_writer(self._stdin[0])
                self._writing = False
            os.close(self._stdin[0])
            self._stdin = None

    # exit -------------------------------------------------------------------------------------
    def _watch_exit(self) -> None:
        if self._watching or self.exited.done():  # (a reaped pid may already name another process)
            return
        self._watching = True
        try:
            self._pidfd = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):  # no pidfds here: wait in a thread
            fut = self.loop.run_in_executor(None, self.proc.wait)
            fut.add_done_callback(lambda _f: self._exited())
            return
        self._fds.add(self._pidfd, self._reap)

    def _reap(self) -> None:
        self._close_pidfd()
        self.proc.wait()
        self._exited()

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            self._fds.remove(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def _exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(self.proc.returncode)
        self._maybe_done()

    def _maybe_done(self) -> None:
        if self._readers or self.done.done():
            return
        if not self.exited.done():
            if self.proc.poll() is None:  # it closed its pipes but runs on: watch for the exit
                self._watch_exit()
                return
            self.exited.set_result(self.proc.returncode)
        self.done.set_result(None)

    # ending early -----------------------------------------------------------------------------
    def expire(self) -> None:
        if not self.done.done():
            self.timed_out = True
            self.done.set_result(None)

    async def kill_group(self) -> None:
        """SIGTERM the whole group, then SIGKILL what is left after a short grace."""
        self._watch_exit()
        for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                await asyncio.wait_for(asyncio.shield(self.exited), wait)
            except asyncio.TimeoutError:
                continue
            try:  # the leader is gone; make sure no child of the group outlives it
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            break

    def close(self) -> None:
        """Stop watching: close every pipe still open (a grandchild may hold one for ever)."""
        for fd in list(self._readers):
            self._drop_reader(fd)
        self._close_stdin()
        if self.exited.done():
            self._close_pidfd()


def _fill(fd: int, data: memoryview) -> memoryview:
    """Write what fits into a non-blocking pipe; returns what did not fit."""
    try:
        while data:
            data = data[os.write(fd, data):]
    except BlockingIOError:
        pass
    return data


_devnull_fd: int | None = None


def _devnull() -> int:
    """One /dev/null fd for the whole process: opening it for every run was a visible cost."""
    global _devnull_fd
    if _devnull_fd is None:
        _devnull_fd = os.open(os.devnull, os.O_RDWR)
        os.set_inheritable(_devnull_fd, False)
    return _devnull_fd
