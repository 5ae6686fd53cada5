"""What a session's ending means as an exit code (its marks in listings: library_rows.session_marks).

The one place the error policy turns into a number (the CLI's exit code, the TUI's "exit code"
line, the JSON report's `exit_code`):

    0  no case decided below its threshold, in a session that finished with every run judged
       (an undecided case is warned about, not failed, unless the gate says `undecided: fail`)
    1  some case decided below its threshold (or regressed against `--against`'s baseline), in a
       session that finished with every run judged
    2  usage or configuration error (raised before a session starts; never computed here)
    3  no verdict: the session was cancelled, stopped by --max-cost, aborted, crashed or
       interrupted; or it was partial (judge checks skipped, so some runs are unjudged); or
       errors left a case without a verdict (fewer judged runs than the gate's min_verdicts);
       or some run's infra retries ran out (its last attempt was still the machine's fault:
       scarbook.run.causes); or a case is undecided and the gate says `undecided: fail`

A session that did not finish, or did not judge everything, exits 3 even when a case is below
its threshold: it saw part of the evidence, and "1" would read as a complete verdict. What
"decided below" means is the gate's (scarbook.stats.decisions): in evidence mode, the runs show
the case is below (family-wise false red at most alpha); in point mode, rate < threshold.
"""

from __future__ import annotations

from collections.abc import Iterable

from scarbook.models import SessionInfo, SessionState
from scarbook.models.words import Decision, Undecided
from scarbook.stats.rates import CaseStats

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_NO_VERDICT = 0, 1, 2, 3


def exit_code(session: SessionInfo, stats: Iterable[CaseStats], *, regressed: bool = False,
              infra_unresolved: int = 0, undecided: str = "pass") -> int:
    """`undecided`: the gate's policy for undecided cases ("fail" makes them exit 3)."""
    stats = list(stats)
    if session.state != SessionState.FINISHED or session.partial or any(s.unjudged for s in stats):
        return EXIT_NO_VERDICT
    if infra_unresolved:  # the machine, not the agent, decided those runs: "1" would blame the agent
        return EXIT_NO_VERDICT
    if regressed or any(s.gate == Decision.BELOW for s in stats):
        return EXIT_BELOW
    if any(s.gate == Decision.NO_VERDICT for s in stats):
        return EXIT_NO_VERDICT
    if undecided == Undecided.FAIL and any(s.gate == Decision.UNDECIDED for s in stats):
        return EXIT_NO_VERDICT
    return EXIT_OK
