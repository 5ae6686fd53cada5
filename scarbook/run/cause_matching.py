"""What each rule of a run's cause looks for (run/causes.py reads them in their order of precedence): the facts the
worker saw of the agent (AgentFacts), and one test per rule over the run (RunView) — its evidence when it holds
(a signal, an exit code, the stderr line that matched, a check's detail), else None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scarbook.agents.failure import failure_line
from scarbook.models import AgentStage, Cause, CauseKind, CheckStatus, RunRecord, RunStatus, Vote
from scarbook.run.agent_signals import FAULT_SIGNALS, SIGKILL, held, signal_name
from scarbook.run.cause_patterns import Pattern, matching_line

AGENT_DID_NOT_FINISH = "not run: the agent did not finish"  # a check's detail when the agent crashed
MAX_EVIDENCE = 240


@dataclass
class AgentFacts:
    """What the worker saw of the agent, for attributing its run. Plain data: it pickles to a driver.

    `stage` is where the run stopped short: "seed" (the workspace could not be laid), "start" (the
    agent could not be started), "diff" (its workspace could not be read back), or "" (it ran)."""

    stage: AgentStage = AgentStage.RAN  # or WORKER_LOST (a cluster lost the run's worker), SCARBOOK (its own code failed)
    error: str = ""  # the error at that stage
    errno: int | None = None
    crashed: bool = False  # the agent did not finish normally (its adapter said why: AgentResult.crashed)
    timed_out: bool = False
    timeout_s: float = 0.0
    signal: int | None = None  # the agent was killed by this signal (not our timeout's)
    oom_kills: int | None = None  # the machine's OOM kills while it ran (proc/oom.py); None: unknown
    # killed by a signal nobody is known to have sent (not SIGKILL): how long scarbook then watched for its own
    # shutdown, which did not begin (run/agent_signals.py); 0: it could not watch (a run on a Ray worker)
    watched_s: float = 0.0
    exit_code: int | None = None
    stderr_tail: str = ""
    transcript_tail: str = ""


@dataclass
class RunView:
    """What the rules look at: the record (status, checks), the agent's facts, the patterns."""

    record: RunRecord
    facts: AgentFacts
    patterns: tuple[Pattern, ...]
    scarbook_error: str = ""  # scarbook itself failed inside this run (a harness exception)
    judge_aborted: str = ""  # the judge rejected the key: the session stopped here


