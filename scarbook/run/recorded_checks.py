"""A recorded run's trajectory checks (and the checks that read a tool call's input), read from what the
recorder itself saw.

The agent can write its own $SCARBOOK_TRANSCRIPT and $SCARBOOK_USAGE (the recorder appends to the
first), so it could rewrite or truncate them after its calls, or report one token for thirty
thousand. When the session records, the worker part leaves every trajectory check waiting
(session_run.AWAITING_RECORDER); here, on the driver once the run's door is shut, they are checked
against the recorder's own list of the run's calls (RunSummary.timeline: the records it wrote, kept
in memory) and the usage it measured, in the case's order with the rest of the rule checks: a
trajectory check that fails stops every check after it, as if it had run in its place. So are the checks
whose artifact is a tool call's input (`artifact: {tool, field}`), the judge's among them: the agent could
rewrite the call it made in its own transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scarbook.checks import CheckContext, run_check
from scarbook.checks.spec import reads_transcript
from scarbook.judge.inputs import read_check_artifact
from scarbook.models import Case, CheckResult, CheckStatus, Usage
from scarbook.record import RunSummary
from scarbook.run.events import CheckDone, Event
from scarbook.run.session_run import AgentPart, not_run
from scarbook.transcripts.model import Transcript
from scarbook.transcripts.scarbook_native import FORMAT, from_records


def recorded_transcript(summary: RunSummary) -> Transcript:
    """The run as the recorder saw it: its calls' tool calls, texts and measured usage."""
    return from_records(summary.timeline, Transcript(format=FORMAT))


async def check_recorded(part: AgentPart, case: Case, summary: RunSummary,
                         price: Callable[[str, Usage], float] | None, emit: Callable[[Event], None]) -> None:
    """Run the checks the worker left for the recorder; then stop what came after a failure. A judge that grades
    a tool call's input gets it from the recorder's calls too."""
    calls_read = [inp for inp in part.judge_inputs if reads_transcript(inp.check)]
    if not part.recorded_checks and not calls_read:
        return
    record = part.record
    ctx = CheckContext(case=case, workspace=Path(record.workspace), output="", transcript=recorded_transcript(summary),
                       price=price, measured=True, unmeasured=tuple(summary.unmeasured))
    for inp in calls_read:
        inp.artifact = read_check_artifact(inp.check, ctx, inp.max_bytes)
    changed: set[int] = set()
    for i in part.recorded_checks:
        record.checks[i] = await run_check(case.checks[i], ctx, i)
        changed.add(i)
    rules = [r for r, c in zip(record.checks, case.checks, strict=True) if not c.is_judge]
    stopped = next((r for r in rules if r.status in (CheckStatus.FAIL, CheckStatus.ERROR)), None)
    if stopped is not None:  # every check after it is not run, as in the worker's short-circuit
        for j, check in enumerate(case.checks):
            if (check.is_judge or j > stopped.index) and j != stopped.index and not _said_not_run(record.checks[j]):
                record.checks[j] = not_run(check, j, stopped)
                changed.add(j)
        part.judge_inputs = []
    for j in sorted(changed):
        emit(CheckDone(record.session_id, record.case_id, record.k, record.checks[j]))


def _said_not_run(result: CheckResult) -> bool:
    return result.status == CheckStatus.SKIPPED and result.detail.startswith("not run")

