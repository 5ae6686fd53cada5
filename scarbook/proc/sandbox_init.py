"""A sandboxed run ends when its sandbox's PID 1 is gone, not when the bwrap scarbook started is.

bwrap runs the program under a PID 1 of its own (in the sandbox's PID namespace) and exits as soon as
the program has — PID 1 tells it through an eventfd — while PID 1 still waits for whatever the program
left (a `setsid` daemon). That PID 1 dies when bwrap has gone (`--die-with-parent`, and the process
group kill at the exit), and only its death makes the kernel kill and reap the rest of the namespace.
So a run reported done at bwrap's exit could still have processes alive for a moment (issue 38).

`SandboxInit` asks bwrap (`--info-fd`) for its PID 1's pid, opens a pidfd on it, checks that it is that
PID 1 (its PID namespace is the one bwrap named: a pid can be reused, a namespace's processes cannot
be taken by anyone once its PID 1 died) and says when it is gone: a pidfd becomes readable only once
its process has exited, which for a PID 1 is after the kernel emptied its namespace. Nothing polls:
the info pipe and the pidfd are watched by the event loop like the program's pipes. Where there are no
pidfds (Linux before 5.3) or the PID 1 cannot be checked (its /proc/<pid>/ns/pid not readable by this
user), the run ends at bwrap's exit, as it did before.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable

GONE_WITHIN_S = 10.0  # killed already: only a kernel stuck ending a process takes longer

Watch = Callable[[int, Callable[[], None]], None]
Unwatch = Callable[[int], object]


class SandboxInit:
    def __init__(self) -> None:
        self._info_r, self._info_w = os.pipe()
        os.set_blocking(self._info_r, False)
        self._info = b""
        self._pidfd: int | None = None
        self._watching_pidfd = False
        self._add: Watch | None = None
        self._unwatch: Unwatch | None = None
        self.gone: asyncio.Future | None = None

    def argv(self, argv: list[str]) -> list[str]:
        """The bwrap line `argv` with `--info-fd` added (the fd passed to it: `pass_fds`)."""
        return [argv[0], "--info-fd", str(self._info_w), *argv[1:]]

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (self._info_w,)

    def spawned(self) -> None:
        """bwrap started (or failed to): scarbook's end of the pipe's write side goes."""
        if self._info_w >= 0:
            os.close(self._info_w)
            self._info_w = -1

    def watch(self, loop: asyncio.AbstractEventLoop, add: Watch, remove: Unwatch) -> asyncio.Future:
        """Start watching (after `spawned`); the future is done once the sandbox's PID 1 is gone (or
        never existed: bwrap failed before making it)."""
        self.gone = loop.create_future()
        self._add, self._unwatch = add, remove
        add(self._info_r, self._read_info)
        return self.gone

    def _read_info(self) -> None:
        try:
            chunk = os.read(self._info_r, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if chunk:
            self._info += chunk
            return
        self._close_info()  # bwrap closes it once written: what is there is all there is
        self._pidfd = _open_init(self._info)
        if self._pidfd is None:
            self._set_gone()
        elif self._add is not None:
            self._add(self._pidfd, self._on_gone)
            self._watching_pidfd = True

    def _on_gone(self) -> None:
        if self._pidfd is not None and self._unwatch is not None:
            self._unwatch(self._pidfd)  # kept open until `close`, which reaps it if it is scarbook's
        self._watching_pidfd = False
        self._set_gone()

    def _set_gone(self) -> None:
        if self.gone is not None and not self.gone.done():
            self.gone.set_result(None)

    def _close_info(self) -> None:
        if self._info_r >= 0:
            if self._unwatch is not None:
                self._unwatch(self._info_r)
            os.close(self._info_r)
            self._info_r = -1

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            if self._unwatch is not None and self._watching_pidfd:
                self._unwatch(self._pidfd)
            _reap_if_ours(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    async def ended(self) -> None:
        """Once bwrap is reaped: wait for PID 1 (killed with bwrap's process group by now) to be gone, then
        stop watching (`close`)."""
        if self.gone is not None and not self.gone.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.gone), GONE_WITHIN_S)
            except TimeoutError:
                pass
        self.close()

    def close(self) -> None:
        """Stop watching, and reap PID 1 if it was handed to scarbook (bwrap is reaped by now: whatever
        bwrap left has been handed on)."""
        self.spawned()
        self._close_info()
        self._close_pidfd()
        self._set_gone()


def _open_init(info: bytes) -> int | None:
    """A pidfd of the sandbox's PID 1 that bwrap's `info` names, or None when it is already gone."""
    try:
        named = json.loads(info)
        pid, pid_ns = int(named["child-pid"]), int(named["pid-namespace"])
    except (ValueError, KeyError, TypeError):
        return None  # bwrap stopped before making the sandbox (its error is on its stderr)
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return None  # exited and reaped: its namespace was emptied before
    try:  # the pid may have been reused since; then our PID 1 had died (and the namespace with it)
        same = os.stat(f"/proc/{pid}/ns/pid").st_ino == pid_ns
    except OSError:
        same = False
    if not same:
        os.close(pidfd)
        return None
    return pidfd


def _reap_if_ours(pidfd: int) -> None:
    """bwrap exits without reaping its PID 1 (which may die before or after it), so the kernel hands it to
    the nearest subreaper: scarbook while unconfined programs run (reaper.py), or when scarbook is a
    container's PID 1. Reaped here, through its pidfd (never another process), if it has exited and is
    scarbook's; anyone else's child is left to its parent."""
    try:
        os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)
    except (ChildProcessError, OSError):
        pass
