"""Run a case's checks in cost order, short-circuiting on the first failure (scarbook.checks re-exports
run_check and run_checks)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable

from scarbook.checks.context import CheckContext
from scarbook.checks.rules import RULES, THREAD_RULES, CheckBroke, CheckFailed, CheckSkipped, CheckUnread
from scarbook.checks.trajectory import TRAJECTORY_RULES
from scarbook.checks.verdict import CHECK_CRASHED
from scarbook.models import Cause, CauseKind, Check, CheckResult, CheckStatus

ALL_RULES = {**RULES, **TRAJECTORY_RULES}


# The rules that are plain functions (all but `command`): `run_plain_check` runs them on the caller's
# thread, so a run can take its checks along on the trip off the loop that diffs its workspace.
PLAIN_RULES = frozenset(name for name, fn in RULES.items() if not inspect.iscoroutinefunction(fn))


async def run_check(check: Check, ctx: CheckContext, index: int = 0) -> CheckResult:
    start = time.perf_counter()
    if check.is_judge:
        if ctx.judge is None:
            return CheckResult("llm_judge", CheckStatus.SKIPPED, "judge skipped (--skip-judge)", index)
        result = await ctx.judge.grade(check, ctx)
        result.index = index
        result.duration_s = time.perf_counter() - start
        return result
    if check.type in THREAD_RULES:  # reads agent-written files, or may match for seconds: never on the event loop
        return await asyncio.to_thread(run_plain_check, check, ctx, index)
    try:
        outcome = ALL_RULES[check.type](ctx, check.params)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except Exception as exc:  # noqa: BLE001 — said as the check's result (_raised)
        return _raised(check, index, start, exc)
    return _outcome(check, index, start, outcome)


def run_plain_check(check: Check, ctx: CheckContext, index: int = 0) -> CheckResult:
    """`run_check` of a rule in PLAIN_RULES, on this thread (a file rule blocks: never the event loop's)."""
    start = time.perf_counter()
    try:
        outcome = ALL_RULES[check.type](ctx, check.params)
    except Exception as exc:  # noqa: BLE001 — said as the check's result (_raised)
        return _raised(check, index, start, exc)
    return _outcome(check, index, start, outcome)


def _outcome(check: Check, index: int, start: float, outcome) -> CheckResult:
    try:
        ok, detail, *more = outcome  # a trajectory rule adds the tool call that broke it
    except Exception as exc:  # noqa: BLE001 — not an outcome: the rule is broken (_raised says so)
        return _raised(check, index, start, exc)
    return CheckResult(check.type, CheckStatus.PASS if ok else CheckStatus.FAIL, detail, index,
                       duration_s=time.perf_counter() - start, call=more[0] if more else None)


def _raised(check: Check, index: int, start: float, exc: Exception) -> CheckResult:
    """The result of a rule that raised `exc`."""
    if isinstance(exc, CheckFailed):
        return CheckResult(check.type, CheckStatus.FAIL, str(exc), index, duration_s=time.perf_counter() - start)
    if isinstance(exc, CheckSkipped):
        return CheckResult(check.type, CheckStatus.SKIPPED, str(exc), index, duration_s=time.perf_counter() - start)
    if isinstance(exc, CheckUnread):  # a file past the read cap: no verdict on part of it, and no error either
        return CheckResult(check.type, CheckStatus.FAIL, str(exc), index, duration_s=time.perf_counter() - start,
                           cause=Cause(CauseKind.CASE, "check-read-cap", str(exc)))
    if isinstance(exc, CheckBroke):  # the check's own fault (timed out, could not start, crashed)
        return CheckResult(check.type, CheckStatus.FAIL, str(exc), index, duration_s=time.perf_counter() - start,
                           cause=Cause(CauseKind.CASE, exc.rule, str(exc)))
    if isinstance(exc, OSError):
        # The workspace itself is gone or unreadable: the agent's doing, so a failure with a reason.
        return CheckResult(check.type, CheckStatus.FAIL, f"could not read the workspace: {exc.strerror or exc}", index,
                           duration_s=time.perf_counter() - start)
    # a rule that raised has no verdict; the run goes on
    detail = f"the check crashed: {type(exc).__name__}: {' '.join(str(exc).split())}".rstrip(": ")
    return CheckResult(check.type, CheckStatus.ERROR, detail, index, duration_s=time.perf_counter() - start,
                       cause=Cause(CauseKind.CASE, CHECK_CRASHED, detail))


def _not_run(check_type: str, index: int, stopped: CheckResult) -> CheckResult:
    return CheckResult(check_type, CheckStatus.SKIPPED, f"not run: check {stopped.index + 1} ({stopped.type}) "
                       f"did not pass", index)


def short_circuit(results: list[CheckResult]) -> list[CheckResult]:
    """The results of checks that all ran, as `run_checks` would have given them: after the first non-pass,
    the rest `skipped` (verify runs every check, so each is certified on its own)."""
    out: list[CheckResult] = []
    stopped: CheckResult | None = None
    for i, result in enumerate(results):
        out.append(result if stopped is None else _not_run(result.type, i, stopped))
        if stopped is None and result.status in (CheckStatus.FAIL, CheckStatus.ERROR):
            stopped = result
    return out


async def run_checks(checks: list[Check], ctx: CheckContext,
                     on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Every check gets a result; after the first non-pass, the rest are `skipped` (never run)."""
    results: list[CheckResult] = []
    stopped: CheckResult | None = None
    for i, check in enumerate(checks):
        if stopped is not None:
            result = _not_run(check.type, i, stopped)
        else:
            result = await run_check(check, ctx, i)
            if result.status in (CheckStatus.FAIL, CheckStatus.ERROR):
                stopped = result
        results.append(result)
        if on_result:
            on_result(result)
    return results
