"""The verdict cache: a judge sample already graded by the same judge is not paid for again.

Key: a digest of everything that decides one sample's verdict — the artifact exactly as the judge
sees it (after truncation, with its label, truncation note and the task when the case shows it), the
rubric items, the judge model, where it is reached (base_url as a run's judge record keeps it, without
user:password, query or fragment: another vendor's endpoint may grade the same model name otherwise), the
prompt digest (system prompt, tool, message frame), temperature, max_tokens and the sample index. The
nonce is not in the key: it is fresh per request and changes nothing the judge is asked. (An entry written
before base_url was part of the key hashes to another key: a quiet miss, graded again and rewritten.)

Storage: one JSON file per key under workspaces/judge-cache/<2 hex>/<key>.json, written atomically
(scarbook.fs.files), so concurrent sessions and a killed scarbook leave either no entry or a whole
one. An entry is trusted only whole: a file that does not parse, whose inputs (the artifact's hash,
the rubric, model and settings, kept in it) do not hash to the key it claims or that names another
key, or holds verdicts that do not fit the rubric, is named in a warning and ignored (the judge is
asked again and the entry rewritten), never used in part. Which entries a session may read at all
(an unconfined agent can write them) is cache_trust.py's to say: a sandboxed session never uses one
written while an unconfined agent ran.

Only verdicts from earlier sessions are served: the runs of one session stay independent samples of
the judge (what a session measures), so a second eval of unchanged artifacts costs nothing, while
the N runs of one eval are graded as before.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scarbook.fs.files import atomic_write_bytes, describe_os_error, read_regular_bytes
from scarbook.judge.cache_trust import UNCONFINED, Window, changed_since, open_since
from scarbook.judge.verdict import ItemVerdict, MalformedReply, parse_tool_input
from scarbook.models import Usage

FOLDER = "judge-cache"
VERSION = 2  # 2: an entry keeps the inputs its key is the hash of (1's entries are a quiet miss, rewritten)
_MAX_ENTRY_BYTES = 1_000_000
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")


@dataclass(frozen=True)
class SampleKey:
    """What decides one judge sample; `digest` is the cache key."""

    artifact: str
    artifact_label: str
    truncation_note: str | None
    task: str | None
    rubric: tuple[str, ...]
    model: str
    base_url: str  # JudgeSettings.recorded_base_url(): where the judge is reached, without secrets
    prompt_digest: str
    temperature: float | None
    max_tokens: int
    sample: int

    def inputs(self) -> dict[str, Any]:
        """What the key is the hash of, as an entry keeps it (the artifact and task by their hashes)."""
        return {"artifact_sha256": _sha256(self.artifact), "label": self.artifact_label,
                "truncation_note": self.truncation_note, "task_sha256": None if self.task is None else _sha256(self.task),
                "rubric": list(self.rubric), "model": self.model, "base_url": self.base_url,
                "prompt": self.prompt_digest, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "sample": self.sample}

    @property
    def digest(self) -> str:
        return digest_of(self.inputs())


def digest_of(inputs: Any) -> str:
    """The cache key of a sample's inputs (SampleKey.inputs())."""
    blob = json.dumps({"v": VERSION, "inputs": inputs}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class CachedSample:
    verdicts: list[ItemVerdict]
    usage: Usage  # what the original call(s) spent, priced then: what this hit saved
    graded_at: str  # when the original verdict was reached (ISO 8601, UTC)


class VerdictCache:
    """Judge verdicts per sample key, under `folder` (workspaces/judge-cache). `confined`: this session's
    agents run in the sandbox — it reads and writes only the part no unconfined session wrote
    (cache_trust.py); otherwise it reads both parts and writes the unconfined one."""

    def __init__(self, folder: Path, *, confined: bool = False) -> None:
        self.folder = Path(folder)
        self.confined = confined
        self.window: Window | None = None  # this session's own, while its unconfined agents run (the runner's)
        self.warnings: list[str] = []  # damaged or unwritable entries, each said once
        self._session = secrets.token_hex(8)  # entries this cache wrote are not served back to it

    def path_for(self, key: str, part: Path | None = None) -> Path:
        return (part or self._written_part) / key[:2] / f"{key}.json"

    @property
    def _written_part(self) -> Path:
        return self.folder if self.confined else self.folder / UNCONFINED

    def get(self, key: SampleKey, n_items: int) -> CachedSample | None:
        digest = key.digest
        since = self._suspect_since()
        for part in ([self.folder] if self.confined else [self.folder / UNCONFINED, self.folder]):
            path = self.path_for(digest, part)
            try:
                data = read_regular_bytes(path, limit=_MAX_ENTRY_BYTES)
            except FileNotFoundError:
                continue
            except OSError as exc:
                self._warn(f"judge cache entry {path} could not be read ({describe_os_error(exc)}); ignored")
                continue
            if since is not None and changed_since(path, since, root=self.confined):
                continue  # changed while an unconfined agent ran: not used
            try:
                entry = _parse(data, digest, n_items)
            except _Old:
                continue
            except _Damaged as why:
                self._warn(f"judge cache entry {path} is damaged ({why}); ignored, the judge grades it again")
                continue
            sample, session = entry
            return None if session == self._session else sample  # this session's own: runs stay independent
        return None

    def put(self, key: SampleKey, verdicts: list[ItemVerdict], usage: Usage, graded_at: str) -> None:
        digest = key.digest
        entry = {
            "version": VERSION,
            "key": digest,
            "inputs": key.inputs(),
            "session": self._session,
            "graded_at": graded_at,
            "usage": usage.to_dict(),
            "items": [{"item": v.item, "verdict": v.verdict, "reason": v.reason} for v in verdicts],
        }
        path = self.path_for(digest)
        try:
            # durable=False: an entry lost to power loss is only a verdict paid for again
            atomic_write_bytes(path, json.dumps(entry, ensure_ascii=False).encode("utf-8"), durable=False)
        except OSError as exc:
            self._warn(f"judge cache entry {path} could not be written ({describe_os_error(exc)}); "
                       "verdicts are not cached")

    def _suspect_since(self) -> int | None:
        """Entries changed at this time or later are not used: an unconfined session (this one, or
        another still running in the project) had agents that could write them."""
        times = [t for t in (open_since(self.folder), self.window.since_ns if self.window else None) if t is not None]
        return min(times) if times else None

    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


class _Old(Exception):
    """An entry of an earlier version: a quiet miss (the judge's answer rewrites it)."""


class _Damaged(Exception):
    pass


def _parse(data: bytes, key: str, n_items: int) -> tuple[CachedSample, Any]:
    try:
        entry = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Damaged(f"not JSON: {exc}") from None
    if not isinstance(entry, dict):
        raise _Damaged("not a JSON object")
    if entry.get("version") == 1:
        raise _Old
    if entry.get("version") != VERSION:
        raise _Damaged(f"version {entry.get('version')!r}, expected {VERSION}")
    if digest_of(entry.get("inputs")) != entry.get("key"):
        raise _Damaged("its inputs do not hash to the key it claims")
    if entry.get("key") != key:
        raise _Damaged("it names another key")
    graded_at = entry.get("graded_at")
    if not isinstance(graded_at, str) or not graded_at:
        raise _Damaged("no graded_at date")
    usage = entry.get("usage")
    if not isinstance(usage, dict):
        raise _Damaged("no usage")
    numbers: dict[str, Any] = {}
    for name in _USAGE_FIELDS:
        value = usage.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
            raise _Damaged(f"usage {name} is {value!r}")
        numbers[name] = float(value) if name == "cost_usd" else int(value)
    try:
        verdicts = parse_tool_input({"items": entry.get("items")}, n_items)
    except MalformedReply as bad:
        raise _Damaged(f"verdicts: {bad}") from None
    return CachedSample(verdicts, Usage(**numbers), graded_at), entry.get("session")
