"""The parts of a session's record (SessionInfo) that are records of their own: what confined its agents
(`isolation`), where its runs executed (`executor`), the session it re-ran or graded again
(`rerun_of`), the gate it ran under (`gate`), its shard header (`shard`), its Message Batch (`batch`) and,
comparing agents, each of them (`agents`). One definition each, read by attribute.

JSON: session.json's shapes, key for key and in the same order. A part read from a file remembers the
keys it had (`keys`) and any this version does not know (`unknown`), so it is written back as it was
read; a part scarbook builds writes the keys that say something, in the order of its fields. A session
without the part (a record older than it, a rejudge) holds None, written as {} as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, ClassVar

from scarbook.models.words import ExecutorType, GateMode, Isolation, Undecided

PART_LISTS = ("shards", "not_rejudgeable")  # keys whose values are lists of parts
MIXED = "mixed"  # a merged session whose shards differed: each shard's part is in `shards`


def _word(kind: type[StrEnum], value: Any) -> Any:
    """`value` as a member of `kind` when it is one; any other value kept as it is (an older or a
    merged record's word)."""
    try:
        return kind(value)
    except ValueError:
        return value


def _plain(value: Any) -> Any:
    if isinstance(value, SessionPart):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


@dataclass(frozen=True)
class SessionPart:
    """A part of session.json read and written key for key."""

    ALWAYS: ClassVar[tuple[str, ...]] = ()  # keys a built part writes even when they hold None
    WORDS: ClassVar[Mapping[str, type[StrEnum]]] = {}  # keys whose values are state words
    keys: tuple[str, ...] = field(default=(), compare=False, repr=False, kw_only=True)
    unknown: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.name not in ("keys", "unknown"))

    def _keys(self) -> tuple[str, ...]:
        if self.keys:
            return self.keys
        return tuple(k for k in self._names()
                     if k in self.ALWAYS or getattr(self, k) not in (None, (), {}))

    def has(self, key: str) -> bool:
        """Whether the part holds `key` (a read one: as its file had it)."""
        return key in self._keys()

    def updated(self, **changes: Any) -> Any:
        """A copy with `changes`, written as dict.update writes them: a key it had keeps its place, a
        new one goes last."""
        had = self._keys()
        return replace(self, **changes, keys=had + tuple(k for k in changes if k not in had),
                       unknown={k: v for k, v in self.unknown.items() if k not in changes})

    def _value(self, key: str) -> Any:
        value = getattr(self, key)
        if key in PART_LISTS:  # a list of parts: one read from {} is None, written {} again
            return [v.to_dict() if v is not None else {} for v in value or ()] if value is not None else None
        return _plain(value)

    def to_dict(self) -> dict[str, Any]:
        return {k: self.unknown[k] if k in self.unknown else self._value(k) for k in self._keys()}

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        """One known key's JSON value as the field holds it: a state word as its enum, a merge's
        `shards` as parts of this kind."""
        if key in cls.WORDS:
            return _word(cls.WORDS[key], value)
        if key == "shards":
            return tuple(cls.read(s) for s in value or ())
        return value

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Any:
        names = cls._names()
        return cls(**{k: cls._read(k, v) for k, v in d.items() if k in names},
                   keys=tuple(d), unknown={k: v for k, v in d.items() if k not in names})

    @classmethod
    def read(cls, d: Mapping[str, Any] | None) -> Any:
        """session.json's value ({}: the part is not there) as the part, or None."""
        return cls.from_dict(d) if d else None


@dataclass(frozen=True)
class Confinement(SessionPart):
    """What confined a session's agents (scarbook.run.session.choose_isolation): `ran` sandbox or none
    (MIXED for a merge of shards that differed), what was `asked`, the sandbox's `network`, `why` auto fell
    back to none, and `slots`: True when the sandbox held the runs in slots, one bwrap per concurrency slot
    (`isolation: slot`, and `auto` where slots run: agents/slots.py), not one per run."""

    ran: Isolation | str = Isolation.NONE
    asked: Isolation | str | None = None
    network: bool | None = None
    why: str | None = None
    shards: tuple[Confinement | None, ...] = ()
    slots: bool | None = None

    WORDS = {"ran": Isolation, "asked": Isolation}

    @property
    def sandboxed(self) -> bool:
        return self.ran == Isolation.SANDBOX


@dataclass(frozen=True)
class RunPlace(SessionPart):
    """Where a session's runs executed: `type` local or ray (MIXED for a merge of shards that differed),
    and the Ray cluster's `address` (None: a Ray instance started on this machine)."""

    ALWAYS = ("type",)
    WORDS = {"type": ExecutorType}
    type: ExecutorType | str = ExecutorType.LOCAL
    address: str | None = None
    shards: tuple[RunPlace | None, ...] = ()
    rejudge: bool | None = None  # True: a rejudge's pool, which hands back the source's runs

    @classmethod
    def ray(cls, address: str | None) -> RunPlace:
        """A Ray cluster's: its address as written, or None (written as null) for a Ray instance started
        on this machine."""
        return cls(ExecutorType.RAY, address, keys=("type", "address"))


@dataclass(frozen=True)
class NotRejudged(SessionPart):
    """A run a rejudge could not grade again, and why."""

    case: str = ""
    k: int = 0
    why: str = ""


