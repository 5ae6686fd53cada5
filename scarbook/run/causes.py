"""Whose fault is a run that did not pass: the agent's, the machine's (infra), the judge's or the case's.

    cause = attribute(record, facts, patterns)   # a models.Cause (kind, rule, evidence), or None for a pass

One table, RULES, read top to bottom: the first rule that holds names the run's cause, with the
evidence it saw (a signal, an exit code, the stderr line that matched), so a user can see why the
run was put there. Only `infra` is retried (scarbook.run.runner), and only a run whose cause is
`infra`: a run the agent failed is never run again.

The stderr/transcript patterns are data: the built-in ones below, and a project's own in
scarbook.yaml (`causes: {infra: [regex, ...], case: [...]}`, validated by scarbook.config), which are
tried first. Patterns are matched line by line against the tail of the agent's stderr and of its
transcript; the evidence is the matching line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from scarbook.agents.failure import failure_line
from scarbook.checks.patterns import PatternTimedOut, search
from scarbook.checks.spec import REGEX_TIMEOUT_S
from scarbook.models import AgentStage, Cause, CauseKind, CheckStatus, RunRecord, RunStatus, Vote
from scarbook.run.agent_signals import FAULT_SIGNALS, SHUTDOWN_GRACE_S, SIGKILL, held, signal_name

AGENT_DID_NOT_FINISH = "not run: the agent did not finish"  # a check's detail when the agent crashed
TAIL_BYTES = 16_384  # how much of the end of stderr / the transcript the patterns look at
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


@dataclass(frozen=True)
class Pattern:
    """One stderr/transcript pattern: a line matching `regex` puts the run in `kind`, named `rule`."""

    kind: CauseKind
    rule: str
    regex: str


# Written for the lines programs really print: the Anthropic/OpenAI SDKs ("Error code: 529 -
# {'type': 'error', 'error': {'type': 'overloaded_error'...", "RateLimitError", "429 Too Many
# Requests"), curl/HTTP clients ("HTTP 503", "status code 502"), the kernel and libc.
_HTTP = r"(?:HTTP(?:/\d(?:\.\d)?)?|[Ss]tatus(?:[ _]?code)?|[Ee]rror[ _]code|code|returned error)[\s:=]*"
BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    Pattern(CauseKind.INFRA, "api-overloaded", r"(?i)\boverloaded(?:_error)?\b|" + _HTTP + r"529\b"),
    Pattern(CauseKind.INFRA, "api-rate-limited", r"(?i)\brate[ _-]?limit(?:ed|_error)?\b|RateLimitError|"
                                         r"\b429 Too Many Requests\b|" + _HTTP + r"429\b"),
    Pattern(CauseKind.INFRA, "api-server-error", r"(?i)InternalServerError|\b50[0234] (?:Internal Server Error|"
                                         r"Bad Gateway|Service Unavailable|Gateway Time-?out)\b|"
                                         + _HTTP + r"5\d\d\b|\bapi_error\b"),
    Pattern(CauseKind.INFRA, "out-of-memory", r"\bMemoryError\b|(?i:\bout of memory\b)|Cannot allocate memory|"
                                      r"std::bad_alloc|\bOOM[- ]?kill"),
    Pattern(CauseKind.INFRA, "disk-full", r"No space left on device|\bENOSPC\b|(?i:\bdisk (?:is )?full\b)|"
                                  r"Disk quota exceeded"),
    Pattern(CauseKind.INFRA, "sandbox-failed", r"^bwrap: "),
)


@dataclass
class RunView:
    """What the rules look at: the record (status, checks), the agent's facts, the patterns."""

    record: RunRecord
    facts: AgentFacts
    patterns: tuple[Pattern, ...]
    scarbook_error: str = ""  # scarbook itself failed inside this run (a harness exception)
    judge_aborted: str = ""  # the judge rejected the key: the session stopped here


# A rule's test: the evidence when it holds (or a more specific rule name and the evidence), else None.
Test = Callable[[RunView], str | tuple[str, str] | Cause | None]