def seed_not_laid(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.SEED else None


def could_not_start(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.START else None


def slot_failed(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.SLOT else None


def slot_changed(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.SLOT_CHANGED else None


def workspace_unreadable(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.DIFF else None


def worker_lost(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.WORKER_LOST else None


def judge_rejected(v: RunView) -> str | None:
    return v.judge_aborted or None


# A signal its own code raises (FAULT_SIGNALS) is the agent's crash. The others come from outside its code — the
# OOM killer's SIGKILL, a supervisor's SIGTERM, a limit's SIGXCPU — or from the agent itself (`kill -TERM $$`): who
# sent a SIGKILL is told by proc/oom.py, any other by run/agent_signals.py (whether scarbook's own shutdown began
# just after).


def _self_killed(v: RunView) -> bool:
    """SIGKILL while the kernel's OOM killer killed nothing (proc/oom.py), and not scarbook's timeout: nobody
    outside is known to have sent it, and the agent can send it to itself."""
    return v.facts.signal == SIGKILL and v.facts.oom_kills == 0 and not v.facts.timed_out


def _unsent(v: RunView) -> bool:
    """A signal from outside but SIGKILL, after which scarbook watched for its own shutdown and none began
    (run/agent_signals.py): nobody is known to have sent it, and the agent can send it to itself."""
    return held(v.facts.signal, v.facts.timed_out) and v.facts.watched_s > 0


def killed_from_outside(v: RunView) -> str | None:
    n = v.facts.signal
    if n is None or v.facts.timed_out or n in FAULT_SIGNALS or _self_killed(v) or _unsent(v):
        return None
    why = ""
    if n == SIGKILL:
        oom = v.facts.oom_kills
        why = (f" — the kernel's OOM killer killed {oom} meanwhile" if oom else
               " — the kernel's OOM killer sends it, so do people and supervisors")
    return f"killed by signal {n} ({signal_name(n)}), not by scarbook's timeout{why}"


def killed_unexplained(v: RunView) -> str | None:
    n = v.facts.signal
    if n is not None and _unsent(v):
        return (f"killed by signal {n} ({signal_name(n)}), which neither scarbook nor a shutdown sent (not "
                f"scarbook's timeout or cancel, and scarbook was not stopped within {v.facts.watched_s:g} s after): "
                "the agent's own doing")
    if not _self_killed(v):
        return None
    return ("killed by signal 9 (SIGKILL), which neither scarbook's timeout nor the kernel's OOM killer sent (its "
            "oom_kill count did not move while the agent ran): the agent's own doing")


def crashed(v: RunView) -> str | None:
    n = v.facts.signal
    if n is None or v.facts.timed_out or n not in FAULT_SIGNALS:
        return None
    return f"killed by signal {n} ({signal_name(n)}), which its own code raised: the agent crashed"


def timed_out(v: RunView) -> str | None:
    return f"scarbook's timeout: the agent ran past {v.facts.timeout_s:g}s" if v.facts.timed_out else None


def exited(v: RunView) -> str | None:
    code = v.facts.exit_code
    if not v.facts.stage and code not in (None, 0) and v.record.status != RunStatus.PASS:
        line = _last_error_line(v.facts.stderr_tail)
        return f"exit code {code}" + (f"; stderr: {line}" if line else "")
    return None


_NOT_EXECUTED = re.compile(r"(?:No such file or directory|: not found|command not found|Permission denied)\s*$")


def could_not_exec(v: RunView) -> str | None:
    """The program started but could not run what it execs (a shell's 127/126: a version manager's shim
    whose manager the sandbox hides, an interpreter that is not there) and did nothing: it never ran."""
    code, line = v.facts.exit_code, _last_error_line(v.facts.stderr_tail)
    if v.facts.stage or code not in (126, 127) or v.record.diff.changed or v.record.output_excerpt.strip():
        return None
    return f"exit code {code} with nothing done; stderr: {line}" if _NOT_EXECUTED.search(line) else None


def check_broke(v: RunView) -> tuple[str, str] | None:
    """The check's own rule (check-timed-out, check-could-not-start, check-crashed, check-no-transcript,
    check-no-usage, check-read-cap) and evidence."""
    for c in v.record.checks:
        if c.status in (CheckStatus.FAIL, CheckStatus.ERROR) and c.cause:
            return c.cause.rule, f"check {c.index + 1} ({c.type}): {c.cause.evidence}"
    return None


def judge_error(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.type == "llm_judge" and c.status == CheckStatus.ERROR:
            return f"check {c.index + 1} (llm_judge): {c.detail}"
    return None


def contested(v: RunView) -> str | None:
    """A judge FAIL whose samples split: with other samples the run could have passed."""
    for c in v.record.checks:
        if c.type != "llm_judge" or c.status != CheckStatus.FAIL or not c.judge:
            continue
        for item in c.judge.items:
            if item.verdict == Vote.FAIL and len(set(item.votes)) > 1:
                return (f"check {c.index + 1} (llm_judge) item {item.item}: samples split "
                        f"{', '.join(item.votes)} — the majority said FAIL")
    return None


def check_error(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.status == CheckStatus.ERROR and c.type != "llm_judge":
            return f"check {c.index + 1} ({c.type}): {c.detail}"
    return None


def judge_fail(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.type == "llm_judge" and c.status == CheckStatus.FAIL:
            return f"check {c.index + 1} (llm_judge): {c.detail}"
    return None


def check_fail(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.status == CheckStatus.FAIL:
            return f"check {c.index + 1} ({c.type}): {c.detail}"
    return None


def did_not_finish(v: RunView) -> str | None:
    """The agent did not finish and no other rule said why (an adapter's own failure line)."""
    return v.record.reason if v.record.status == RunStatus.FAIL and not v.record.checks else None


def scarbook_failed(v: RunView) -> str | None:
    return v.scarbook_error or (v.facts.error if v.facts.stage == AgentStage.SCARBOOK else None)


def _finished_normally(v: RunView) -> bool:
    f = v.facts
    return not f.crashed and not f.timed_out and f.signal is None and f.exit_code == 0


def match_patterns(v: RunView) -> Cause | None:
    """Only for an agent that did not finish normally (non-zero exit, signal, timeout, its adapter's
    failure): an agent that exited 0 and was wrong failed by itself, whatever its log or transcript
    mention (a task about rate limiting, a 429 it retried past)."""
    if v.facts.stage in (AgentStage.SEED, AgentStage.START) or _finished_normally(v):
        return None  # the agent never ran, or it ran to its end: what it printed is not the machine's
    for source, text in (("stderr", v.facts.stderr_tail), ("transcript", v.facts.transcript_tail)):
        found = matching_line(v.patterns, text) if text else None
        if found:  # (a pattern that timed out on it is no evidence either way: the rules below judge the run)
            pattern, line = found
            return make_cause(pattern.kind, pattern.rule, f"{source}: {line}")
    return None


def _last_error_line(text: str) -> str:
    return failure_line(text)


def make_cause(kind: CauseKind, rule: str, evidence: str) -> Cause:
    """A cause, its evidence on one line and at most MAX_EVIDENCE characters."""
    evidence = " ".join(str(evidence).split())
    if len(evidence) > MAX_EVIDENCE:
        evidence = evidence[: MAX_EVIDENCE - 1] + "…"
    return Cause(kind, rule, evidence)
