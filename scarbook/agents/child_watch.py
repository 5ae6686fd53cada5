"""Wait for agent processes without a thread per process (Python 3.11 only).

Python 3.11's default asyncio child watcher (ThreadedChildWatcher) starts one thread per subprocess
to block in waitpid(); for short agent runs that thread was a measurable share of the harness's own
cost per run. Linux pidfds let the event loop itself watch the child. Python 3.12+ already picks a
pidfd watcher by itself, so this does nothing there. The watcher below is the 3.12 one: it registers
each child on the loop that spawned it, so loops in other threads (a TUI worker, tests) stay correct.
"""

from __future__ import annotations

import asyncio
import os
import sys
from asyncio import events

_installed = False


class LoopPidfdChildWatcher(asyncio.AbstractChildWatcher):
    def __enter__(self) -> "LoopPidfdChildWatcher":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def is_active(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def attach_loop(self, loop) -> None:
        pass

    def add_child_handler(self, pid, callback, *args) -> None:
        loop = events.get_running_loop()
        pidfd = os.pidfd_open(pid)
        loop._add_reader(pidfd, self._do_wait, pid, pidfd, callback, args)

    def _do_wait(self, pid, pidfd, callback, args) -> None:
        loop = events.get_running_loop()
        loop._remove_reader(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
            returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            returncode = 255  # already reaped elsewhere, as asyncio's own watchers report it
        os.close(pidfd)
        callback(pid, returncode, *args)

    def remove_child_handler(self, pid) -> bool:
        return True


def use_pidfd_child_watcher() -> None:
    """Swap 3.11's thread-per-child watcher for the pidfd one, once, if the kernel supports it."""
    global _installed
    if _installed or sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return
    _installed = True
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # kernel older than 5.3, or pidfds blocked: keep the default
        return
    if type(asyncio.get_child_watcher()) is asyncio.ThreadedChildWatcher:  # never replace a custom one
        asyncio.set_child_watcher(LoopPidfdChildWatcher())
