"""Events the session runner yields. The CLI prints them; the TUI turns them into messages."""

from __future__ import annotations

from dataclasses import dataclass, field

from scarbook.models import Cause, CheckResult, RunRecord, SessionInfo


@dataclass
class SessionStarted:
    session: SessionInfo
    planned_runs: int
    stale_killed: list[str] = field(default_factory=list)  # processes a killed scarbook left, killed now
    notes: list[str] = field(default_factory=list)  # said once: rubric item ids not written to case.yaml


@dataclass
class LookMade:
    """A look (`undecided: more`, or the looks of a session of several agents) left `cases` undecided and
    more of their runs start, each to `runs`: the session now plans `planned_runs` runs in all
    (SessionStarted counted the first look's)."""

    session_id: str
    planned_runs: int
    cases: tuple[str, ...]
    runs: int


@dataclass
class RunStarted:
    session_id: str
    case_id: str
    k: int
    workspace: str


@dataclass
class CheckDone:
    session_id: str
    case_id: str
    k: int
    result: CheckResult


@dataclass
class RunFinished:
    run: RunRecord


@dataclass
class RunRetried:
    """A run the machine failed (cause infra) starts again (`--retry-infra`): its attempt number
    `attempt` of at most `of`, and the cause of the attempt before it. Its RunStarted is not sent
    again (the run was counted as started); its RunFinished comes once, after its last attempt."""

    session_id: str
    case_id: str
    k: int
    attempt: int
    of: int
    cause: Cause | None


@dataclass
class CaseDecided:
    """Adaptive N (`--runs auto`), or a look of `undecided: more` (above or below only): the evidence has
    decided this case; no more runs of it start. In a session of several agents, one per candidate's
    comparison of the case decided at a look."""

    session_id: str
    case_id: str
    decision: str  # "above" | "below" | "undecided"; a session of several agents: better/worse/same (Versus)
    runs: int
    candidate: str = ""  # a session of several agents: whose comparison with the baseline was decided
    # --runs auto: the decision in words that name the margin it was taken with (run/gate.adaptive_words)
    words: str = ""


@dataclass
class BatchProgress:
    """eval --judge-batch: the judge's Message Batch was submitted, or moved on (`done` of `submitted`)."""

    session_id: str
    batch_id: str
    submitted: int
    done: int
    status: str  # in_progress | canceling | ended


@dataclass
class SessionFinished:
    session: SessionInfo
    runs: list[RunRecord] = field(default_factory=list)


Event = (SessionStarted | RunStarted | CheckDone | RunRetried | RunFinished | CaseDecided | BatchProgress
         | SessionFinished)
