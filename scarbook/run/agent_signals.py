"""Who sent the signal an agent died of: its own code, the machine, a shutdown of scarbook, or the agent itself.

    if held(facts.signal, facts.timed_out):      # a signal from outside that scarbook did not send
        facts.watched_s = await hold(cancelled)  # CancelledError when scarbook's own shutdown began meanwhile

A program's own code raises FAULT_SIGNALS (a crash: the agent's fail). Every other signal comes from outside its
code — or from the agent itself: one `kill -TERM $$` would turn a run it was failing into the machine's (infra:
retried, then an error, out of the rate's denominator). SIGKILL is told apart by the kernel's count of OOM kills
(proc/oom.py). For the others (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, SIGPIPE, SIGXCPU, ...) the one
sender that is not the agent's doing and that scarbook can see is its own shutdown: a supervisor stopping it
(systemd stopping the unit's cgroup, a CI runner cancelling the job) signals every process at once, and the agent
can die of it a moment before scarbook's handler runs. So such a run is held SHUTDOWN_GRACE_S before it is
attributed — its task waits; the event loop and the other runs go on — and when scarbook's shutdown begins
meanwhile (SIGTERM, SIGINT or SIGHUP to scarbook, Ctrl-C, the TUI's cancel) the run is cut as every run the
shutdown stops: not recorded, and `scarbook resume` runs it again. Otherwise nobody is known to have sent the
signal and run/causes.py calls the run the agent's (agent-killed).

Where scarbook cannot watch, today's rule stands (killed-by-signal, infra): a run on a Ray worker, whose node's
shutdown is not this scarbook's to see (its executor's `agents_here` is False), and Windows, where a program's end
never names a signal (TerminateProcess sets an exit code: nothing is held, the exit code is read as it always was).
"""

from __future__ import annotations

import asyncio
import signal as signals
from collections.abc import Callable

# Signals a program's own execution raises — a bad memory access, abort() (a failed assertion), an illegal
# instruction or operation, a forbidden system call: the agent crashed, which is the agent's failure, never
# the machine's (nor a way for an agent to take a run it failed out of its rate: os.abort() is one call).
FAULT_SIGNALS = frozenset(getattr(signals, name) for name in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT",
                                                              "SIGSYS", "SIGTRAP") if hasattr(signals, name))
SIGKILL = getattr(signals, "SIGKILL", 9)  # Windows has no SIGKILL to name
# How long a run whose agent died of a signal nobody is known to have sent waits for scarbook's own shutdown. A
# supervisor's signal reaches scarbook as it reaches the agent: its handler runs within a few turns of the event
# loop, which the reap of the agent and the reads after it take anyway; two seconds leave room for a loaded machine.
SHUTDOWN_GRACE_S = 2.0


def signal_name(n: int) -> str:
    try:
        return signals.Signals(n).name
    except ValueError:
        return "unknown signal"


def held(signal: int | None, timed_out: bool) -> bool:
    """The agent died of a signal from outside its code that is not SIGKILL (proc/oom.py tells that one) nor
    scarbook's timeout: whether scarbook's shutdown sent it is told by holding the run (`hold`)."""
    return signal is not None and not timed_out and signal != SIGKILL and signal not in FAULT_SIGNALS


async def hold(cancelled: Callable[[], bool], grace_s: float = SHUTDOWN_GRACE_S) -> float:
    """Wait `grace_s` for scarbook's own shutdown; the seconds watched. A shutdown that begins meanwhile cancels the
    run's task as it cancels every running run (the wait is where it lands); one whose handler ran only as the wait
    ended (a loop busy past the window) is found by `cancelled` and cuts the run the same way."""
    await asyncio.sleep(grace_s)
    if cancelled():
        raise asyncio.CancelledError
    return grace_s
