"""Test the test: would this case have caught the incident it was born from?

The scar's failed artifact is put into a fresh seeded workspace (a file artifact at its path, an
output artifact as the final output, a tool call's input as the input of the last call to that tool) and the case's checks run on it without the agent: they must
FAIL. Its trajectory checks read the scar's transcript, what the agent did in the incident. A good artifact, when the scar has one, must PASS. A case whose checks pass the failed artifact
*misses its scar* — the vague-rubric trap.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from scarbook.cases.io import case_digest
from scarbook.cases.placeholders import is_placeholder_item, write_it_hint
from scarbook.cases.verifications import (
    CATCHES,
    ERROR,
    JUDGE_UNSTABLE,
    MISSES,
    REJECTS_GOOD,
    UNVERIFIED,
    ItemCertification,
    Verification,
)
from scarbook.checks import CheckContext, run_check, short_circuit
from scarbook.checks.spec import MAX_READ, reads_transcript
from scarbook.checks.verdict import verdict_of
from scarbook.fs import safefs
from scarbook.history.store import now_iso
from scarbook.judge.grader import Grader
from scarbook.models import Case, CauseKind, CheckResult, CheckStatus, RunStatus, SessionState, Vote
from scarbook.run.events import SessionFinished
from scarbook.run.session import ReadySession
from scarbook.run.workspace import diff_workspace, prepare_workspace
from scarbook.tools.item_certify import certify_items
from scarbook.transcripts.model import ToolCall, Transcript
from scarbook.transcripts.run_file import TranscriptUnreadable, read_run_transcript
from scarbook.transcripts.tool_input import ToolInput, tool_input_of

MAX_ARTIFACT = 50_000_000  # bytes of a scar artifact verify reads at least (more when max_read_bytes says so)
PATH_CHECKS = ("file_exists", "contains", "not_contains", "regex", "line_count", "json_valid")




def artifact_target(case: Case) -> str | dict[str, str]:
    """Where the artifact goes: scar.artifact_at, else the judged path or tool call input, else the first file
    (or tool call input) a check reads."""
    if case.scar and case.scar.artifact_at:
        return case.scar.artifact_at
    for check in case.checks:
        if check.is_judge and check.params.get("artifact", "output") != "output":
            return check.params["artifact"]
    for check in case.checks:
        if check.type in PATH_CHECKS:
            return check.params["path"] if "path" in check.params else check.params["artifact"]
    return "output"


def off_target(case: Case) -> str:
    """Why a case misses its scar when a check reads a tool call's input other than the one the scar's artifact is put
    as: that check had nothing of the incident to read. "" when every check reads the scar's artifact."""
    target = artifact_target(case)
    scar_ref = tool_input_of(target)
    for i, check in enumerate(case.checks):
        ref = tool_input_of(check.params.get("artifact"))
        if ref is None or ref == scar_ref:
            continue
        where = "scar.artifact_at" if case.scar and case.scar.artifact_at else "where verify puts it"
        scar_is = scar_ref.label if scar_ref is not None else \
            "the final output" if target == "output" else f"the file {target}"
        fix = f"scar.artifact_at at {_written(ref)}"
        if scar_ref is not None:
            fix = f"the check's artifact at {_written(scar_ref)}, or {fix}"
        return (f"check {i + 1} ({check.type}) reads {ref.label}, but the scar's artifact is {scar_is} ({where}): "
                f"the check never saw the incident, so the case would not have caught it — point {fix}")
    return ""


def _written(ref: ToolInput) -> str:
    """How case.yaml writes a tool call's input."""
    return f"{{tool: {ref.tool}, field: {ref.field}}}"


def _as_last_call(ref: ToolInput, text: str) -> Transcript:
    """The scar's artifact as the input of the last call to its tool: what `artifact: {tool, field}` reads."""
    return Transcript("scarbook", entries=[ToolCall("scar", ref.tool, {ref.field: text})])


