"""What both ways of running a program share: the result, the output sink, the grace periods, the
shell, and the environment every program scarbook starts gets."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

KILL_GRACE_S = 2.0
LEFTOVER_GRACE_S = 0.3
READ_CHUNK = 1 << 16

# Passed to every agent and command check whatever its allow-list says (plus SCARBOOK_*).
BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SYSTEMROOT", "PYTHONPATH")

Sink = Callable[[bytes], None]


@dataclass
class Finished:
    returncode: int | None
    timed_out: bool = False


def shell_argv(command: str) -> list[str]:
    """`command` run by the platform's shell: /bin/sh, or cmd.exe on Windows."""
    if os.name == "nt":
        return [os.environ.get("COMSPEC", "cmd.exe"), "/d", "/c", command]
    return ["/bin/sh", "-c", command]


def fill_pipe(fd: int, data: memoryview) -> memoryview:
    """Write what fits into a non-blocking pipe; returns what did not fit."""
    try:
        while data:
            data = data[os.write(fd, data):]
    except BlockingIOError:
        pass
    return data


_devnull: int | None = None


def devnull_fd() -> int:
    """One /dev/null fd for the whole process: opening it for every run was a visible cost."""
    global _devnull
    if _devnull is None:
        _devnull = os.open(os.devnull, os.O_RDWR)
        os.set_inheritable(_devnull, False)
    return _devnull
