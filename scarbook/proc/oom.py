"""The kernel's count of OOM kills (/proc/vmstat's `oom_kill`, Linux 4.13 and later; a memory cgroup's kills
count there too): the evidence that a SIGKILL an agent died of was the OOM killer's.

Anything can send SIGKILL, the agent too — to itself, to turn a run it was failing into the machine's (an infra
error: retried, then out of the rate's denominator). So run/causes.py calls a SIGKILL the machine's only when this
count moved while the agent ran (any process's OOM kill on the machine, a concurrent run's too: the benefit of the
doubt goes to the agent: infra, retried, yet on the agent's own word — an agent can move the count itself, with a
child in a small memory cgroup of its own: run/causes.py AGENT_CAN_CAUSE), and the agent's own when it did not. Where it cannot be read (macOS, Windows, an older
kernel, a /proc that hides it) the count is None and a SIGKILL stays the machine's, as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable

VMSTAT = "/proc/vmstat"
# A run's "before" count may be this old: /proc/vmstat sums every counter of every CPU to answer (0.05-0.2 ms, a
# few % of a trivial run), and an OOM kill between the count and the agent's start only gives the agent the
# benefit of the doubt (the count moved: the machine's), as a concurrent run's kill does.
BEFORE_MAX_AGE_S = 1.0
_last: tuple[float, int | None] = (float("-inf"), None)


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


def recent_oom_kills(clock: Callable[[], float] = time.monotonic) -> int | None:
    """oom_kills() as of at most BEFORE_MAX_AGE_S ago: read once a second however many runs start (runs on
    several threads at once may each read it: harmless)."""
    global _last
    at, count = _last
    now = clock()
    if now - at > BEFORE_MAX_AGE_S:
        count = oom_kills()
        _last = (now, count)
    return count


def moved(before: int | None, after: int | None) -> int | None:
    """How many OOM kills happened between two counts; None when either was unknown."""
    return None if before is None or after is None else after - before