async def check_artifact(case: Case, artifact: str, judge: Grader | None = None, *, incident: bool = False,
                         max_read: int = MAX_READ) -> tuple[RunStatus, str, list[CheckResult]]:
    """Run the case's checks on the case file `artifact` placed where it belongs. With `incident` (the
    failed artifact), the trajectory checks read the scar's transcript (what the agent did then); else
    they are skipped: a good artifact comes with no run. Returns (status, reason, every check's result)."""
    assert case.root is not None  # a case loaded from its folder (verify_case checks)
    target = artifact_target(case)
    transcript = None
    if incident and case.scar and case.scar.transcript and any(reads_transcript(c) for c in case.checks):
        try:
            transcript = read_run_transcript(case.root / case.scar.transcript, MAX_ARTIFACT)
        except TranscriptUnreadable as exc:
            return RunStatus.ERROR, f"the trajectory checks cannot read scar.transcript {case.scar.transcript}: {exc}", []
    cap = max(MAX_ARTIFACT, max_read)
    try:  # a case file, read as a workspace file is: no link followed, a regular file only
        data, size = safefs.read_file(case.root, artifact, cap)
    except (safefs.Refused, OSError) as exc:
        return RunStatus.ERROR, f"could not read {artifact}: {getattr(exc, 'strerror', None) or exc}", []
    if size > cap:  # a verdict on its start would be a verdict on another artifact
        return RunStatus.ERROR, (f"{artifact} is {size:,} bytes, more than the {cap:,} verify reads (max_read_bytes "
                                 f"in scarbook.yaml, at least {MAX_ARTIFACT:,}): not checked — raise max_read_bytes "
                                 "to check it"), []
    tmp = Path(tempfile.mkdtemp(prefix=f"scarbook-verify-{case.id}-"))
    try:
        ws = tmp / "ws"
        snap = prepare_workspace(case, ws)
        output, ref, calls = "", tool_input_of(target), None
        if ref is not None:
            calls = _as_last_call(ref, data.decode("utf-8", errors="replace"))
        elif target == "output":
            output = data.decode("utf-8", errors="replace")
        else:
            assert isinstance(target, str)  # (a mapping is a tool call's input: above)
            try:
                if not target.strip("./"):  # ".", "./": the workspace itself
                    raise IsADirectoryError(target)
                safefs.write_file(ws, target, data)
            except IsADirectoryError:  # or a folder the seed holds
                return RunStatus.ERROR, (f"scar.artifact_at {target!r} names a folder, not a file: "
                                 "write the workspace path of the file the artifact belongs in"), []
        ctx = CheckContext(case=case, workspace=ws, output=output, diff=diff_workspace(snap, ws), judge=judge,
                           transcript=transcript, artifact_calls=calls, max_read=max_read)
        # every check runs, whatever the ones before it said, so each item and rule check is certified on its
        # own (tools/item_certify.py); the case's verdict short-circuits as a run's does
        every = [await run_check(check, ctx, i) for i, check in enumerate(case.checks)]
        status, reason = verdict_of(short_circuit(every))
        return status, reason, every
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def reproduced(ready: ReadySession, finished: SessionFinished) -> dict | None:
    """`verify --reproduce N`: the agent ran the case N times (a normal session, recorded in history, driven
    by the face); how often the incident reproduced = runs the agent failed (cause agent) out of the runs
    that reached a verdict on the agent. None when the session did not finish (nothing to record)."""
    if finished.session.state != SessionState.FINISHED:
        return None
    on_agent = [r for r in finished.runs if r.status == RunStatus.PASS or (r.cause is not None and r.cause.kind == CauseKind.AGENT)]
    fails = sum(1 for r in on_agent if r.status != RunStatus.PASS)
    return {"runs": len(on_agent), "fails": fails, "date": now_iso()[:10], "agent": ready.agent.label,
            "session": finished.session.id}


JUDGED_TIMES = 3  # each artifact is judged this many times, so an unstable judge shows


async def _verdicts(case: Case, artifact: str, judge: Grader | None, times: int, incident: bool = False,
                    max_read: int = MAX_READ) -> tuple[list[str], str, list[list[CheckResult]]]:
    """The artifact's verdict each of `times` times, the reason of the first, and each time's results."""
    votes, first, passes = [], "", []
    for _ in range(times):
        status, reason, results = await check_artifact(case, artifact, judge, incident=incident, max_read=max_read)
        votes.append(str(status))
        passes.append(results)
        first = first or reason
        if status == RunStatus.ERROR:
            break  # no verdict to compare: asking again only repeats the error
    return votes, first, passes


