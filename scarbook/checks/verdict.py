"""A run's verdict from its check results: error before fail before unjudged before pass."""

from __future__ import annotations

from scarbook.models import CheckResult, CheckStatus, RunStatus

JUDGE_SKIPPED = "judge skipped"  # a skipped judge check's detail starts with this
# a check's cause: a command check killed or ended without a status (a fail), or a rule that raised (an error)
CHECK_CRASHED = "check-crashed"


def verdict_of(results: list[CheckResult]) -> tuple[RunStatus, str]:
    """error if any check could not reach a verdict; fail on the first failing check; unjudged if the
    rest passed but a judge check was skipped for want of a judge; else pass."""
    for i, r in enumerate(results):
        if r.status == CheckStatus.ERROR:
            return RunStatus.ERROR, f"check {i + 1} ({r.type}): {r.detail}"
    for i, r in enumerate(results):
        if r.status == CheckStatus.FAIL:
            return RunStatus.FAIL, f"check {i + 1} ({r.type}): {r.detail}"
    unjudged = [r for r in results if r.status == CheckStatus.SKIPPED and r.detail.startswith(JUDGE_SKIPPED)]
    if unjudged:
        why = unjudged[0].detail[len(JUDGE_SKIPPED):].strip()
        checks = "check" if len(unjudged) == 1 else "checks"
        return RunStatus.UNJUDGED, f"no verdict: rule checks passed, {len(unjudged)} judge {checks} skipped {why}".rstrip()
    return RunStatus.PASS, "all checks passed"
