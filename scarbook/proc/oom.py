"""The kernel's count of OOM kills (/proc/vmstat's `oom_kill`, Linux 4.13 and later; a memory cgroup's kills
count there too): the evidence that a SIGKILL an agent died of was the OOM killer's.

Anything can send SIGKILL, the agent too — to itself, to turn a run it was failing into the machine's (an infra
error: retried, then out of the rate's denominator). So run/causes.py calls a SIGKILL the machine's only when this
count moved while the agent ran (any process's OOM kill on the machine, a concurrent run's too: the benefit of the
doubt goes to the agent), and the agent's own when it did not. Where it cannot be read (macOS, Windows, an older
kernel, a /proc that hides it) the count is None and a SIGKILL stays the machine's, as before.
"""

from __future__ import annotations

VMSTAT = "/proc/vmstat"


def oom_kills() -> int | None:
    """The machine's OOM kills since boot; None where the kernel does not say."""
    try:
        with open(VMSTAT, "rb") as f:
            data = f.read()
    except OSError:
        return None
    for line in data.splitlines():
        if line.startswith(b"oom_kill "):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def moved(before: int | None, after: int | None) -> int | None:
    """How many OOM kills happened between two counts; None when either was unknown."""
    return None if before is None or after is None else after - before
