"""What an llm_judge check keeps of its grading (CheckResult.judge): the verdict of every rubric item,
the model, endpoint and sampling that graded, what it cost, the artifact it saw, the cache and batch it used.

One definition, read by attribute everywhere (the reports, calibration, causes, usage, the TUI).
JSON: the shape history has always held, key for key and in the same order: a record read from a
file is written back as it was read (`keys` remembers which keys it had), including the short forms
of a check still waiting for its Message Batch, a batch request that failed, and a later judge check
a batch graded but that does not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scarbook.models.usage import Usage
from scarbook.models.words import CheckStatus, Vote

# The keys of a graded check, in the order they are written; the last three only when they say something.
GRADED_KEYS = ("verdict", "items", "model", "base_url", "samples", "temperature", "max_tokens", "usage", "calls",
               "retries", "reasks", "artifact", "artifact_excerpt", "prompt_digest", "error")
OPTIONAL_KEYS = ("batch", "cache", "cache_notes")
WAITING = "pending"  # the "batch" value of a check whose Message Batch has not answered yet


def _status(value: Any) -> CheckStatus | None:
    """The overall verdict ("pass", "fail", "error"); None when there is none, or none this version
    knows (the record keeps the word it held: JudgeDetail.unknown)."""
    try:
        return CheckStatus(str(value).lower()) if value is not None else None
    except ValueError:
        return None


def _vote(value: Any) -> Vote | str:
    """A verdict as the judge gave it (PASS/FAIL); a word an older record held is kept as it is."""
    try:
        return Vote(str(value).upper())
    except ValueError:
        return str(value)


@dataclass(frozen=True)
class JudgeItem:
    """One rubric item after the majority over the samples."""

    item: int  # 1-based rubric number
    text: str
    verdict: Vote | str
    reason: str
    votes: tuple[Vote | str, ...] = ()
    reasons: tuple[str, ...] = ()
    id: str = ""  # the item's stable id (models/rubric.py): its figures across history are kept under it

    def to_dict(self) -> dict[str, Any]:
        ident = {"id": self.id} if self.id else {}  # a record from before item ids is written back as it was
        return {"item": self.item, **ident, "text": self.text, "verdict": self.verdict, "reason": self.reason,
                "votes": list(self.votes), "reasons": list(self.reasons)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], position: int = 0) -> JudgeItem:
        """Also an early entry {"index": 0-based, "item": its text} (read by calibration)."""
        if isinstance(d.get("item"), str):
            number, text = int(d.get("index", position)) + 1, str(d["item"])
        else:
            number, text = int(d.get("item", position + 1)), str(d.get("text", ""))
        return cls(number, text, _vote(d.get("verdict", "")), str(d.get("reason", "")),
                   tuple(_vote(v) for v in d.get("votes") or ()), tuple(str(r) for r in d.get("reasons") or ()),
                   str(d.get("id") or ""))


@dataclass(frozen=True)
class JudgedArtifact:
    """Which artifact the judge was shown: "output" or a workspace path, its size, whether it was cut."""

    source: str
    bytes: int = 0
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "bytes": self.bytes, "truncated": self.truncated}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> JudgedArtifact:
        return cls(str(d.get("source", "output")), int(d.get("bytes") or 0), bool(d.get("truncated", False)))


@dataclass(frozen=True)
class CacheUse:
    """Samples the verdict cache answered: no call, no tokens; what they cost when first graded."""

    hits: int
    saved_usd: float
    saved_tokens: int
    graded_at: str | None  # the earliest cached verdict's date

    def to_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "saved_usd": self.saved_usd, "saved_tokens": self.saved_tokens,
                "graded_at": self.graded_at}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CacheUse:
        return cls(int(d.get("hits") or 0), float(d.get("saved_usd") or 0.0), int(d.get("saved_tokens") or 0),
                   d.get("graded_at"))


@dataclass(frozen=True)
class BatchUse:
    """The Message Batch that answered the check's samples: its id and how many of its requests."""

    id: str
    calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "calls": self.calls}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BatchUse:
        return cls(str(d.get("id", "")), int(d.get("calls") or 0))