@dataclass(frozen=True)
class RerunLink(SessionPart):
    """The session this one re-ran (`eval --rerun`: which runs `only`, and per case how many matched) or
    graded again (`scarbook rejudge`: `rejudge` true, its judge model, runs regraded and carried, and
    those it could not grade again)."""

    session: str = ""
    rejudge: bool = False
    judge_model: str | None = None
    only: tuple[str, ...] = ()
    cases: Mapping[str, int] = field(default_factory=dict)
    regraded: int | None = None
    carried: int | None = None
    not_rejudgeable: tuple[NotRejudged | None, ...] | None = None

    @classmethod
    def rerun(cls, session: str, only: tuple[str, ...], cases: Mapping[str, int]) -> RerunLink:
        return cls(session, only=only, cases=dict(cases), keys=("session", "only", "cases"))

    @classmethod
    def regrade(cls, session: str, judge_model: str, cases: Mapping[str, int], regraded: int, carried: int,
                not_rejudgeable: tuple[NotRejudged, ...]) -> RerunLink:
        return cls(session, True, judge_model, cases=dict(cases), regraded=regraded, carried=carried,
                   not_rejudgeable=not_rejudgeable,
                   keys=("session", "rejudge", "judge_model", "cases", "regraded", "carried", "not_rejudgeable"))

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        if key == "only":
            return tuple(value or ())
        if key == "not_rejudgeable":
            return tuple(NotRejudged.read(n) for n in value or ())
        return value


def _looks(value: Any) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, list) else ()


def _judge_rates(value: Any) -> Mapping[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _calibration(value: Any) -> Mapping[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) and value else None


@dataclass(frozen=True)
class GateRecord(SessionPart):
    """The gate a session ran under: scarbook.yaml's gate: (mode, alpha, undecided, min_verdicts: None
    for half the runs) as it stood, the run counts it decided at (`looks`: N, or N, 2N, ... under
    `undecided: more`), with --runs auto and a calibrated judge each case's (q0, q1) the rule read
    with, and for a session with a judged case the judge's calibration it was prepared with (`calibration`:
    history/judge_truth.Calibration.to_record, which every report of it corrects and decides with:
    run/gate.replay_calibration). A damaged record's looks or rates read as none (the report then decides
    on the runs alone); a damaged calibration, or none (a session older than it), as history's now."""

    ALWAYS = ("mode", "alpha", "undecided", "min_verdicts", "looks")  # the policy's four keys, then looks
    WORDS = {"mode": GateMode, "undecided": Undecided}
    mode: GateMode | str = GateMode.EVIDENCE
    alpha: float = 0.05
    undecided: Undecided | str = Undecided.PASS
    min_verdicts: int | None = None
    looks: tuple[int, ...] = ()
    judge_rates: Mapping[str, Any] = field(default_factory=dict)
    # a session of several agents (`eval --agents`): gate.compare as it stood, {baseline, margin}; None without
    compare: Mapping[str, Any] | None = None
    calibration: Mapping[str, Any] | None = None
    # --runs auto: "sequential", and each case's threshold its rule decided against (`scarbook resume` goes
    # on with the same rule, or refuses when a threshold moved); None / {} for a fixed N (left out of the file)
    rule: str | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        if key == "thresholds":
            return dict(value) if isinstance(value, Mapping) else {}
        if key == "looks":
            return _looks(value)
        if key == "judge_rates":
            return _judge_rates(value)
        if key == "calibration":
            return _calibration(value)
        return super()._read(key, value)

    def policy(self) -> dict[str, Any]:
        """The policy's own keys as recorded (config.GatePolicy.from_record reads them)."""
        return {k: v for k, v in self.to_dict().items() if k in (*self.ALWAYS[:4], "compare")}


@dataclass(frozen=True)
class ShardHeader(SessionPart):
    """A shard's header (`eval --shard I/N --session-id S`: the session it is a shard of, its index and
    the count, a nonce of its own), or a merged session's (the session, the count, the shards `merged`).
    Its values are kept as read: `scarbook merge` checks that they are what eval writes."""

    session: Any = None
    index: Any = None
    count: Any = None
    nonce: Any = None
    merged: tuple[str, ...] | None = None

    @classmethod
    def of_merge(cls, session: str, merged: tuple[str, ...]) -> ShardHeader:
        return cls(session, count=len(merged), merged=merged, keys=("session", "count", "merged"))

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        if key == "merged":
            return tuple(value) if isinstance(value, list) else value
        return value


@dataclass(frozen=True)
class AgentEntry(SessionPart):
    """One agent of a session of several (`eval --agents`), an item of session.json's `agents` list (the
    baseline first): its `name` (what each of its runs' `agent` says), its `type`, the `fingerprint` of its
    resolved settings and the `label` it ran as ("command: ./agent.sh 9")."""

    ALWAYS = ("name",)
    name: str = ""
    type: str | None = None
    fingerprint: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class BatchRecord(SessionPart):
    """eval --judge-batch: what the session submitted (batch.json's sha256 `digest` and which run each
    request id grades, `runs`), its batches' `ids` (`id`: the first; None until it exists), how many
    `requests`, when each batch's create was `sending` (by its number, before the create: resume looks
    for it) and when the last was `submitted_at`. Built a step at a time (updated()) as it is written."""

    digest: str | None = None
    runs: Mapping[str, Any] | None = None
    id: str | None = None
    ids: tuple[str | None, ...] | None = None
    requests: int | None = None
    sending: Mapping[str, str] | None = None
    submitted_at: str | None = None

    @property
    def batch_ids(self) -> list[str | None]:
        """Each batch's id as recorded (the first alone in a record older than `ids`)."""
        return list(self.ids or [self.id])

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        if key == "ids":
            return tuple(value) if isinstance(value, list) else value
        return value
