"""The verdict cache: a judge sample already graded by the same judge is not paid for again.

Key: a digest of everything that decides one sample's verdict — the artifact exactly as the judge
sees it (after truncation, with its label, truncation note and the task when the case shows it), the
rubric items, the judge model, the prompt digest (system prompt, tool, message frame), temperature,
max_tokens and the sample index. The nonce is not in the key: it is fresh per request and changes
nothing the judge is asked.

Storage: one JSON file per key under workspaces/judge-cache/<2 hex>/<key>.json, written atomically
(scarbook.fs.files), so concurrent sessions and a killed scarbook leave either no entry or a whole
one. An entry is trusted only whole: a file that does not parse, names another key, or holds
verdicts that do not fit the rubric is named in a warning and ignored (the judge is asked again and
the entry rewritten), never used in part.

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
from scarbook.judge.verdict import ItemVerdict, MalformedReply, parse_tool_input
from scarbook.models import Usage

FOLDER = "judge-cache"
VERSION = 1
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
    prompt_digest: str
    temperature: float | None
    max_tokens: int
    sample: int

    @property
    def digest(self) -> str:
        blob = json.dumps({"v": VERSION, "artifact": self.artifact, "label": self.artifact_label,
                           "truncation_note": self.truncation_note, "task": self.task, "rubric": list(self.rubric),
                           "model": self.model, "prompt": self.prompt_digest, "temperature": self.temperature,
                           "max_tokens": self.max_tokens, "sample": self.sample},
                          sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class CachedSample:
    verdicts: list[ItemVerdict]
    usage: Usage  # what the original call(s) spent, priced then: what this hit saved
    graded_at: str  # when the original verdict was reached (ISO 8601, UTC)


class VerdictCache:
    """Judge verdicts per sample key, under `folder` (workspaces/judge-cache)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.warnings: list[str] = []  # damaged or unwritable entries, each said once
        self._session = secrets.token_hex(8)  # entries this cache wrote are not served back to it

    def path_for(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, n_items: int) -> CachedSample | None:
        path = self.path_for(key)
        try:
            data = read_regular_bytes(path, limit=_MAX_ENTRY_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._warn(f"judge cache entry {path} could not be read ({describe_os_error(exc)}); ignored")
            return None
        try:
            entry = _parse(data, key, n_items)
        except _Damaged as why:
            self._warn(f"judge cache entry {path} is damaged ({why}); ignored, the judge grades it again")
            return None
        sample, session = entry
        return None if session == self._session else sample  # this session's own: runs stay independent

    def put(self, key: str, verdicts: list[ItemVerdict], usage: Usage, graded_at: str) -> None:
        entry = {
            "version": VERSION,
            "key": key,
            "session": self._session,
            "graded_at": graded_at,
            "usage": usage.to_dict(),
            "items": [{"item": v.item, "verdict": v.verdict, "reason": v.reason} for v in verdicts],
        }
        path = self.path_for(key)
        try:
            # durable=False: an entry lost to power loss is only a verdict paid for again
            atomic_write_bytes(path, json.dumps(entry, ensure_ascii=False).encode("utf-8"), durable=False)
        except OSError as exc:
            self._warn(f"judge cache entry {path} could not be written ({describe_os_error(exc)}); "
                       "verdicts are not cached")

    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


class _Damaged(Exception):
    pass


def _parse(data: bytes, key: str, n_items: int) -> tuple[CachedSample, Any]:
    try:
        entry = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Damaged(f"not JSON: {exc}") from None
    if not isinstance(entry, dict):
        raise _Damaged("not a JSON object")
    if entry.get("version") != VERSION:
        raise _Damaged(f"version {entry.get('version')!r}, expected {VERSION}")
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
