"""A transcript file, opened once, with its text / JSON / JSON-lines views computed lazily.

Every parser looks at the same `Source`, so detection does not re-read or re-parse a file once per
format tried. A large JSON-lines log (a Claude Code session of tens of MB) is never held whole:
`iter_json_lines` streams it record by record, and the first line alone tells a JSON-lines file
from one JSON document, so detection costs a few kB whatever the size.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from scarbook.transcripts.shape import HEAD_RECORDS, Shape, packing, shape_of

_NOT_JSON = object()
_BAD_FIRST = object()  # JSON lines whose first record does not parse (it is named as a bad line)
HEAD_BYTES = 65536
RECORDS_BYTES = 4 * 1024 * 1024  # detection reads the first records from at most this much of a JSON-lines file
MAX_BAD_SHARE = 100  # a head with more than 1 undecodable byte in this many is binary, not text
MAX_BAD_NAMED = 10_000  # offsets of bad bytes kept at most (the warning shows ten)


_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape spells it


def decode_lenient(data: bytes, base: int, bad: set[int], *, final: bool = True) -> str:
    """UTF-8 `data` as text, each byte that does not decode read as U+FFFD and its offset (from
    `base`) added to `bad` (up to MAX_BAD_NAMED). With `final` False, a multi-byte character cut
    at the end is dropped, not counted. Linear in the size whatever the number of bad bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(data, final=final)
    pos, offset = 0, base
    for m in _ESCAPED.finditer(text):
        if len(bad) >= MAX_BAD_NAMED:
            break
        offset += len(text[pos:m.start()].encode("utf-8", "surrogateescape"))
        bad.add(offset)
        offset, pos = offset + 1, m.end()
    return _ESCAPED.sub("\ufffd", text)


@dataclass
class JsonLines:
    records: list[tuple[int, Any]] = field(default_factory=list)  # (line number, value)
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line number, why)
    truncated_last: bool = False  # the last non-empty line is cut off (a crash mid-write)
    last_line_no: int = 0


