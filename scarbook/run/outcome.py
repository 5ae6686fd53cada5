"""What a session's ending means as an exit code (its marks in listings: library_rows.session_marks).

The one place the error policy turns into a number (the CLI's exit code, the TUI's "exit code"
line, the JSON report's `exit_code`):

    0  no case decided below its threshold, in a session that finished with every run judged
       (an undecided case is warned about, not failed, unless the gate says `undecided: fail`)
    1  some case decided below its threshold (or regressed against `--against`'s baseline), in a
       session that finished with every run judged
    2  usage or configuration error (raised before a session starts; never computed here)
    A session of several agents (`eval --agents`) gates on its comparison instead: 1 when a candidate is
    shown worse than the baseline by more than gate.compare's margin, on a case or the suite; 3 when a
    case has no verdict on a side (or is undecided under `undecided: fail`), as below; else 0.
    3  no verdict: the session was cancelled, stopped by --max-cost, aborted, crashed or
       interrupted; or it was partial (judge checks skipped, so some runs are unjudged); or
       errors left a case without a verdict (fewer judged runs than the gate's min_verdicts);
       or some run's infra retries ran out (its last attempt was still the machine's fault:
       scarbook.run.causes); or some run's error is the agent's own doing (a replay it diverged from: the run
       did not replay what was recorded, and an agent that diverged where it would fail would leave only its
       passes in the rate); or a case is undecided and the gate says `undecided: fail`

A session that did not finish, or did not judge everything, exits 3 even when a case is below
its threshold: it saw part of the evidence, and "1" would read as a complete verdict. What
"decided below" means is the gate's (scarbook.stats.decisions): in evidence mode, the runs show
the case is below (family-wise false red at most alpha); in point mode, rate < threshold.
"""

from __future__ import annotations

from collections.abc import Iterable

from scarbook.models import MarginCall, SessionInfo, SessionState
from scarbook.models.words import Decision, Undecided
from scarbook.stats.head_to_head import AgentsComparison
from scarbook.stats.rates import CaseStats

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_NO_VERDICT = 0, 1, 2, 3


def exit_code(session: SessionInfo, stats: Iterable[CaseStats], *, regressed: bool = False,
              infra_unresolved: int = 0, agent_errors: int = 0, undecided: str = "pass",
              comparison: AgentsComparison | None = None) -> int:
    """`undecided`: the gate's policy for undecided cases ("fail" makes them exit 3). `comparison`: a session
    of several agents gates on it (every agent's `stats` still say whether all runs were judged)."""
    stats = list(stats)
    if session.state != SessionState.FINISHED or session.partial or any(s.unjudged for s in stats):
        return EXIT_NO_VERDICT
    if infra_unresolved:  # the machine, not the agent, decided those runs: "1" would blame the agent
        return EXIT_NO_VERDICT
    if agent_errors:  # out of the rate by the agent's doing: the rest are the runs it chose to leave in
        return EXIT_NO_VERDICT
    if comparison is not None:
        return compare_exit_code(comparison, undecided)
    if regressed or any(s.gate == Decision.BELOW for s in stats):
        return EXIT_BELOW
    if any(s.gate == Decision.NO_VERDICT for s in stats):
        return EXIT_NO_VERDICT
    if undecided == Undecided.FAIL and any(s.gate == Decision.UNDECIDED for s in stats):
        return EXIT_NO_VERDICT
    return EXIT_OK


def compare_exit_code(comparison: AgentsComparison, undecided: str = "pass") -> int:
    """A session of several agents (gate.compare, non-inferiority): 1 when a candidate is shown worse than
    the baseline by more than the margin on a case or on the suite; 3 when a case has no verdict (too few
    judged runs on a side, or decided otherwise with an agent's runs read at their worst), or the suite, or one is
    undecided under `undecided: fail`; else 0."""
    rows = [*comparison.rows, *comparison.suites]
    if comparison.inferior:
        return EXIT_BELOW
    if any(r.margin_call == MarginCall.NO_VERDICT for r in rows):  # (a suite row's: read at the worst, run/versus.py)
        return EXIT_NO_VERDICT
    if undecided == Undecided.FAIL and any(r.margin_call == MarginCall.UNDECIDED for r in rows):
        return EXIT_NO_VERDICT
    return EXIT_OK
