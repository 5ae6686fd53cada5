"""Whose fault is a run that did not pass: the agent's, the machine's (infra), the judge's or the case's.

    cause = attribute(record, facts, patterns)   # a models.Cause (kind, rule, evidence), or None for a pass

One table, RULES, read top to bottom: the first rule that holds names the run's cause, with the
evidence it saw (a signal, an exit code, the stderr line that matched), so a user can see why the
run was put there. Only `infra` is retried (scarbook.run.runner), and only a run whose cause is
`infra`: a run the agent failed is never run again.

This module owns the order of precedence: the table and the reading of it. What each rule looks for is
run/cause_matching.py's; the stderr/transcript patterns (built in, and scarbook.yaml's `causes:`, tried first)
are run/cause_patterns.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from scarbook.checks.verdict import CHECK_CRASHED
from scarbook.judge.verdict import MALFORMED
from scarbook.models import Cause, CauseKind, CheckResult, CheckStatus, RunRecord, RunStatus
from scarbook.run.agent_signals import SHUTDOWN_GRACE_S
from scarbook.run.cause_matching import (
    AgentFacts,
    RunView,
    check_broke,
    check_error,
    check_fail,
    contested,
    could_not_exec,
    could_not_start,
    crashed,
    did_not_finish,
    exited,
    judge_error,
    judge_fail,
    judge_rejected,
    killed_from_outside,
    killed_unexplained,
    make_cause,
    match_patterns,
    scarbook_failed,
    seed_not_laid,
    slot_changed,
    slot_failed,
    timed_out,
    worker_lost,
    workspace_unreadable,
)
from scarbook.run.cause_patterns import BUILTIN_PATTERNS, Pattern

# A rule's test: the evidence when it holds (or a more specific rule name and the evidence), else None.
Test = Callable[[RunView], str | tuple[str, str] | Cause | None]


@dataclass(frozen=True)
class Rule:
    name: str
    kind: CauseKind | None  # None for the pattern row, whose test gives the whole cause
    test: Test
    means: str  # one line, for `scarbook` docs and --help: when it applies


# The table. Order matters: what stopped the run first beats what it then looked like (a seed
# that could not be laid is the case's fault whatever the agent printed); the machine's signs
# beat the agent's exit (an agent that died of a 529 exits 1); a check's own breakage beats its
# verdict; a split judge beats its FAIL.
RULES: tuple[Rule, ...] = (
    Rule("seed-not-laid", CauseKind.CASE, seed_not_laid, "the case's workspace (its seed) could not be laid"),
    Rule("scarbook-error", CauseKind.INFRA, scarbook_failed, "scarbook itself failed inside the run (traceback kept)"),
    Rule("agent-could-not-start", CauseKind.INFRA, could_not_start, "the agent's program could not be started"),
    Rule("sandbox-slot-failed", CauseKind.INFRA, slot_failed,
         "the run's sandbox slot failed (isolation: slot): its launcher died, or the slot did not start"),
    Rule("slot-changed-by-run", CauseKind.INFRA, slot_changed,
         "the run changed its sandbox slot (lowered its launcher's priority or limits, or left what could not be "
         "wiped): the slot was replaced; the run's own doing, so the gate reads it as a fail too"),
    Rule("workspace-unreadable", CauseKind.INFRA, workspace_unreadable, "the run's workspace could not be read back"),
    Rule("worker-lost", CauseKind.INFRA, worker_lost,
         "the cluster lost the run's worker or node (twice: the Ray executor retries once itself)"),
    Rule("judge-rejected-key", CauseKind.JUDGE, judge_rejected, "the judge's API rejected the key"),
    Rule("killed-by-signal", CauseKind.INFRA, killed_from_outside,
         "the agent was killed by a signal from outside that was not scarbook's timeout, where it may have been the "
         "machine's: SIGKILL while the OOM killer killed (or where that is unknown: macOS, Windows), any other on a "
         "Ray worker's node (whose shutdown this scarbook cannot see)"),
    Rule("patterns", None, match_patterns, "a line of the agent's stderr or transcript matched a cause pattern"),
    Rule("agent-crashed", CauseKind.AGENT, crashed,
         "the agent died of a signal its own code raised (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP)"),
    Rule("agent-killed", CauseKind.AGENT, killed_unexplained,
         "the agent died of a signal nobody is known to have sent: SIGKILL while the kernel's OOM killer killed "
         "nothing (Linux: /proc/vmstat's oom_kill did not move), or SIGTERM, SIGINT, SIGHUP, ... (any its own code "
         f"does not raise) with no shutdown of scarbook begun within {SHUTDOWN_GRACE_S:g} s after (one that begins "
         "cuts the run: resume runs it again)"),
    Rule("agent-timed-out", CauseKind.AGENT, timed_out, "the agent ran past the run's timeout"),
    Rule("agent-could-not-exec", CauseKind.INFRA, could_not_exec,
         "the agent's program started but could not exec what it runs (exit 126/127, nothing done): it never ran"),
    Rule("agent-exited", CauseKind.AGENT, exited, "the agent exited with a non-zero code"),
    Rule("agent-did-not-finish", CauseKind.AGENT, did_not_finish, "the agent did not finish (its adapter said why)"),
    Rule("check-broke", CauseKind.CASE, check_broke,
         "a check itself broke: check-timed-out, check-could-not-start, check-crashed, check-no-transcript, "
         "check-no-usage, check-read-cap"),
    Rule("check-error", CauseKind.CASE, check_error, "a rule check could not reach a verdict"),
    Rule("judge-error", CauseKind.JUDGE, judge_error, "the judge could not reach a verdict (error, malformed reply)"),
    Rule("judge-contested", CauseKind.JUDGE, contested, "the judge said FAIL but its samples split"),
    Rule("judge-fail", CauseKind.AGENT, judge_fail, "the judge said FAIL (its samples agreed)"),
    Rule("check-fail", CauseKind.AGENT, check_fail, "a rule check said FAIL"),
)

# An older scarbook put a run whose judge checks were skipped under the judge's cause with this rule;
# such a run is nobody's fault (the judge was not asked), so it is counted under no cause.
SKIPPED_RULE = "judge-skipped"


def attribute(record: RunRecord, facts: AgentFacts | None, patterns: tuple[Pattern, ...] = BUILTIN_PATTERNS,
              *, scarbook_error: str = "", judge_aborted: str = "") -> Cause | None:
    """The cause of a run that did not pass; None for a pass, and for an unjudged run whose judge
    checks were not run (the judge was not asked: nobody's fault; the reports count it unjudged)."""
    if record.status == RunStatus.PASS:
        return None
    view = RunView(record, facts or AgentFacts(), patterns, scarbook_error, judge_aborted)
    for rule in RULES:
        evidence = rule.test(view)
        if not evidence:
            continue
        if isinstance(evidence, Cause):  # the pattern row: the matched pattern names the kind and the rule
            return evidence
        assert rule.kind is not None  # every row but the pattern row names its kind
        if isinstance(evidence, tuple):
            return make_cause(rule.kind, *evidence)
        return make_cause(rule.kind, rule.name, evidence)
    if record.status == RunStatus.UNJUDGED:
        return None  # its judge checks were not run (--skip-judge, no API key, a batch still out): no fault
    return make_cause(CauseKind.AGENT, "unexplained", record.reason or record.status)


def is_infra(record: RunRecord) -> bool:
    return record.cause is not None and record.cause.kind == CauseKind.INFRA


# The infra causes scarbook saw itself and the agent cannot cause: a program that could not be started, a sandbox slot
# that failed (one the run changed is slot-changed-by-run), a lost worker, the recorder's own evidence of the model API
# failing. Every other infra cause rests on the agent's own word — a line it printed (the "patterns" row: 529,
# MemoryError, No space left on device, "bwrap: ...", a project's causes.infra), an exit 126/127 with nothing done — or
# on evidence scarbook sees but the agent can make (AGENT_CAN_CAUSE), which an agent that knows it failed can say or
# make to buy a retry; the gate reads such a retry at its worst too (run/gate.py).
VERIFIED_INFRA_RULES = frozenset({"agent-could-not-start", "sandbox-slot-failed", "worker-lost", "model-api"})

# Infra scarbook sees itself but cannot tell from the agent's doing, and how the agent can make it (the gate's note).
AGENT_CAN_CAUSE = {
    # the kernel's count of OOM kills is the machine's (proc/oom.py): an agent that runs a child in a small memory
    # cgroup it made moves it, then SIGKILLs itself; any other signal only a Ray node's shutdown explains is as free
    "killed-by-signal": "a kill the machine's count of OOM kills cannot tell from one it made itself",
    # the workspace is the agent's: unconfined, it can swap the folder scarbook made for another
    "workspace-unreadable": "a workspace it can swap or close itself",
    # scarbook reads what the agent wrote: a failure of scarbook's own may be what the agent's input made
    "scarbook-error": "a failure of scarbook that what it wrote can cause",
}
AGENTS_WORD = "what it printed or how it exited, which scarbook cannot verify"


def how_agent_can_claim(rule: str) -> str:
    """How an infra cause on the agent's word (`rule`) can be the agent's doing, for the gate's note."""
    return AGENT_CAN_CAUSE.get(rule, AGENTS_WORD)


def on_agents_word(cause: Cause | None) -> bool:
    """Whether `cause` is infra only the agent vouches for (not in VERIFIED_INFRA_RULES)."""
    return cause is not None and cause.kind == CauseKind.INFRA and cause.rule not in VERIFIED_INFRA_RULES


def whose_word(cause: Cause | None) -> str:
    """How an infra cause is known, as every face says it beside a retry: "the agent's own word" or "seen by
    scarbook"; "" for any other cause."""
    if cause is None or cause.kind != CauseKind.INFRA:
        return ""
    return "the agent's own word" if on_agents_word(cause) else "seen by scarbook"


def judge_unreadable(record: RunRecord) -> bool:
    """Whether the run is an error because its judge's reply could not be read, twice (no verdict tool call, a
    malformed one, a refusal): what the artifact says can cause that, as an injection that asks for plain text."""
    return record.status == RunStatus.ERROR and any(
        c.type == "llm_judge" and c.status == CheckStatus.ERROR and c.detail.startswith(MALFORMED) for c in record.checks)


def check_crashed(record: RunRecord) -> CheckResult | None:
    """The rule check that crashed (raised: no verdict) when the run is an error for it, else None. The rule checks
    read what the agent left, and a reader that raises on it is put right when found (a fail saying what it could
    not read); one still unknown must not let an agent turn the runs it failed into errors, out of the rate."""
    if record.status != RunStatus.ERROR:
        return None
    return next((c for c in record.checks if c.type != "llm_judge" and c.status == CheckStatus.ERROR
                 and c.cause is not None and c.cause.rule == CHECK_CRASHED), None)


def retried_on_agents_word(record: RunRecord) -> bool:
    """Whether the run was retried on an infra cause only the agent vouched for (an attempt before its last) and
    then reached a verdict (or an error not the machine's: one still infra is counted apart, exit 3)."""
    return not is_infra(record) and any(on_agents_word(a.cause) for a in record.attempts[:-1])


def cause_kind(record: RunRecord) -> CauseKind | None:
    """Whose fault the run is, as the reports count it: a run whose judge checks were skipped is
    unjudged, nobody's fault, even as an older scarbook recorded it (SKIPPED_RULE)."""
    cause = record.cause
    return None if cause is None or cause.rule == SKIPPED_RULE else cause.kind


def count_causes(records: Iterable[RunRecord]) -> dict[CauseKind, int]:
    """Runs per cause kind (every kind, zeros included), for the reports."""
    counts = dict.fromkeys(CauseKind, 0)
    for r in records:
        kind = cause_kind(r)
        if kind is not None:
            counts[kind] += 1
    return counts
