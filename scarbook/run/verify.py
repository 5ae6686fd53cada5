"""Test the test: would this case have caught the incident it was born from?

The scar's failed artifact is put into a fresh seeded workspace (a file artifact at its path, an
output artifact as the final output) and the case's checks run on it without the agent: they must
FAIL. A good artifact, when the scar has one, must PASS. A case whose checks pass the failed artifact
*misses its scar* — the vague-rubric trap.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from scarbook.cases.io import case_digest
from scarbook.cases.verifications import CATCHES, ERROR, MISSES, REJECTS_GOOD, UNVERIFIED, Verification
from scarbook.checks import CheckContext, run_checks
from scarbook.checks.verdict import verdict_of
from scarbook.fs import safefs
from scarbook.history.store import now_iso
from scarbook.judge.grader import Grader
from scarbook.models import Case, CheckResult, RunStatus
from scarbook.run.workspace import diff_workspace, prepare_workspace

MAX_ARTIFACT = 50_000_000  # a scar artifact larger than this is cut (checks read at most 20 MB)
PATH_CHECKS = ("file_exists", "contains", "not_contains", "regex", "line_count", "json_valid")




def artifact_target(case: Case) -> str:
    """Where the artifact goes: scar.artifact_at, else the judged path, else the first file a check reads."""
    if case.scar and case.scar.artifact_at:
        return case.scar.artifact_at
    for check in case.checks:
        if check.is_judge and check.params.get("artifact", "output") != "output":
            return check.params["artifact"]
    for check in case.checks:
        if check.type in PATH_CHECKS:
            return check.params["path"]
    return "output"


async def check_artifact(case: Case, artifact: str, judge: Grader | None = None) -> tuple[RunStatus, str, list[CheckResult]]:
    """Run the case's checks on the case file `artifact` placed where it belongs.
    Returns (status, reason, results)."""
    assert case.root is not None  # a case loaded from its folder (verify_case checks)
    target = artifact_target(case)
    try:  # a case file, read as a workspace file is: no link followed, a regular file only
        data, _ = safefs.read_file(case.root, artifact, MAX_ARTIFACT)
    except (safefs.Refused, OSError) as exc:
        return RunStatus.ERROR, f"could not read {artifact}: {getattr(exc, 'strerror', None) or exc}", []
    tmp = Path(tempfile.mkdtemp(prefix=f"scarbook-verify-{case.id}-"))
    try:
        ws = tmp / "ws"
        snap = prepare_workspace(case, ws)
        output = ""
        if target == "output":
            output = data.decode("utf-8", errors="replace")
        else:
            try:
                if not target.strip("./"):  # ".", "./": the workspace itself
                    raise IsADirectoryError(target)
                safefs.write_file(ws, target, data)
            except IsADirectoryError:  # or a folder the seed holds
                return RunStatus.ERROR, (f"scar.artifact_at {target!r} names a folder, not a file: "
                                 "write the workspace path of the file the artifact belongs in"), []
        ctx = CheckContext(case=case, workspace=ws, output=output, diff=diff_workspace(snap, ws), judge=judge)
        results = await run_checks(case.checks, ctx)
        status, reason = verdict_of(results)
        return status, reason, results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def verify_case(case: Case, judge: Grader | None = None) -> Verification:
    digest = case_digest(case)
    scar = case.scar
    if not scar or not scar.failed_artifact or case.root is None:
        return Verification(case.id, UNVERIFIED, "no scar.failed_artifact to verify against", digest=digest, at=now_iso())
    status, reason, _ = await check_artifact(case, scar.failed_artifact, judge)
    v = Verification(case.id, CATCHES, f"the failed artifact fails: {reason}", failed_verdict=status,
                     digest=digest, at=now_iso())
    if status == RunStatus.ERROR:
        v.outcome, v.detail = ERROR, f"could not reach a verdict on the failed artifact: {reason}"
        return v
    if status != RunStatus.FAIL and judge is None and case.judge_checks:
        # The rule checks let the failed artifact through; only the judge could still catch it.
        v.outcome, v.detail = UNVERIFIED, ("the rule checks pass the failed artifact and the llm_judge check "
                                           "did not run (no judge): only the judge can catch this scar")
        return v
    if status == RunStatus.PASS:
        v.outcome = MISSES
        v.detail = ("every check passes the failed artifact — the case would not have caught the incident; "
                    "sharpen the checks or rubric")
    if scar.good_artifact:
        gstatus, greason, _ = await check_artifact(case, scar.good_artifact, judge)
        v.good_verdict = gstatus
        if gstatus == RunStatus.FAIL and v.outcome == CATCHES:
            v.outcome, v.detail = REJECTS_GOOD, f"the good artifact fails too: {greason}"
        elif gstatus == RunStatus.ERROR and v.outcome == CATCHES:
            v.outcome, v.detail = ERROR, f"could not reach a verdict on the good artifact: {greason}"
    return v


