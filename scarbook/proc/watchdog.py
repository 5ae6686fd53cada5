"""One watchdog process per scarbook process: it kills the agents' process groups when scarbook dies.

Started once, on the first agent, in a session of its own (a Ctrl-C to the terminal does not reach
it). scarbook writes `+PGID` to its stdin when an agent starts (each agent leads its own process
group) and `-PGID` when the run is over. When that pipe reaches end of file — scarbook exited or was
killed (SIGKILL, OOM: the kernel closes its end) — the watchdog SIGKILLs every group still listed and
exits. One pipe write a start, against an extra exec (setpriv, 1-1.8 ms) or a preexec_fn (which makes
Python fork the whole process: 17-20 ms) for PR_SET_PDEATHSIG.

A run that ended is taken off the list before its pgid can be reused. The window between the start
and the `+PGID` write is left to `leftovers.kill_stale`, the next session's sweep.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

WATCHDOG = """
import os, signal, sys
live = set()
for line in sys.stdin.buffer:
    op, pg = line[:1], line[1:].strip()
    if pg.isdigit():
        (live.add if op == b"+" else live.discard)(int(pg))
for pg in live:
    try:
        os.killpg(pg, signal.SIGKILL)
    except OSError:
        pass
"""

_pipe: int | None = None
_keep: subprocess.Popen | None = None  # dropping it (or its stdin) would close the fd
_owner: int | None = None  # the pid that started it (a forked child starts its own)
_lock = threading.Lock()  # two threads starting two watchdogs would drop one's pipe: its groups killed


def available() -> bool:
    """The way agents die with scarbook here: Linux (macOS would do too; only Linux is tested), not
    turned off by SCARBOOK_PDEATHSIG, and the watchdog running (started now if need be). False when it
    cannot start, so the caller falls back to PR_SET_PDEATHSIG rather than to nothing."""
    if sys.platform != "linux" or os.environ.get("SCARBOOK_PDEATHSIG", "watchdog") != "watchdog":
        return False
    return _ensure() is not None


def _ensure() -> int | None:
    with _lock:
        return _start()


def _start() -> int | None:
    global _pipe, _owner, _keep
    if _pipe is not None and _owner == os.getpid():
        return _pipe
    try:
        # an empty environment: an agent that reads /proc/<pid>/environ finds no key in it (issue 33.21)
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHDOG], stdin=subprocess.PIPE, env={},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None
    assert proc.stdin is not None
    # the fd lives as long as this process: its closing (by exit, or by the kernel) is what tells the watchdog
    _pipe, _owner, _keep = proc.stdin.fileno(), os.getpid(), proc
    return _pipe


def _say(line: str) -> bool:
    fd = _ensure()
    if fd is None:
        return False
    try:
        os.write(fd, line.encode())
        return True
    except OSError:  # the watchdog is gone: start another next time
        global _pipe
        _pipe = None
        return False


def pid() -> int | None:
    """The watchdog's pid (a child of this scarbook, never a run's leftover), if one runs."""
    return _keep.pid if _keep is not None and _owner == os.getpid() else None


def watch(pgid: int) -> bool:
    """Kill group `pgid` if scarbook dies before `unwatch(pgid)`. False: no watchdog could be had."""
    return _say(f"+{pgid}\n")


def unwatch(pgid: int) -> None:
    if _pipe is not None and _owner == os.getpid():
        _say(f"-{pgid}\n")
