"""One session: a launch of cases x runs, as session.json keeps it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from scarbook.models.session_parts import (
    AgentEntry,
    BatchRecord,
    Confinement,
    GateRecord,
    RerunLink,
    RunPlace,
    SessionPart,
    ShardHeader,
)
from scarbook.models.words import SessionState

# the parts of session.json typed as records of their own (scarbook/models/session_parts.py)
PARTS: dict[str, type[SessionPart]] = {"gate": GateRecord, "shard": ShardHeader, "rerun_of": RerunLink,
                                       "executor": RunPlace, "batch": BatchRecord, "isolation": Confinement}


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
    # the gate it ran under (scarbook.stats.decisions); None ({}) in a record older than it
    gate: GateRecord | None = None
    note: str = ""
    # a shard's header (`eval --shard`), or a merged session's; None ({}) for a session of its own
    shard: ShardHeader | None = None
    # `eval --rerun` / `scarbook rejudge`: the session it re-ran or graded again; None ({}) for none
    rerun_of: RerunLink | None = None
    # where its runs executed; None ({}) in records written before it was recorded
    executor: RunPlace | None = None
    # eval --judge-batch: what it submitted and its Message Batches; None ({}) for a session judged online
    batch: BatchRecord | None = None
    # what confined its agent (scarbook.run.session.choose_isolation); None ({}) before 25.1 and for a rejudge
    isolation: Confinement | None = None
    # case id -> how many runs of it the session recorded, written when it ends: a read that finds fewer
    # lines (deleted, or left out as forged) marks the case damaged, without a verdict; {} while it runs,
    # and in records written before it was kept (left out of the file then)
    recorded: dict[str, int] = field(default_factory=dict)
    # a session of several agents (`eval --agents`): each agent in order, the baseline first; every run
    # records its agent's name (RunRecord.agent). Empty (and left out of session.json) for one agent
    agents: list[AgentEntry] = field(default_factory=list)

    @property
    def agent_names(self) -> list[str]:
        """The agents' names, baseline first; [] for a session of one agent."""
        return [a.name for a in self.agents]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(replace(self, gate=None, shard=None, rerun_of=None, executor=None, batch=None, isolation=None,
                           agents=[]))
        for key in PARTS:
            part = getattr(self, key)
            d[key] = part.to_dict() if part is not None else {}
        d["state"] = str(self.state)
        if not self.recorded:
            del d["recorded"]
        if self.agents:
            d["agents"] = [a.to_dict() for a in self.agents]
        else:
            del d["agents"]
        return d

    def start_order(self) -> tuple[datetime, str]:
        """Sorts sessions by when they started (then by id: ids made in one second carry milliseconds).
        Not by id alone: a chosen id (`merge --session-id pipe1`) sorts after every generated one. A
        start time that cannot be read sorts first (oldest)."""
        try:
            started = datetime.fromisoformat(self.started_at.replace("Z", "+00:00"))
        except ValueError:
            return datetime.min.replace(tzinfo=UTC), self.id
        return (started if started.tzinfo else started.replace(tzinfo=UTC)), self.id

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionInfo:
        known = cls.__dataclass_fields__
        info = cls(**{k: PARTS[k].read(v) if k in PARTS else v for k, v in d.items() if k in known and k != "agents"})
        info.agents = [AgentEntry.from_dict(a) for a in d.get("agents") or () if isinstance(a, dict)]
        info.state = SessionState.parse(info.state)
        return info