@dataclass(frozen=True)
class JudgeDetail:
    """The judge's record of one llm_judge check. `verdict` is None when no verdict was reached (`error`
    says why) or is not reached yet (`waiting` for its Message Batch, `ref` names the request)."""

    verdict: CheckStatus | None = None
    items: tuple[JudgeItem, ...] = ()
    model: str = ""
    # where the judge was reached, without secrets (JudgeSettings.recorded_base_url); None: not recorded (as below)
    base_url: str | None = None
    samples: int | None = None  # None: not recorded (a record older than the setting, a short form)
    temperature: float | None = None
    max_tokens: int | None = None
    usage: Usage = field(default_factory=Usage)  # priced: tokens and dollars of every call it made
    calls: int = 0
    retries: int = 0  # the SDK's retries (429, 5xx, overloaded)
    reasks: int = 0  # samples asked again after a malformed reply
    artifact: JudgedArtifact | None = None
    artifact_excerpt: str | None = None  # kept for calibration (a person grades the same text)
    prompt_digest: str | None = None
    error: str | None = None
    batch: BatchUse | None = None
    waiting: bool = False  # sent in a Message Batch that has not answered yet (JSON: "batch": "pending")
    ref: str | None = None  # the waiting request's reference (judge.batch.BatchGrader)
    cache: CacheUse | None = None
    cache_notes: tuple[str, ...] = ()  # damaged cache entries, named
    # the JSON keys this record has, in their order (empty: a graded check's, GRADED_KEYS and the
    # OPTIONAL_KEYS that say something), and keys this version does not know (an older or newer record's)
    keys: tuple[str, ...] = field(default=(), compare=False, repr=False)
    unknown: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def waiting_for(cls, ref: str, model: str, artifact: JudgedArtifact) -> JudgeDetail:
        """A check sent in a Message Batch, waiting for its answer."""
        return cls(model=model, artifact=artifact, waiting=True, ref=ref, keys=("batch", "ref", "model", "artifact"))

    @classmethod
    def failed(cls, why: str) -> JudgeDetail:
        """A check whose batch request could not be answered at all."""
        return cls(error=why, keys=("verdict", "error", "model", "artifact"))

    def spent_only(self) -> JudgeDetail:
        """What a check graded in a batch but not counted (an earlier judge check did not pass) keeps:
        its cost."""
        spent = tuple(k for k in self._keys() if k in ("usage", "calls", "batch"))
        return JudgeDetail(usage=self.usage, calls=self.calls, batch=self.batch, waiting=self.waiting,
                           keys=("verdict", *spent))

    def has(self, key: str) -> bool:
        """Whether the record holds `key` (an older record may lack a setting a newer one writes)."""
        return key in self._keys()

    def _keys(self) -> tuple[str, ...]:
        if self.keys:
            return self.keys
        present = {"batch": self.batch is not None or self.waiting, "cache": self.cache is not None,
                   "cache_notes": bool(self.cache_notes)}
        return GRADED_KEYS + tuple(k for k in OPTIONAL_KEYS if present[k])

    def _value(self, key: str) -> Any:
        if key == "items":
            return [i.to_dict() for i in self.items]
        if key == "usage":
            return self.usage.to_dict()
        if key in ("artifact", "cache"):
            value = getattr(self, key)
            return value.to_dict() if value is not None else None
        if key == "batch":
            return WAITING if self.waiting else self.batch.to_dict() if self.batch is not None else None
        if key == "cache_notes":
            return list(self.cache_notes)
        if key in self.unknown:
            return self.unknown[key]
        return getattr(self, key)

    def to_dict(self) -> dict[str, Any]:
        return {key: self._value(key) for key in self._keys()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> JudgeDetail:
        batch = d.get("batch")
        artifact, cache, usage = d.get("artifact"), d.get("cache"), d.get("usage")
        verdict = _status(d.get("verdict"))
        unknown = {k: v for k, v in d.items() if k not in _KNOWN or (k == "verdict" and v is not None and verdict is None)}
        return cls(
            verdict=verdict,
            items=tuple(JudgeItem.from_dict(e, i) for i, e in enumerate(d.get("items") or ())),
            model=str(d.get("model") or ""),
            base_url=d.get("base_url"),
            samples=d.get("samples"),
            temperature=d.get("temperature"),
            max_tokens=d.get("max_tokens"),
            usage=Usage.from_dict(usage) if isinstance(usage, Mapping) else Usage(),
            calls=int(d.get("calls") or 0),
            retries=int(d.get("retries") or 0),
            reasks=int(d.get("reasks") or 0),
            artifact=JudgedArtifact.from_dict(artifact) if isinstance(artifact, Mapping) else None,
            artifact_excerpt=d.get("artifact_excerpt"),
            prompt_digest=d.get("prompt_digest"),
            error=d.get("error"),
            batch=BatchUse.from_dict(batch) if isinstance(batch, Mapping) else None,
            waiting=batch == WAITING,
            ref=d.get("ref"),
            cache=CacheUse.from_dict(cache) if isinstance(cache, Mapping) else None,
            cache_notes=tuple(str(n) for n in d.get("cache_notes") or ()),
            keys=tuple(d),
            unknown=unknown,
        )


_KNOWN = frozenset((*GRADED_KEYS, *OPTIONAL_KEYS, "ref"))
