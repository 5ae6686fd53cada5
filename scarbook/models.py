"""The nouns of scarbook, as plain dataclasses: Case, Check, Scar, Run, Session.

Everything here is pure data (no I/O) so the CLI, the TUI, history and the judge share one shape.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal


class RunStatus(StrEnum):
    """A run's one status. String values: history, JSON and reports hold the plain words."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # no verdict could be reached (agent or harness trouble, the judge failed)
    # the rule checks passed but a judge check that bears on the verdict was skipped
    # (--skip-judge, or no API key in the TUI): no verdict, counted apart, never in a rate.
    UNJUDGED = "unjudged"

    def __repr__(self) -> str:  # reads as the string it is in messages that quote it ({status!r})
        return repr(self.value)


CheckStatus = Literal["pass", "fail", "error", "skipped"]
RUN_STATUSES: tuple[RunStatus, ...] = tuple(RunStatus)

# The one glyph of each status, run or check (the strip of a case's runs, a run's checks), shared by
# the CLI table, the reports and the TUI.
STATUS_GLYPH: dict[str, str] = {RunStatus.PASS: "✓", RunStatus.FAIL: "✗", RunStatus.ERROR: "!",
                                RunStatus.UNJUDGED: "?", "skipped": "-"}
# Whose fault a run that did not pass is (scarbook.run.causes): the agent's, the machine's, the
# judge's or the case's own.
CAUSE_KINDS = ("agent", "infra", "judge", "case")


class _Word(StrEnum):
    """A word of scarbook.yaml or the command line: reads as the string it is in messages ({x!r})."""

    def __repr__(self) -> str:
        return repr(self.value)


# The words scarbook.yaml's settings take (scarbook/config.py declares where each is used); the order of
# the members is the order messages list them in.
class GateMode(_Word):
    """gate.mode / --gate: how pass rates become the exit code (scarbook.stats.decisions)."""

    EVIDENCE = "evidence"  # a case is red only when its runs show it below its threshold
    POINT = "point"  # red when its rate is below (the seed's rate >= threshold rule)


class Undecided(_Word):
    """gate.undecided / --undecided: what a case the evidence cannot decide does to the gate."""

    FAIL = "fail"  # no verdict: exit 3 (release gates)
    PASS = "pass"  # passes with a warning
    MORE = "more"  # runs again, up to --max-runs, until it decides


class Isolation(_Word):
    """isolation / --isolation: what confines the agent (scarbook.run.session.choose_isolation)."""

    NONE = "none"  # unconfined
    SANDBOX = "sandbox"  # refuse to run without it
    AUTO = "auto"  # the sandbox where it starts, else unconfined and said


class Keep(_Word):
    """keep: which runs' workspaces stay after the session."""

    FAILED = "failed"  # failed and errored runs
    ALL = "all"  # every run (--keep-all)


class SessionState(StrEnum):
    """How a session ended (or that it is still running). Only FINISHED can gate green."""

    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"  # Ctrl-C / Escape: finished runs kept, the rest never ran
    STOPPED_BUDGET = "stopped: budget"  # --max-cost reached
    ABORTED = "aborted"  # the same error would hit every run (the judge rejected the key)
    CRASHED = "crashed"  # an unexpected exception in the runner itself; traceback in crash.txt
    INTERRUPTED = "interrupted"  # its process died without finishing it (read from history)
    # its runs are done, its judge's requests wait in a Message Batch (eval --judge-batch): no verdict
    # until the results are in (`scarbook resume SESSION`); never read by a gate
    JUDGING = "judging"

    def __repr__(self) -> str:  # reads as the string it is in messages that quote it ({state!r})
        return repr(self.value)

    @classmethod
    def parse(cls, value: Any) -> SessionState | str:
        """A known state as the enum; anything else kept as the string it is (old or foreign history)."""
        try:
            return cls(value)
        except ValueError:
            return value


