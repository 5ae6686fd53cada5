"""`scarbook eval --dry-run`: how many judge calls, and what they would cost, before spending anything.

Calls are an upper bound (every run reaches the judge; short-circuit can only save calls). Cost
per call comes from the mean tokens per call of past judged runs of the same case when history has
them, re-priced with today's table; otherwise from a rough token count of the prompt, rubric and
artifact. No network.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from scarbook.judge.artifact import OUTPUT
from scarbook.judge.pricing import priced
from scarbook.judge.prompt import SYSTEM_PROMPT, VERDICT_TOOL
from scarbook.judge.settings import JudgeSettings
from scarbook.models import Case, RunRecord, Usage

CHARS_PER_TOKEN = 4  # rough for English text and code
GUESSED_ARTIFACT_CHARS = 2_000  # when nothing on disk hints at the artifact's size
_FRAME_TOKENS = 150  # markers, instructions and message framing around the rubric and artifact
_OUTPUT_TOKENS_PER_ITEM = 50
_OUTPUT_TOKENS_BASE = 40


@dataclass
class JudgeEstimate:
    calls: int
    cost_usd: float
    basis: str  # one line: where the numbers come from
    per_case: dict[str, dict[str, float]] = field(default_factory=dict)  # case id -> {"calls", "cost_usd", "batch_cost_usd"}
    batch_cost_usd: float = 0.0  # the same calls through the Message Batches API (the price table's batch multiplier)


def estimate_judge_calls(
    cases: Iterable[Case],
    runs: int,
    history_runs: Iterable[RunRecord],
    settings: JudgeSettings | None = None,
    *,
    past: dict[str, tuple[Usage, int]] | None = None,
) -> JudgeEstimate:
    """`past`: judge_tokens_by_case(history_runs) read once before (the TUI re-estimates on every key)."""
    settings = settings or JudgeSettings()
    past = judge_tokens_by_case(history_runs) if past is None else past
    total_calls, total_cost, total_batch = 0, 0.0, 0.0
    from_history, from_guess, runs_used = 0, 0, 0
    per_case: dict[str, dict[str, float]] = {}
    for case in cases:
        checks = case.judge_checks
        if not checks:
            continue
        calls = runs * len(checks) * settings.samples
        if case.id in past:
            per_call, seen_runs = past[case.id]
            from_history += 1
            runs_used += seen_runs
        else:
            per_call = _rough_usage_per_call(case, settings)
            from_guess += 1
        cost = priced(per_call, settings.model, settings.prices).cost_usd * calls
        batch = priced(per_call, settings.model, settings.prices, batch=True).cost_usd * calls
        per_case[case.id] = {"calls": calls, "cost_usd": cost, "batch_cost_usd": batch}
        total_calls += calls
        total_cost += cost
        total_batch += batch
    return JudgeEstimate(total_calls, total_cost, _basis(from_history, runs_used, from_guess, settings), per_case,
                         total_batch)


def judge_tokens_by_case(history_runs: Iterable[RunRecord]) -> dict[str, tuple[Usage, int]]:
    """Each case's mean judge tokens per call over the judged runs of history, and how many runs that is."""
    sums: dict[str, Usage] = {}
    calls: dict[str, int] = {}
    seen: dict[str, int] = {}
    for run in history_runs:
        usage = run.judge_usage
        if usage.total_tokens <= 0:
            continue  # not judged (skipped, short-circuited, --skip-judge): says nothing about cost
        sums.setdefault(run.case_id, Usage()).add(usage)
        calls[run.case_id] = calls.get(run.case_id, 0) + max(run.judge_calls, 1)
        seen[run.case_id] = seen.get(run.case_id, 0) + 1
    means = {}
    for case_id, total in sums.items():
        n = calls[case_id]
        mean = Usage(
            input_tokens=round(total.input_tokens / n),
            output_tokens=round(total.output_tokens / n),
            cache_read_tokens=round(total.cache_read_tokens / n),
            cache_write_tokens=round(total.cache_write_tokens / n),
        )
        means[case_id] = (mean, seen[case_id])
    return means


def _rough_usage_per_call(case: Case, settings: JudgeSettings) -> Usage:
    """A mean over the case's judge checks of the tokens one call would take."""
    fixed_chars = len(SYSTEM_PROMPT) + len(json.dumps(VERDICT_TOOL))
    inputs, outputs = [], []
    for check in case.judge_checks:
        rubric = [str(item) for item in check.params.get("rubric") or []]
        chars = fixed_chars + sum(len(item) + 4 for item in rubric)
        chars += min(_artifact_chars(case, str(check.params.get("artifact", OUTPUT))), settings.max_artifact_bytes)
        if check.params.get("include_task"):
            chars += len(case.task)
        inputs.append(chars // CHARS_PER_TOKEN + _FRAME_TOKENS)
        outputs.append(_OUTPUT_TOKENS_BASE + _OUTPUT_TOKENS_PER_ITEM * len(rubric))
    n = max(len(inputs), 1)
    return Usage(input_tokens=round(sum(inputs) / n), output_tokens=round(sum(outputs) / n))


def _artifact_chars(case: Case, source: str) -> int:
    """The scar's own artifacts are the best hint at how big a real one is."""
    if case.root is not None and case.scar is not None:
        sizes = []
        for rel in (case.scar.failed_artifact, case.scar.good_artifact):
            if rel:
                try:
                    sizes.append((case.root / rel).stat().st_size)
                except OSError:
                    pass
        if sizes:
            return max(sizes)
    if source != OUTPUT and case.root is not None:
        try:
            return (case.root / "seed" / source).stat().st_size
        except OSError:
            pass
    return GUESSED_ARTIFACT_CHARS


def _basis(from_history: int, runs_used: int, from_guess: int, settings: JudgeSettings) -> str:
    parts = []
    if from_history:
        parts.append(f"mean judge tokens of {runs_used} past judged run{'s' if runs_used != 1 else ''} ({_cases(from_history)})")
    if from_guess:
        parts.append(f"rough token estimate from rubric and artifact size ({_cases(from_guess)})")
    if not parts:
        return "no selected case has an llm_judge check"
    samples = f", {settings.samples} samples per check" if settings.samples > 1 else ""
    return f"{'; '.join(parts)}; priced for {settings.model}{samples}; upper bound: assumes every run reaches the judge"


def _cases(n: int) -> str:
    return f"{n} case{'s' if n != 1 else ''}"
