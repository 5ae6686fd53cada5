"""One JSON document read in pieces: the long lists of a transcript document (a request's `messages`, a
trajectory's steps, an OTLP export's spans) handed over an item at a time, each parsed alone and dropped
once its reader has taken what it needs, so a big document never stands parsed whole in memory.

The file is read a chunk at a time (`_Chunks`): C's JSON decoder (`raw_decode`) parses each value from the
text in hand, and a value cut by the chunk's end is parsed again once more text is in (the chunk grows
to hold it). `walk(path, lists, on_item)` walks the document: a list whose path is in `lists` ("messages",
"request.messages", "resourceSpans.*.scopeSpans.*.spans"; "" the document itself) goes to `on_item`,
every other value is parsed whole and returned in place (a streamed list as `STREAMED`).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHUNK = 1 << 20
# The C scanner raw_decode calls (not in the stubs): (value, end) at a position, StopIteration where none starts.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_WHITESPACE = " \t\n\r"
STREAMED = object()  # in a returned value: a list that was handed over an item at a time


class Broken(ValueError):
    """The document is not JSON (or is cut short) at `pos` characters in."""


class _Chunks:
    def __init__(self, path: Path) -> None:
        self.fh = open(path, "rb")  # noqa: SIM115 — closed by walk()
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf = ""
        self.pos = 0
        self.consumed = 0  # characters dropped from the buffer's front
        self.eof = False
        self.want = CHUNK

    def fill(self) -> bool:
        """More text in the buffer (what was parsed is dropped from its front); False at the end."""
        if self.eof:
            return False
        data = self.fh.read(max(self.want, CHUNK))
        self.want = CHUNK
        text = self.decoder.decode(data, final=not data)
        self.consumed += self.pos
        self.buf = self.buf[self.pos:] + text
        self.pos = 0
        if not data:
            self.eof = True
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end), the position on it."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self.fill():
                return ""

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise Broken(f"expected {char!r} at {self.consumed + self.pos}")
        self.pos += 1

    def value(self) -> Any:
        """The JSON value at the position, parsed whole."""
        self.peek()
        if len(self.buf) - self.pos < CHUNK >> 4 and not self.eof:
            # Read on before the chunk's end cuts the value (most values of a log are far smaller than a sixteenth
            # of a chunk): a cut value is parsed twice, and the decoder's error counts the lines of the whole
            # buffer before it (a 100 MB document paid that a megabyte at a time).
            self.fill()
        while True:
            try:
                try:
                    value, end = _SCAN(self.buf, self.pos)  # (raw_decode's own call, a Python frame less a value)
                except StopIteration as stop:
                    raise json.JSONDecodeError("Expecting value", self.buf, stop.value) from None
            except json.JSONDecodeError as exc:
                if not self.eof and (exc.pos >= len(self.buf) - 8 or exc.msg.startswith("Unterminated")):
                    self.want = 2 * (len(self.buf) - self.pos)  # cut by the chunk's end: read on (doubling, so linear)
                    self.fill()
                    continue
                raise Broken(f"{exc.msg} at {self.consumed + exc.pos}") from None
            except RecursionError:
                raise Broken(f"nested too deeply at {self.consumed + self.pos}") from None
            if end >= len(self.buf) and not self.eof and self.buf[self.pos] not in '"{[':
                self.want = 2 * (len(self.buf) - self.pos)  # a number or literal may go on in the next chunk
                self.fill()
                continue
            self.pos = end
            return value


def walk(path: Path, lists: set[str], on_item: Callable[[str, Any], None]) -> Any:
    """The document at `path`, its lists under `lists` handed to `on_item(list path, item)` one item at a
    time; Broken when it is not JSON or is cut short."""
    chunks = _Chunks(path)
    try:
        if chunks.peek() == "\ufeff":
            chunks.pos += 1
        value = _walk_value(chunks, "", lists, on_item)
        if chunks.peek() != "":
            raise Broken(f"more after the document at {chunks.consumed + chunks.pos}")
        return value
    finally:
        chunks.fh.close()


def _inside(path: str, lists: set[str]) -> bool:
    """A list to stream lies under `path`."""
    prefix = f"{path}." if path else ""
    return any(p.startswith(prefix) for p in lists if p != path)


def _walk_value(chunks: _Chunks, path: str, lists: set[str], on_item: Callable[[str, Any], None]) -> Any:
    char = chunks.peek()
    if char == "[" and path in lists:
        chunks.pos += 1
        if chunks.peek() == "]":
            chunks.pos += 1
            return STREAMED
        while True:
            on_item(path, chunks.value())
            char = chunks.peek()
            chunks.pos += 1
            if char == "]":
                return STREAMED
            if char != ",":
                raise Broken(f"expected ',' or ']' at {chunks.consumed + chunks.pos - 1}")
    if char == "[" and _inside(f"{path}.*" if path else "*", lists):
        chunks.pos += 1
        items: list[Any] = []
        if chunks.peek() == "]":
            chunks.pos += 1
            return items
        while True:
            items.append(_walk_value(chunks, f"{path}.*" if path else "*", lists, on_item))
            char = chunks.peek()
            chunks.pos += 1
            if char == "]":
                return items
            if char != ",":
                raise Broken(f"expected ',' or ']' at {chunks.consumed + chunks.pos - 1}")
    if char == "{" and _inside(path, lists):
        chunks.pos += 1
        obj: dict[str, Any] = {}
        if chunks.peek() == "}":
            chunks.pos += 1
            return obj
        while True:
            if chunks.peek() != '"':
                raise Broken(f"expected a key at {chunks.consumed + chunks.pos}")
            key = chunks.value()
            chunks.take(":")
            obj[key] = _walk_value(chunks, f"{path}.{key}" if path else key, lists, on_item)
            char = chunks.peek()
            chunks.pos += 1
            if char == "}":
                return obj
            if char != ",":
                raise Broken(f"expected ',' or '}}' at {chunks.consumed + chunks.pos - 1}")
    if char == "":
        raise Broken(f"the document ends at {chunks.consumed + chunks.pos}")
    return chunks.value()
