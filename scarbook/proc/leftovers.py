"""Processes a run left behind: found after the run's program exits, and killed.

Killing the program's process group catches children that stayed in it. A child that called
`setsid` (a double fork, a daemon) leaves the group; on Linux scarbook becomes a child subreaper
(prctl PR_SET_CHILD_SUBREAPER), so such a process, once its parent exits, becomes a child of
scarbook instead of init. Every program scarbook starts carries a tag in its environment
(`SCARBOOK_RUN_TAG`); a child of scarbook that scarbook did not start itself and whose environment
holds a run's tag is a leftover of that run, and is killed and reaped.

Limits (the README's threat model says them): a leftover that re-executes itself with the tag
removed from its environment is not recognised, and where there is no subreaper (macOS, Windows)
a process that left the group is not found at all. The sandbox's PID namespace has neither hole.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import signal
import sys

TAG_VAR = "SCARBOOK_RUN_TAG"
PR_SET_CHILD_SUBREAPER = 36

_serial = itertools.count(1)
_subreaper: bool | None = None
leaders: set[int] = set()  # pids of the programs scarbook is running now (never leftovers)


def new_tag() -> str:
    """A tag unique to one program start; the prefix names this scarbook process."""
    return f"{os.getpid()}.{next(_serial)}"


def session_prefix() -> str:
    return f"{os.getpid()}."


def become_subreaper() -> bool:
    """Make this process the reaper of orphans it started (Linux); once per process."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform == "linux":
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                _subreaper = False
    return _subreaper


def kill_leftovers(tag_prefix: str) -> list[int]:
    """Kill (SIGKILL) and reap every child of this process whose environment holds a tag starting
    with `tag_prefix` (one run's tag, or `session_prefix()` for all of them). Returns their pids."""
    if not _subreaper:
        return []
    needle = f"\0{TAG_VAR}={tag_prefix}".encode()
    killed = []
    for pid in _children():
        if pid in leaders:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                environ = b"\0" + fh.read()
        except OSError:  # gone, or a zombie already: nothing runs
            continue
        if needle not in environ:
            continue  # a child of some library (git, a Ray worker): not ours to kill
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            continue
        killed.append(pid)
    return killed


def _children() -> list[int]:
    """This process's children, from every thread's /proc children list (an orphan is handed to
    one of the subreaper's threads)."""
    pids: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                pids.extend(int(p) for p in fh.read().split())
        except OSError:
            continue
    return pids
