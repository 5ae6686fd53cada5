"""A transcript file read once, with its JSON / JSON-lines views computed lazily.

Every parser looks at the same `Source`, so detection does not re-read or re-parse a large file
once per format tried.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

_NOT_JSON = object()


@dataclass
class JsonLines:
    records: list[tuple[int, Any]] = field(default_factory=list)  # (line number, value)
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, why)
    truncated_last: bool = False  # the last non-empty line is cut off (a crash mid-write)
    last_line_no: int = 0


@dataclass
class Source:
    path: Path
    data: bytes

    @classmethod
    def read(cls, path: Path) -> "Source":
        return cls(Path(path), Path(path).read_bytes())

    @cached_property
    def text(self) -> str | None:
        """The file as text, or None when it is binary (NUL bytes or not UTF-8)."""
        if b"\x00" in self.data[:65536]:
            return None
        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None

    @cached_property
    def _json(self) -> Any:
        if self.text is None:
            return _NOT_JSON
        try:
            return json.loads(self.text)
        except ValueError:
            return _NOT_JSON

    @property
    def is_json(self) -> bool:
        return self._json is not _NOT_JSON

    @property
    def json(self) -> Any:
        return None if self._json is _NOT_JSON else self._json

    @cached_property
    def json_lines(self) -> JsonLines:
        """Each non-empty line parsed as JSON. A bad last line is a truncation, not an error."""
        out = JsonLines()
        if self.text is None:
            return out
        lines = self.text.splitlines()
        numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
        for k, (no, line) in enumerate(numbered):
            try:
                out.records.append((no, json.loads(line)))
            except ValueError as exc:
                if k == len(numbered) - 1 and k > 0:
                    out.truncated_last = True
                else:
                    out.bad.append((no, str(exc)))
            out.last_line_no = no
        return out

    def objects(self) -> list[dict[str, Any]]:
        """The JSON-lines records that are objects (the shape every JSONL format uses)."""
        return [v for _, v in self.json_lines.records if isinstance(v, dict)]


def truncation_warning(src: Source) -> list[str]:
    jl = src.json_lines
    warnings = []
    if jl.truncated_last:
        warnings.append(f"last line truncated by a crash (line {jl.last_line_no}); it was skipped")
    for no, why in jl.bad:
        warnings.append(f"line {no} is not JSON ({why}); it was skipped")
    return warnings


def first_json_error(src: Source) -> str:
    """Why the file is not JSON, in a few words for the detection error."""
    if src.text is None:
        return "the file is not UTF-8 text"
    try:
        json.loads(src.text)
    except ValueError as exc:
        return f"not JSON ({exc})"
    return "is JSON"


def json_line_objects(src: Source) -> list:
    """The JSON-lines records of `src`, or NotThisFormat saying why it is not JSON lines."""
    from scarbook.transcripts.model import NotThisFormat

    if src.text is None:
        raise NotThisFormat("the file is not UTF-8 text")
    records = src.objects()
    if not records:
        raise NotThisFormat("not JSON lines")
    bad = src.json_lines.bad
    if len(bad) >= len(records):
        raise NotThisFormat(f"line {bad[0][0]} is not JSON")
    return records