def _fields(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict, one level deep (callers convert nested values themselves)."""
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}


@dataclass
class Check:
    """One check of a case. `params` holds the type's own fields (path, text, rubric, ...)."""

    type: str
    params: dict[str, Any] = field(default_factory=dict)
    line: int | None = None  # line in case.yaml, for error messages

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.params}

    @property
    def is_judge(self) -> bool:
        return self.type == "llm_judge"


@dataclass
class Scar:
    """Evidence of the incident the case was born from."""

    date: str | None = None
    what_went_wrong: str | None = None
    family: str | None = None
    transcript: str | None = None
    failed_artifact: str | None = None
    good_artifact: str | None = None
    artifact_at: str | None = None  # where the artifact belongs: "output" or a workspace path
    # `scarbook verify --reproduce N`: how often the agent reproduced the incident {runs, fails, date, agent, session}
    reproduced: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Case:
    id: str
    task: str
    title: str = ""
    tags: list[str] = field(default_factory=list)
    threshold: float | None = None
    checks: list[Check] = field(default_factory=list)
    scar: Scar | None = None
    seed_files: dict[str, str] = field(default_factory=dict)  # inline `seed:` files: path -> text
    timeout_s: float | None = None
    network: bool | None = None  # with isolation: sandbox, network for this case (None: scarbook.yaml's)
    root: Path | None = None  # the case folder (cases/<id>/)

    @property
    def seed_dir(self) -> Path | None:
        return self.root / "seed" if self.root else None

    @property
    def judge_checks(self) -> list[Check]:
        return [c for c in self.checks if c.is_judge]

    @property
    def rubric_items(self) -> list[str]:
        return [item for c in self.judge_checks for item in c.params.get("rubric", [])]


@dataclass
class CheckResult:
    type: str
    status: CheckStatus
    detail: str
    index: int = 0  # position in the case's check list
    judge: dict[str, Any] | None = None  # per-item verdicts, model, samples, usage (llm_judge)
    duration_s: float = 0.0
    # the check itself broke (timed out, could not start, crashed): {kind: "case", rule, evidence}
    cause: dict[str, str] | None = None
    # a trajectory check's failure: the tool call that broke it, {index (from 1), tool, input (an excerpt)}
    call: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        d = _fields(self)
        if self.judge is not None:
            d["judge"] = copy.deepcopy(self.judge)
        if self.cause is None:
            del d["cause"]  # most checks: history stays as it was
        else:
            d["cause"] = dict(self.cause)
        if self.call is None:
            del d["call"]
        else:
            d["call"] = dict(self.call)
        return d


@dataclass
class FileChange:
    path: str
    kind: Literal["created", "modified", "deleted"]


@dataclass
class WorkspaceDiff:
    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return sorted({*self.created, *self.modified, *self.deleted})

    def to_dict(self) -> dict[str, list[str]]:
        return {"created": list(self.created), "modified": list(self.modified), "deleted": list(self.deleted)}


