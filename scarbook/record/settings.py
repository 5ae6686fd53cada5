"""The `record:` section of scarbook.yaml (and eval's --record / --replay / --fork-at).

    record: true                                          # record, to the vendors' APIs
    record: {anthropic: http://127.0.0.1:8080, openai: https://api.openai.com/v1, max_body_bytes: 33554432}
    record: {mode: replay, from: SESSION, fork_at: 3}     # answer from SESSION's recordings (the first 3 calls)

Every unknown key or wrong value is a ConfigError naming `record.<key>` and its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scarbook.errors import ConfigError
from scarbook.fs.yamlio import line_of

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com/v1"
# A request body over it is refused (413, never forwarded); a response body is recorded up to it (the agent gets all
# of it). 32 MiB: the largest request the Messages API itself takes, so no request it would take is refused.
MAX_BODY_BYTES = 32 * 1024 * 1024
KEYS = ("mode", "from", "fork_at", "anthropic", "openai", "max_body_bytes")


@dataclass
class RecordSettings:
    mode: str = "record"  # or "replay"
    source: str | None = None  # replay: the recorded session (id, label, latest)
    fork_at: int | None = None  # replay the first K calls of each run, then go live; None: replay all
    anthropic: str = ANTHROPIC  # the real upstreams, where live calls go
    openai: str = OPENAI
    max_body_bytes: int = MAX_BODY_BYTES

    @property
    def replay(self) -> bool:
        return self.mode == "replay"


def parse_record(raw: Any, path: Path) -> RecordSettings | None:
    """`record:` as written: true/false, or a mapping of KEYS."""
    if raw is None or raw is False:
        return None
    if raw is True:
        return RecordSettings()
    if not isinstance(raw, dict):
        raise ConfigError(path, f"record must be true, false or a mapping, got {raw!r}", line=line_of(raw),
                          fix="write record: true, or record: {anthropic: URL, openai: URL}")
    for key in raw:
        if key not in KEYS:
            raise ConfigError(path, f"unknown key record.{key}", line=line_of(raw, key),
                              fix=f"record takes: {', '.join(KEYS)}")
    s = RecordSettings()
    mode = raw.get("mode", "record")
    if mode not in ("record", "replay"):
        raise ConfigError(path, f"record.mode must be 'record' or 'replay', got {mode!r}", line=line_of(raw, "mode"),
                          fix="write record: {mode: replay, from: SESSION}")
    s.mode = mode
    for key in ("anthropic", "openai"):
        if key in raw:
            url = raw[key]
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ConfigError(path, f"record.{key} must be an http(s) URL, got {url!r}", line=line_of(raw, key),
                                  fix=f"write record: {{{key}: {ANTHROPIC if key == 'anthropic' else OPENAI}}}")
            setattr(s, key, url.rstrip("/"))
    if "max_body_bytes" in raw:
        cap = raw["max_body_bytes"]
        if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
            raise ConfigError(path, f"record.max_body_bytes must be a whole number of bytes, got {cap!r}",
                              line=line_of(raw, "max_body_bytes"), fix="write record: {max_body_bytes: 33554432}")
        s.max_body_bytes = cap
    if "from" in raw:
        s.source = str(raw["from"])
    if "fork_at" in raw:
        k = raw["fork_at"]
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise ConfigError(path, f"record.fork_at must be a number of calls (0 or more), got {k!r}",
                              line=line_of(raw, "fork_at"), fix="write record: {mode: replay, from: SESSION, fork_at: 3}")
        s.fork_at = k
    if s.replay and not s.source:
        raise ConfigError(path, "record.mode: replay needs record.from (the session to replay)", line=line_of(raw),
                          fix="write record: {mode: replay, from: SESSION}")
    if not s.replay and (s.source or s.fork_at is not None):
        raise ConfigError(path, "record.from and record.fork_at are for record.mode: replay", line=line_of(raw),
                          fix="add mode: replay, or drop them")
    return s
