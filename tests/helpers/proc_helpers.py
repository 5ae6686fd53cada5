"""Shared by the process tests: whether a pid still runs, and the code of a hostile agent's daemon
(double fork + setsid, stdio on /dev/null) that tries to outlive its run."""

from __future__ import annotations

import os
from pathlib import Path


def alive(pid: int) -> bool:
    """Running: the process exists and is not a zombie (a zombie has stopped; its parent reaps it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


# Python source: start a daemon that sleeps two minutes; it calls note(pid) (defined by the agent)
# with its own pid first. Leaves the agent's process group and session, holds none of its pipes.
DAEMON = """
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        fd = os.open(os.devnull, os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(fd, i)
        note(os.getpid())
        time.sleep(120)
        os._exit(0)
    os._exit(0)
os.wait()
"""


def tagged(prefix: str) -> list[int]:
    """The pids of processes whose run tag starts with `prefix` (any user's readable environment)."""
    needle = f"\0SCARBOOK_RUN_TAG={prefix}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if needle in b"\0" + fh.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def oom_killer_kills_meanwhile(monkeypatch) -> None:
    """Every read of the kernel's count of OOM kills (proc/oom.py) is one more than the last: a SIGKILL an agent
    dies of reads as the OOM killer's (an in-process session only). A test cannot make the real OOM killer act."""
    import itertools

    from scarbook.run import session_run
    count = itertools.count(1000)
    monkeypatch.setattr(session_run, "oom_kills", lambda: next(count))
    monkeypatch.setattr(session_run, "recent_oom_kills", lambda: next(count))
