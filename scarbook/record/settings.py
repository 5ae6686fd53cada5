"""The `record:` section of scarbook.yaml (and eval's --record / --replay / --fork-at).

    record: true                                          # record, to the vendors' APIs
    record: {anthropic: http://127.0.0.1:8080, openai: https://api.openai.com/v1, max_body_bytes: 33554432}
    record: {mode: replay, from: SESSION, fork_at: 3}     # answer from SESSION's recordings (the first 3 calls)

Every unknown key or wrong value is a ConfigError naming `record.<key>` and its line.
"""

# No `from __future__ import annotations` here: msgspec reads these Structs' field types the first time
# scarbook.yaml is converted, and a string annotation is compiled and evaluated there, each (issue 38).

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta

from scarbook.fs.settings import Problem, Words, convert

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com/v1"
# A request body over it is refused (413, never forwarded); a response body is recorded up to it (the agent gets all
# of it). 32 MiB: the largest request the Messages API itself takes, so no request it would take is refused.
MAX_BODY_BYTES = 32 * 1024 * 1024
_URL = Annotated[str, Meta(extra={"must": "must be an http(s) URL, got {value!r}"})]


class RecordSettings(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """scarbook.yaml's `record:` section, declared (scarbook/fs/settings.py reads it)."""

    NAME: ClassVar[str] = "record"
    NOT_MAPPING: ClassVar[str] = "record must be true, false or a mapping, got {value!r}"
    NOT_MAPPING_FIX: ClassVar[str] = "write record: true, or record: {anthropic: URL, openai: URL}"

    mode: Annotated[Literal["record", "replay"], Meta(extra={
        "must": "must be 'record' or 'replay', got {value!r}", "fix": "write record: {mode: replay, from: SESSION}"})] = "record"
    # replay: the recorded session (id, label, latest)
    source: str | int | None = msgspec.field(default=None, name="from")
    # replay the first K calls of each run, then go live; None: replay all
    fork_at: Annotated[Annotated[int, Meta(ge=0)] | None, Meta(extra={
        "must": "must be a number of calls (0 or more), got {value!r}",
        "fix": "write record: {mode: replay, from: SESSION, fork_at: 3}"})] = None
    anthropic: _URL = ANTHROPIC  # the real upstreams, where live calls go
    openai: _URL = OPENAI
    max_body_bytes: Annotated[int, Meta(ge=1, extra={"must": "must be a whole number of bytes, got {value!r}",
                                                     "fix": "write record: {max_body_bytes: {default}}"})] = MAX_BODY_BYTES

    def __post_init__(self) -> None:
        for key, default in (("anthropic", ANTHROPIC), ("openai", OPENAI)):
            url = getattr(self, key)
            if not url.startswith(("http://", "https://")):
                raise Problem(key, f"record.{key} must be an http(s) URL, got {url!r}",
                              fix=f"write record: {{{key}: {default}}}")
            msgspec.structs.force_setattr(self, key, url.rstrip("/"))
        if self.source is not None:
            msgspec.structs.force_setattr(self, "source", str(self.source))
        if self.replay and not self.source:
            raise Problem(None, "record.mode: replay needs record.from (the session to replay)",
                          fix="write record: {mode: replay, from: SESSION}")
        if not self.replay and (self.source or self.fork_at is not None):
            raise Problem(None, "record.from and record.fork_at are for record.mode: replay", fix="add mode: replay, or drop them")

    @property
    def replay(self) -> bool:
        return self.mode == "replay"


def parse_record(raw: Any, path: Path, line: int | None = None) -> RecordSettings | None:
    """`record:` as written: true/false, or a mapping of its keys."""
    if raw is None or raw is False:
        return None
    return convert({} if raw is True else raw, RecordSettings, path, line=line)