@dataclass(frozen=True)
class Rule:
    name: str
    kind: CauseKind | None  # None for the pattern row, whose test gives the whole cause
    test: Test
    means: str  # one line, for `scarbook` docs and --help: when it applies


def _seed(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.SEED else None


def _could_not_start(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.START else None


def _workspace(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.DIFF else None


def _worker_lost(v: RunView) -> str | None:
    return v.facts.error if v.facts.stage == AgentStage.WORKER_LOST else None


def _judge_rejected(v: RunView) -> str | None:
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


def _killed(v: RunView) -> str | None:
    n = v.facts.signal
    if n is None or v.facts.timed_out or n in FAULT_SIGNALS or _self_killed(v) or _unsent(v):
        return None
    why = ""
    if n == SIGKILL:
        oom = v.facts.oom_kills
        why = (f" — the kernel's OOM killer killed {oom} meanwhile" if oom else
               " — the kernel's OOM killer sends it, so do people and supervisors")
    return f"killed by signal {n} ({signal_name(n)}), not by scarbook's timeout{why}"


def _killed_unexplained(v: RunView) -> str | None:
    n = v.facts.signal
    if n is not None and _unsent(v):
        return (f"killed by signal {n} ({signal_name(n)}), which neither scarbook nor a shutdown sent (not "
                f"scarbook's timeout or cancel, and scarbook was not stopped within {v.facts.watched_s:g} s after): "
                "the agent's own doing")
    if not _self_killed(v):
        return None
    return ("killed by signal 9 (SIGKILL), which neither scarbook's timeout nor the kernel's OOM killer sent (its "
            "oom_kill count did not move while the agent ran): the agent's own doing")


def _crashed(v: RunView) -> str | None:
    n = v.facts.signal
    if n is None or v.facts.timed_out or n not in FAULT_SIGNALS:
        return None
    return f"killed by signal {n} ({signal_name(n)}), which its own code raised: the agent crashed"


def _timed_out(v: RunView) -> str | None:
    return f"scarbook's timeout: the agent ran past {v.facts.timeout_s:g}s" if v.facts.timed_out else None


def _exited(v: RunView) -> str | None:
    code = v.facts.exit_code
    if not v.facts.stage and code not in (None, 0) and v.record.status != RunStatus.PASS:
        line = _last_error_line(v.facts.stderr_tail)
        return f"exit code {code}" + (f"; stderr: {line}" if line else "")
    return None


_NOT_EXECUTED = re.compile(r"(?:No such file or directory|: not found|command not found|Permission denied)\s*$")


def _could_not_exec(v: RunView) -> str | None:
    """The program started but could not run what it execs (a shell's 127/126: a version manager's shim
    whose manager the sandbox hides, an interpreter that is not there) and did nothing: it never ran."""
    code, line = v.facts.exit_code, _last_error_line(v.facts.stderr_tail)
    if v.facts.stage or code not in (126, 127) or v.record.diff.changed or v.record.output_excerpt.strip():
        return None
    return f"exit code {code} with nothing done; stderr: {line}" if _NOT_EXECUTED.search(line) else None


def _check_cause(v: RunView) -> tuple[str, str] | None:
    """The check's own rule (check-timed-out, check-could-not-start, check-crashed, check-no-transcript,
    check-no-usage, check-read-cap) and evidence."""
    for c in v.record.checks:
        if c.status in (CheckStatus.FAIL, CheckStatus.ERROR) and c.cause:
            return c.cause.rule, f"check {c.index + 1} ({c.type}): {c.cause.evidence}"
    return None


def _judge_error(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.type == "llm_judge" and c.status == CheckStatus.ERROR:
            return f"check {c.index + 1} (llm_judge): {c.detail}"
    return None


def _contested(v: RunView) -> str | None:
    """A judge FAIL whose samples split: with other samples the run could have passed."""
    for c in v.record.checks:
        if c.type != "llm_judge" or c.status != CheckStatus.FAIL or not c.judge:
            continue
        for item in c.judge.items:
            if item.verdict == Vote.FAIL and len(set(item.votes)) > 1:
                return (f"check {c.index + 1} (llm_judge) item {item.item}: samples split "
                        f"{', '.join(item.votes)} — the majority said FAIL")
    return None


def _check_error(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.status == CheckStatus.ERROR and c.type != "llm_judge":
            return f"check {c.index + 1} ({c.type}): {c.detail}"
    return None


def _judge_fail(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.type == "llm_judge" and c.status == CheckStatus.FAIL:
            return f"check {c.index + 1} (llm_judge): {c.detail}"
    return None


def _check_fail(v: RunView) -> str | None:
    for c in v.record.checks:
        if c.status == CheckStatus.FAIL:
            return f"check {c.index + 1} ({c.type}): {c.detail}"
    return None


def _agent_crashed(v: RunView) -> str | None:
    """The agent did not finish and no other rule said why (an adapter's own failure line)."""
    return v.record.reason if v.record.status == RunStatus.FAIL and not v.record.checks else None


def _scarbook(v: RunView) -> str | None:
    return v.scarbook_error or (v.facts.error if v.facts.stage == AgentStage.SCARBOOK else None)


def _finished_normally(v: RunView) -> bool:
    f = v.facts
    return not f.crashed and not f.timed_out and f.signal is None and f.exit_code == 0


def _match_patterns(v: RunView) -> Cause | None:
    """Only for an agent that did not finish normally (non-zero exit, signal, timeout, its adapter's
    failure): an agent that exited 0 and was wrong failed by itself, whatever its log or transcript
    mention (a task about rate limiting, a 429 it retried past)."""
    if v.facts.stage in (AgentStage.SEED, AgentStage.START) or _finished_normally(v):
        return None  # the agent never ran, or it ran to its end: what it printed is not the machine's
    for source, text in (("stderr", v.facts.stderr_tail), ("transcript", v.facts.transcript_tail)):
        if not text:
            continue
        for p in v.patterns:
            try:  # bounded: a project's pattern that backtracks on the agent's text must not freeze the session
                m = search(p.regex, text, REGEX_TIMEOUT_S)
            except PatternTimedOut:
                continue  # no evidence either way: the run is judged by the rules below
            if m:
                return make_cause(p.kind, p.rule, f"{source}: {_line_at(text, m.start())}")
    return None


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start:end if end >= 0 else len(text)].strip()


# The table. Order matters: what stopped the run first beats what it then looked like (a seed
# that could not be laid is the case's fault whatever the agent printed); the machine's signs
# beat the agent's exit (an agent that died of a 529 exits 1); a check's own breakage beats its
# verdict; a split judge beats its FAIL.
RULES: tuple[Rule, ...] = (
    Rule("seed-not-laid", CauseKind.CASE, _seed, "the case's workspace (its seed) could not be laid"),
    Rule("scarbook-error", CauseKind.INFRA, _scarbook, "scarbook itself failed inside the run (traceback kept)"),
    Rule("agent-could-not-start", CauseKind.INFRA, _could_not_start, "the agent's program could not be started"),
    Rule("workspace-unreadable", CauseKind.INFRA, _workspace, "the run's workspace could not be read back"),
    Rule("worker-lost", CauseKind.INFRA, _worker_lost, "the cluster lost the run's worker or node (twice: the Ray executor "
                                               "retries once itself)"),
    Rule("judge-rejected-key", CauseKind.JUDGE, _judge_rejected, "the judge's API rejected the key"),
    Rule("killed-by-signal", CauseKind.INFRA, _killed, "the agent was killed by a signal from outside that was not "
                                                   "scarbook's timeout, where it may have been the machine's: SIGKILL "
                                                   "while the OOM killer killed (or where that is unknown: macOS, "
                                                   "Windows), any other on a Ray worker's node (whose shutdown this "
                                                   "scarbook cannot see)"),
    Rule("patterns", None, _match_patterns, "a line of the agent's stderr or transcript matched a cause pattern"),
    Rule("agent-crashed", CauseKind.AGENT, _crashed, "the agent died of a signal its own code raised (SIGSEGV, SIGBUS, "
                                                  "SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP)"),
    Rule("agent-killed", CauseKind.AGENT, _killed_unexplained, "the agent died of a signal nobody is known to have sent: "
                                                         "SIGKILL while the kernel's OOM killer killed nothing (Linux: "
                                                         "/proc/vmstat's oom_kill did not move), or SIGTERM, SIGINT, "
                                                         "SIGHUP, ... (any its own code does not raise) with no "
                                                         f"shutdown of scarbook begun within {SHUTDOWN_GRACE_S:g} s "
                                                         "after (one that begins cuts the run: resume runs it again)"),
    Rule("agent-timed-out", CauseKind.AGENT, _timed_out, "the agent ran past the run's timeout"),
    Rule("agent-could-not-exec", CauseKind.INFRA, _could_not_exec, "the agent's program started but could not exec what it "
                                                           "runs (exit 126/127, nothing done): it never ran"),
    Rule("agent-exited", CauseKind.AGENT, _exited, "the agent exited with a non-zero code"),
    Rule("agent-did-not-finish", CauseKind.AGENT, _agent_crashed, "the agent did not finish (its adapter said why)"),
    Rule("check-broke", CauseKind.CASE, _check_cause, "a check itself broke: check-timed-out, check-could-not-start, "
                                               "check-crashed, check-no-transcript, check-no-usage, check-read-cap"),
    Rule("check-error", CauseKind.CASE, _check_error, "a rule check could not reach a verdict"),
    Rule("judge-error", CauseKind.JUDGE, _judge_error, "the judge could not reach a verdict (error, malformed reply)"),
    Rule("judge-contested", CauseKind.JUDGE, _contested, "the judge said FAIL but its samples split"),
    Rule("judge-fail", CauseKind.AGENT, _judge_fail, "the judge said FAIL (its samples agreed)"),
    Rule("check-fail", CauseKind.AGENT, _check_fail, "a rule check said FAIL"),
)

# An older scarbook put a run whose judge checks were skipped under the judge's cause with this rule;
# such a run is nobody's fault (the judge was not asked), so it is counted under no cause.
SKIPPED_RULE = "judge-skipped"


def project_patterns(pairs: Iterable[tuple[str, str]]) -> tuple[Pattern, ...]:
    """scarbook.yaml's `causes:` ((kind, regex) in order, validated by scarbook.config) as patterns,
    each named by where it is written: causes.infra[0], causes.infra[1], causes.case[0]..."""
    seen: dict[str, int] = {}
    out = []
    for kind, regex in pairs:
        i = seen[kind] = seen.get(kind, -1) + 1
        out.append(Pattern(CauseKind(kind), f"causes.{kind}[{i}]", regex))
    return tuple(out)


def all_patterns(project_patterns: Iterable[Pattern] = ()) -> tuple[Pattern, ...]:
    """The project's patterns (scarbook.yaml `causes:`) first, then the built-in ones."""
    return (*project_patterns, *BUILTIN_PATTERNS)


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


def _last_error_line(text: str) -> str:
    return failure_line(text)


def make_cause(kind: CauseKind, rule: str, evidence: str) -> Cause:
    """A cause, its evidence on one line and at most MAX_EVIDENCE characters."""
    evidence = " ".join(str(evidence).split())
    if len(evidence) > MAX_EVIDENCE:
        evidence = evidence[: MAX_EVIDENCE - 1] + "…"
    return Cause(kind, rule, evidence)


def is_infra(record: RunRecord) -> bool:
    return record.cause is not None and record.cause.kind == CauseKind.INFRA


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


def tail_text(data: bytes) -> str:
    return data[-TAIL_BYTES:].decode("utf-8", "replace")