@dataclass
class Usage:
    """Token counts for one party (agent or judge)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass
class AgentResult:
    """What an agent adapter reports about one run of the agent."""

    output: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    crashed: str | None = None  # why the agent did not finish normally (not a harness error)
    signal: int | None = None  # it was killed by this signal, and not by scarbook's timeout
    stderr_tail: str = ""  # the end of its stderr, as it was printed (for scarbook.run.causes)
    output_truncated: bool = False
    stderr_path: str | None = None
    duration_s: float = 0.0


@dataclass
class RunRecord:
    """One case, once. Exactly one status: pass, fail, error or unjudged."""

    session_id: str
    case_id: str
    k: int
    status: RunStatus
    reason: str  # one line: why this status
    checks: list[CheckResult] = field(default_factory=list)
    output_excerpt: str = ""
    output_truncated: bool = False
    exit_code: int | None = None
    duration_s: float = 0.0
    started_at: str = ""
    workspace: str = ""
    workspace_kept: bool = True
    diff: WorkspaceDiff = field(default_factory=WorkspaceDiff)
    agent_usage: Usage = field(default_factory=Usage)
    judge_usage: Usage = field(default_factory=Usage)
    judge_calls: int = 0
    judge_calls_saved: int = 0  # judge checks not run because a cheaper check failed first
    transcript_path: str | None = None
    stderr_path: str | None = None
    node: dict[str, str] = field(default_factory=dict)  # where it ran on a cluster: id, host, ip, pid
    infra_retries: int = 0  # times it was submitted again because its worker or node was lost
    workspace_note: str = ""  # a remote run: what of its folder came back to the driver (cap reported)
    notes: list[str] = field(default_factory=list)  # warnings about the run, e.g. ignored $SCARBOOK_USAGE values
    # whose fault a run that did not pass is: {kind: agent|infra|judge|case, rule, evidence} (run/causes.py)
    cause: dict[str, str] | None = None
    # a run retried after infra errors: every attempt in order ({attempt, status, reason, cause, ...}),
    # the last one being this record; empty for a run that ran once
    attempts: list[dict[str, Any]] = field(default_factory=list)
    # the artifact each llm_judge check was given, kept for `scarbook rejudge` (judge/artifact_store.py):
    # check index (as a string) -> {"sha256": …}, {"not_kept": why} or {"refused": why}; {} if none was read
    judge_artifacts: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # Same result as asdict(), built by hand: asdict() deep-copies value by value and was the
        # largest Python-level cost of recording a run.
        d = _fields(self)
        d["checks"] = [c.to_dict() for c in self.checks]
        d["diff"] = self.diff.to_dict()
        d["agent_usage"] = self.agent_usage.to_dict()
        d["judge_usage"] = self.judge_usage.to_dict()
        d["cause"] = dict(self.cause) if self.cause is not None else None
        d["attempts"] = [dict(a) for a in self.attempts]
        d["judge_artifacts"] = {i: dict(a) for i, a in self.judge_artifacts.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunRecord:
        d = dict(d)
        d["checks"] = [CheckResult(**c) for c in d.get("checks", [])]
        d["diff"] = WorkspaceDiff(**d.get("diff", {}))
        d["agent_usage"] = Usage(**d.get("agent_usage", {}))
        d["judge_usage"] = Usage(**d.get("judge_usage", {}))
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class SessionInfo:
    """One launch: cases × runs, with a label and the config fingerprint."""

    id: str
    label: str = ""
    started_at: str = ""
    finished_at: str | None = None
    state: SessionState | str = SessionState.RUNNING
    runs_per_case: int = 0
    case_ids: list[str] = field(default_factory=list)
    fingerprint: str = ""
    agent: str = ""
    judge_model: str = ""
    git_revision: str | None = None
    case_digests: dict[str, str] = field(default_factory=dict)  # case id -> digest of its checks
    partial: bool = False  # e.g. --skip-judge: judge items were not graded
    decisions: dict[str, str] = field(default_factory=dict)  # --runs auto: case id -> above/below/undecided
    # the gate it ran under: {mode, alpha, undecided, min_verdicts, looks} (scarbook.stats.decisions)
    gate: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    # a shard (`eval --shard`): {session, index, count}; a merged session: {session, count, merged: [ids]}
    shard: dict[str, Any] = field(default_factory=dict)
    # `eval --rerun`: the session whose cases it re-ran, why, and how many runs matched per case
    rerun_of: dict[str, Any] = field(default_factory=dict)
    # where its runs executed: {"type": "local"} or {"type": "ray", "address": "auto" | "ray://…" | None
    # (a Ray instance started on this machine)}; {} in records written before it was recorded
    executor: dict[str, Any] = field(default_factory=dict)
    # eval --judge-batch: {"id": the Message Batch's id (None until it exists), "requests": how many,
    # "submitted_at"}; {} for a session judged online
    batch: dict[str, Any] = field(default_factory=dict)
    # what confined its agent: {"ran": "sandbox" | "none", "asked": "auto" | "sandbox" | "none", "network":
    # bool (sandbox), "why": str (auto fell back to none)} (scarbook.run.session.choose_isolation); {} before 25.1
    isolation: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["state"] = str(self.state)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionInfo:
        known = cls.__dataclass_fields__
        info = cls(**{k: v for k, v in d.items() if k in known})
        info.state = SessionState.parse(info.state)
        return info