def _failed_by_more_than_placeholders(items: list[ItemCertification]) -> bool:
    """Some rule check or rubric item that is not the import's placeholder failed the failed artifact."""
    return any(any(vote in (Vote.FAIL, CheckStatus.FAIL) for vote in i.failed_votes) and not is_placeholder_item(i.text)
               for i in items)


async def verify_case(case: Case, judge: Grader | None = None, times: int = JUDGED_TIMES, *,
                      max_read: int = MAX_READ) -> Verification:
    """(a) the failed artifact fails, (b) the good artifact passes — each judged `times` times when a
    judge takes part (rule checks alone are deterministic: once), so a judge that changes its mind
    on this case is shown (judge unstable) instead of certifying either way."""
    digest = case_digest(case)
    scar = case.scar
    if not scar or not scar.failed_artifact or case.root is None:
        return Verification(case.id, UNVERIFIED, "no scar.failed_artifact to verify against", digest=digest, at=now_iso())
    judged = judge is not None and bool(case.judge_checks)
    k = max(1, times) if judged else 1
    votes, reason, failed_passes = await _verdicts(case, scar.failed_artifact, judge, k, incident=True,
                                                   max_read=max_read)
    status = RunStatus(votes[0])
    v = Verification(case.id, CATCHES, f"the failed artifact fails: {reason}", failed_verdict=status,
                     digest=digest, at=now_iso(), judged=k, failed_votes=votes, needs_judge=bool(case.judge_checks))
    if RunStatus.ERROR in votes:
        v.outcome, v.detail = ERROR, f"could not reach a verdict on the failed artifact: {reason}"
        return v
    good_passes = None
    if scar.good_artifact:
        v.good_votes, greason, good_passes = await _verdicts(case, scar.good_artifact, judge, k, max_read=max_read)
    v.items = certify_items(case, failed_passes, good_passes)
    if judged and k > 1:
        v.judge_stable = len(set(votes)) == 1 and len(set(v.good_votes)) <= 1
    if v.judge_stable is False:
        said = f"the failed artifact was judged {', '.join(votes)}" + (
            f"; the good artifact {', '.join(v.good_votes)}" if v.good_votes else "")
        v.outcome, v.detail = JUDGE_UNSTABLE, f"asked {k} times, {said}"  # shown after the outcome: said once
        v.good_verdict = v.good_votes[0] if v.good_votes else None
        return v
    if status != RunStatus.FAIL and judge is None and case.judge_checks:
        # The rule checks let the failed artifact through; only the judge could still catch it.
        v.outcome, v.detail = UNVERIFIED, ("the rule checks pass the failed artifact and the llm_judge check "
                                           "did not run (no judge): only the judge can catch this scar")
        return v
    if status == RunStatus.FAIL and not _failed_by_more_than_placeholders(v.items):
        v.outcome, v.detail = UNVERIFIED, ("only the import's TODO rubric item failed the failed artifact, and a "
                                           f"placeholder says nothing of the incident: {write_it_hint(case)}")
        return v
    if status == RunStatus.PASS:
        v.outcome = MISSES
        v.detail = off_target(case) or ("every check passes the failed artifact — the case would not have caught "
                                        "the incident; sharpen the checks or rubric")
    if scar.good_artifact:
        gstatus = v.good_votes[0]
        v.good_verdict = gstatus
        if gstatus == RunStatus.FAIL and v.outcome == CATCHES:
            v.outcome, v.detail = REJECTS_GOOD, f"the good artifact fails too: {greason}"
        elif gstatus == RunStatus.ERROR and v.outcome == CATCHES:
            v.outcome, v.detail = ERROR, f"could not reach a verdict on the good artifact: {greason}"
    if v.outcome == CATCHES and not v.catching:
        v.detail += ("; but no rubric item or rule check catches the incident on its own (each item's finding "
                     "says why), so the case cannot be certified")
    return v
