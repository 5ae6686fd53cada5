"""What the model-call recorder saw of one run, put on its record: the measured tokens and dollars,
its warnings, a replay divergence (the run is an error) and a failure on the model's side (the
run's cause is infra — unless a later call succeeded: then the failure is a note, and what the run
did afterwards is the agent's). The recorder itself is scarbook.record; the runner starts it per session.
"""

from __future__ import annotations

from collections.abc import Callable

from scarbook.models import Cause, CauseKind, RunRecord, RunStatus, Usage
from scarbook.record import RunSummary
from scarbook.run.cause_matching import MAX_EVIDENCE
from scarbook.run.cause_patterns import Pattern

NO_CALLS = ("no model calls recorded: the agent did not use ANTHROPIC_BASE_URL or OPENAI_BASE_URL "
            "(record: is on; an agent with its own endpoint setting must read them)")


def measured_usage(summary: RunSummary, price: Callable[[str, Usage], float] | None) -> Usage:
    total = Usage()
    for model, counts in summary.models.items():
        u = Usage(input_tokens=counts.get("input_tokens", 0), output_tokens=counts.get("output_tokens", 0),
                  cache_read_tokens=counts.get("cache_read_tokens", 0),
                  cache_write_tokens=counts.get("cache_write_tokens", 0))
        u.cost_usd = price(model, u) if price is not None else 0.0
        total.add(u)
    return total


UNCOUNTED = ("recorder: ", ": its tokens are not in the run's usage")  # a run's note of a call it could not count


def uncounted_calls(record: RunRecord) -> list[str]:
    """Why the recorder could not count a call of the run ("call 2 was still going when the agent ended"), from its
    notes: what the run spent is more than its usage says, by how much is not known."""
    head, tail = UNCOUNTED
    return [n[len(head):-len(tail)] for n in record.notes if n.startswith(head) and n.endswith(tail)]


def apply_recording(record: RunRecord, summary: RunSummary, price: Callable[[str, Usage], float] | None) -> None:
    """Before attribution: usage, notes, and the replay's verdict on the run."""
    if summary.calls == 0:
        record.notes.append(NO_CALLS)
    record.notes.extend(summary.warnings)
    if summary.write_error:
        record.notes.append(summary.write_error)
    if summary.recovered:
        record.notes.append(summary.recovered)
    for why in summary.unmeasured[:3]:
        record.notes.append(f"{UNCOUNTED[0]}{why}{UNCOUNTED[1]}")
    record.recording = summary.recording
    if summary.models:  # measured by scarbook: beats what the agent reported about the same calls
        record.agent_usage = measured_usage(summary, price)
    if summary.diverged:
        record.status, record.reason = RunStatus.ERROR, summary.diverged


MODEL_API_RULES = ("api-overloaded", "api-rate-limited", "api-server-error")


def patterns_with(patterns: tuple[Pattern, ...], summary: RunSummary | None) -> tuple[Pattern, ...]:
    """The cause patterns for a run's logs, given what the recorder saw: where it saw the model API
    answer and no failure stand unanswered at the end, a 529 or 429 in the agent's stderr is one the
    agent got past, never why the run failed — the model-API patterns are left out."""
    if summary is None or not summary.live or summary.upstream_failure:
        return patterns
    return tuple(p for p in patterns if p.rule not in MODEL_API_RULES)


def recorded_cause(record: RunRecord, summary: RunSummary) -> Cause | None:
    """The cause the recorder knows better than the logs: a divergence (the agent changed) or the
    model's side failing with no call after it succeeding (infra), for a run that did not pass; None
    to keep the attributed one."""
    if record.status == RunStatus.PASS:
        return None
    if summary.diverged:
        return Cause(CauseKind.AGENT, "replay-diverged", summary.diverged[:MAX_EVIDENCE])
    if summary.upstream_failure:
        return Cause(CauseKind.INFRA, "model-api", summary.upstream_failure[:MAX_EVIDENCE])
    return None
