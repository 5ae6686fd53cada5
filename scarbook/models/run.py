"""One run: its check results, workspace diff, usage, the agent's result and the record history keeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scarbook.models.judge_detail import JudgeDetail
from scarbook.models.usage import Usage
from scarbook.models.words import CauseKind, CheckStatus, RunStatus


def _fields(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict, one level deep (callers convert nested values themselves)."""
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}


def _known(cls: Any, d: dict[str, Any]) -> dict[str, Any]:
    """The keys of `d` that are fields of `cls` (a newer version's extra keys are not an error)."""
    fields = cls.__dataclass_fields__
    return {k: v for k, v in d.items() if k in fields}


@dataclass(frozen=True)
class Cause:
    """Whose fault a run (or a check) that did not pass is: its kind, the rule that said so and the
    evidence the rule saw (scarbook.run.causes). JSON: {"kind", "rule", "evidence"}."""

    kind: CauseKind
    rule: str
    evidence: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "rule": self.rule, "evidence": self.evidence}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cause:
        return cls(CauseKind(d["kind"]), d["rule"], d["evidence"])

    @classmethod
    def maybe(cls, d: dict[str, Any] | None) -> Cause | None:
        return None if d is None else cls.from_dict(d)


@dataclass
class CheckResult:
    type: str
    status: CheckStatus
    detail: str
    index: int = 0  # position in the case's check list
    judge: JudgeDetail | None = None  # an llm_judge check's grading: per-item verdicts, model, samples, usage
    duration_s: float = 0.0
    # the check itself broke (timed out, could not start, crashed): a cause of kind `case`
    cause: Cause | None = None
    # a trajectory check's failure: the tool call that broke it, {index (from 1), tool, input (an excerpt)}
    call: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == CheckStatus.PASS

    def to_dict(self) -> dict[str, Any]:
        d = _fields(self)
        if self.judge is not None:
            d["judge"] = self.judge.to_dict()
        if self.cause is None:
            del d["cause"]  # most checks: history stays as it was
        else:
            d["cause"] = self.cause.to_dict()
        if self.call is None:
            del d["call"]
        else:
            d["call"] = dict(self.call)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CheckResult:
        d = _known(cls, d)
        d["status"] = CheckStatus(d["status"])
        d["cause"] = Cause.maybe(d.get("cause"))
        d["judge"] = JudgeDetail.from_dict(d["judge"]) if d.get("judge") is not None else None
        return cls(**d)


# A run record keeps at most this many names of each kind of change: an agent that leaves 200,000 files made a
# 42 MB line in history (the checks ran on the whole list before the record is kept).
KEPT_NAMES = 500
CHANGE_KINDS = ("created", "modified", "deleted")


@dataclass
class WorkspaceDiff:
    created: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # kind -> how many names past KEPT_NAMES the record does not keep (written only when some are left out)
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> list[str]:
        return sorted({*self.created, *self.modified, *self.deleted})

    def cap(self, keep: int = KEPT_NAMES) -> None:
        """Keep the first `keep` names of each kind, in place, and count the rest in `left_out`."""
        for kind in CHANGE_KINDS:
            names = getattr(self, kind)
            if len(names) > keep:
                self.left_out[kind] = self.left_out.get(kind, 0) + len(names) - keep
                setattr(self, kind, names[:keep])

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"created": list(self.created), "modified": list(self.modified),
                             "deleted": list(self.deleted)}
        if self.left_out:
            d["left_out"] = dict(self.left_out)
        return d


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


@dataclass(frozen=True)
class Attempt:
    """One attempt of a run retried after the machine failed it (RunRecord.attempts): what it ended
    in and why, and where its workspace and stderr are."""

    attempt: int  # from 1
    status: RunStatus
    reason: str = ""
    cause: Cause | None = None
    exit_code: int | None = None
    started_at: str = ""
    duration_s: float = 0.0
    workspace: str = ""
    stderr_path: str | None = None

    @classmethod
    def of(cls, record: RunRecord, n: int) -> Attempt:
        """Attempt `n` of a run, as its record `record` ended."""
        return cls(n, record.status, record.reason, record.cause, record.exit_code, record.started_at,
                   record.duration_s, record.workspace, record.stderr_path)

    def to_dict(self) -> dict[str, Any]:
        d = _fields(self)
        d["cause"] = self.cause.to_dict() if self.cause is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Attempt:
        d = _known(cls, d)
        d["status"] = RunStatus(d["status"])
        d["cause"] = Cause.maybe(d.get("cause"))
        return cls(**d)


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
    # whose fault a run that did not pass is (run/causes.py); None for a pass
    cause: Cause | None = None
    # a run retried after infra errors: every attempt in order, the last one being this record;
    # empty for a run that ran once
    attempts: list[Attempt] = field(default_factory=list)
    # the artifact each llm_judge check was given, kept for `scarbook rejudge` (judge/artifact_store.py):
    # check index (as a string) -> {"sha256": …}, {"not_kept": why} or {"refused": why}; {} if none was read
    judge_artifacts: dict[str, dict[str, str]] = field(default_factory=dict)
    # a session of several agents (`eval --agents`): the name of the agent that made this run; "" in a
    # session of one agent (and then left out of the record, which stays as it was)
    agent: str = ""
    # a recorded run: "N:sha256" of the N model_call lines the recorder wrote to its transcript (a replay answers
    # from them only if the file still holds them); "" otherwise (and left out of the record)
    recording: str = ""

    def to_dict(self) -> dict[str, Any]:
        # Same result as asdict(), built by hand: asdict() deep-copies value by value and was the
        # largest Python-level cost of recording a run.
        d = _fields(self)
        if not self.agent:
            del d["agent"]
        if not self.recording:
            del d["recording"]
        d["checks"] = [c.to_dict() for c in self.checks]
        d["diff"] = self.diff.to_dict()
        d["agent_usage"] = self.agent_usage.to_dict()
        d["judge_usage"] = self.judge_usage.to_dict()
        d["cause"] = self.cause.to_dict() if self.cause is not None else None
        d["attempts"] = [a.to_dict() for a in self.attempts]
        d["judge_artifacts"] = {i: dict(a) for i, a in self.judge_artifacts.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunRecord:
        """A record from its JSON (history's runs line, a report's run); fields it lacks (an older
        version's) take their defaults, fields this version does not know are left out."""
        d = _known(cls, d)
        d["status"] = RunStatus(d["status"])
        d["checks"] = [CheckResult.from_dict(c) for c in d.get("checks", [])]
        d["diff"] = WorkspaceDiff(**_known(WorkspaceDiff, d.get("diff", {})))
        d["agent_usage"] = Usage.from_dict(d.get("agent_usage", {}))
        d["judge_usage"] = Usage.from_dict(d.get("judge_usage", {}))
        d["cause"] = Cause.maybe(d.get("cause"))
        d["attempts"] = [Attempt.from_dict(a) for a in d.get("attempts", [])]
        return cls(**d)