def parse_json(text: str | bytes) -> Any:
    """json.loads, with nesting too deep for the parser reported as the ValueError it is."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


@dataclass
class Source:
    path: Path
    size: int = 0
    head: bytes = b""  # the first HEAD_BYTES bytes
    trace: str | None = None  # OTel: the trace the user picked (--trace)
    bad_bytes: set[int] = field(default_factory=set)  # offsets of bytes that are not UTF-8 (read as U+FFFD)

    @classmethod
    def read(cls, path: Path) -> Source:
        """Open `path` for reading; refuse what is not a regular file (a FIFO would block forever)."""
        path = Path(path)
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(path)
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        return cls(path, st.st_size, head)

    @cached_property
    def data(self) -> bytes:
        return self.head if self.size <= len(self.head) else self.path.read_bytes()

    @cached_property
    def is_binary(self) -> bool:
        """NUL bytes in the head, or more than a few bytes there that are not UTF-8 (a few bad bytes
        in a text log are read as U+FFFD and named in a warning; a cut multi-byte character at the
        head's end is not counted)."""
        if b"\x00" in self.head:
            return True
        bad: set[int] = set()
        decode_lenient(self.head, 0, bad, final=self.size <= len(self.head))
        return len(bad) * MAX_BAD_SHARE > max(len(self.head), 8 * MAX_BAD_SHARE)

    @cached_property
    def text(self) -> str | None:
        """The whole file as text, or None when it is binary (see is_binary)."""
        if self.is_binary:
            return None
        data = self.__dict__.get("data") or (self.head if self.size <= len(self.head) else self.path.read_bytes())
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        return decode_lenient(data[bom:] if bom else data, bom, self.bad_bytes)  # the bytes are not kept

    def bad_bytes_warning(self) -> list[str]:
        """One warning naming the bytes that were not UTF-8, or none."""
        if not self.bad_bytes:
            return []
        offsets = sorted(self.bad_bytes)
        shown = ", ".join(str(o) for o in offsets[:10]) + (", …" if len(offsets) > 10 else "")
        n = len(offsets)
        count = f"{n:,}" if n < MAX_BAD_NAMED else f"at least {n:,}"
        return [f"{count} {'byte is' if n == 1 else 'bytes are'} not UTF-8 (at byte offset{'' if n == 1 else 's'} "
                f"{shown}): read as \ufffd, the rest of the file imported"]

    @property
    def is_blank(self) -> bool:
        """Empty, or only whitespace and a byte-order mark."""
        return not self.head.lstrip(b"\xef\xbb\xbf").strip() and self.size <= len(self.head)

    @cached_property
    def _first_line(self) -> Any:
        """The first non-empty line parsed as JSON when more content follows it (so the file is
        not one JSON document), else _NOT_JSON."""
        if self.is_binary:
            return _NOT_JSON
        with open(self.path, "rb") as fh:
            line = fh.readline(RECORDS_BYTES)
            start = 3 if line.startswith(b"\xef\xbb\xbf") else 0
            line = line[start:]
            while line and not line.strip():
                start = fh.tell()
                line = fh.readline(RECORDS_BYTES)
            if line and not line.endswith(b"\n") and not _rest_of_line(fh):
                return _NOT_JSON  # one long line and nothing after it: a document, not JSON lines
            rest = fh.read(4096)
            while rest and not rest.strip():
                rest = fh.read(4096)
        if not rest:
            return _NOT_JSON
        if len(line) >= RECORDS_BYTES and not line.endswith(b"\n"):
            with open(self.path, "rb") as fh:  # JSON lines whose first record is that big: read it whole
                fh.seek(start)
                line = fh.readline()
        try:
            return parse_json(decode_lenient(line, start, set()))
        except ValueError:
            # a record too deep (or damaged) to read, followed by another record: still JSON lines; so is a log
            # whose first line is the end of a record (`tail -c`, a log cut at its head), when a record follows
            if line.rstrip().endswith(b"}") and rest.lstrip().startswith(b"{") and (
                    line.lstrip().startswith(b"{") or self._second_line_is_a_record(start + len(line))):
                return _BAD_FIRST
            return _NOT_JSON

    def _second_line_is_a_record(self, offset: int) -> bool:
        """The first non-empty line from `offset` is a JSON object (read up to RECORDS_BYTES)."""
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            line = fh.readline(RECORDS_BYTES)
            while line and not line.strip():
                line = fh.readline(RECORDS_BYTES)
        try:
            return isinstance(parse_json(decode_lenient(line, offset, set())), dict)
        except ValueError:
            return False

    @property
    def is_json_lines(self) -> bool:
        """The first line is one JSON value and more follows: JSON lines, not one document."""
        return self._first_line is not _NOT_JSON

    @cached_property
    def head_records(self) -> list[Any]:
        """The first JSON lines (at most HEAD_RECORDS, read from at most RECORDS_BYTES), parsed: what
        detection looks at. A line that does not parse is left out (its parser names it)."""
        if not self.is_json_lines:
            return []
        out: list[Any] = []
        read = 0
        with open(self.path, "rb") as fh:
            for raw in fh:
                read += len(raw)
                if len(out) >= HEAD_RECORDS or read > RECORDS_BYTES:
                    break
                if raw.strip():
                    try:
                        out.append(parse_json(decode_lenient(raw.lstrip(b"\xef\xbb\xbf"), 0, set())))
                    except ValueError:
                        continue
        return out

    @cached_property
    def shape(self) -> Shape:
        """What the file looks like from its head alone (scarbook.transcripts.shape)."""
        whole = self.size <= len(self.head)
        if self.is_blank:
            return Shape("empty", whole=whole)
        if self.is_binary:
            return Shape("binary", whole=whole, packed=packing(self.head))
        head = decode_lenient(self.head.lstrip(b"\xef\xbb\xbf"), 0, set(), final=whole)
        if head.lstrip().startswith(("event:", "data:")):
            return shape_of(head, whole=whole, lines=None, sse=True)
        if self.is_json_lines:
            return shape_of(head, whole=whole, lines=self.head_records)
        value = self.json if whole and self.is_json else None
        return shape_of(head, whole_value=value, whole=whole, lines=None)

    @cached_property
    def json_error(self) -> str | None:
        """Why the file is not one JSON document, or None when it is one."""
        if self.is_binary:
            return "the file is not UTF-8 text"
        if self.is_json_lines:
            return "JSON lines, not one JSON document"
        try:
            self.__dict__["_json"] = parse_json(self.text) if self.text is not None else _NOT_JSON
        except ValueError as exc:
            return f"not JSON ({exc})"
        return None if self.text is not None else "the file is not UTF-8 text"

    @property
    def is_json(self) -> bool:
        return self.json_error is None

    @property
    def json(self) -> Any:
        return self.__dict__.get("_json") if self.is_json else None

    def iter_json_lines(self, stats: JsonLines | None = None) -> Iterator[tuple[int, Any]]:
        """Stream (line number, value) for each non-empty line that is JSON, reading the file a
        line at a time. `stats` (when given) collects the bad lines as they go; a bad LAST line is
        a truncation by a crash, not an error."""
        stats = stats if stats is not None else JsonLines()
        if self.is_binary:
            return
        pending: tuple[int, str] | None = None  # a bad line that may turn out to be the last
        seen = 0
        offset = 0
        with open(self.path, "rb") as fh:
            for no, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                if no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw, start = raw[3:], 3
                if not raw or raw.isspace():  # (strip() copied every line)
                    continue
                if pending is not None:
                    stats.bad.append(pending)
                    pending = None
                seen += 1
                stats.last_line_no = no
                try:
                    try:
                        value = json.loads(raw)  # UTF-8 bytes straight in: no decoded copy of the line
                    except UnicodeDecodeError:  # a byte that is not UTF-8: read as U+FFFD, named in a warning
                        value = json.loads(decode_lenient(raw, start, self.bad_bytes))
                except RecursionError:
                    pending = (no, "nested too deeply to read")
                    continue
                except ValueError as exc:
                    pending = (no, str(exc))
                    continue
                yield no, value
        if pending is not None:
            if seen > 1:
                stats.truncated_last = True
            else:
                stats.bad.append(pending)

    @cached_property
    def json_lines(self) -> JsonLines:
        """Every JSON line at once (for the formats whose files are small)."""
        out = JsonLines()
        out.records = list(self.iter_json_lines(out))
        return out

    def objects(self) -> list[dict[str, Any]]:
        """The JSON-lines records that are objects (the shape every JSONL format uses)."""
        return [v for _, v in self.json_lines.records if isinstance(v, dict)]


def _rest_of_line(fh: Any) -> bool:
    """Skip to the end of the line being read, a block at a time (nothing held); True when a newline ends it
    (more may follow), False when the file ends first."""
    while True:
        block = fh.read(65536)
        if not block:
            return False
        newline = block.find(b"\n")
        if newline >= 0:
            fh.seek(newline + 1 - len(block), os.SEEK_CUR)
            return True


class NotARegularFile(OSError):
    """A FIFO, socket or device: reading it could block forever or never end."""


def truncation_warning(jl: JsonLines | Source) -> list[str]:
    if isinstance(jl, Source):
        jl = jl.json_lines
    warnings = []
    if jl.truncated_last:
        warnings.append(f"last line truncated by a crash (line {jl.last_line_no}); it was skipped")
    for no, why in jl.bad:
        warnings.append(f"line {no} is not JSON ({why}); it was skipped")
    return warnings
