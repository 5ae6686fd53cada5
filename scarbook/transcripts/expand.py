"""Compressed input, expanded with a cap: a decompression bomb is refused, never expanded.

A hostile log can hold a member that expands a thousandfold (1 MB of deflate, 33 KB of zstd, each
to 2 GB). Whatever decompresses an input file here reads it through `read_expanded`, which stops
once the output passes the member's allowance and raises `TooExpanded`: at most MAX_EXPANDED bytes,
and at most RATIO times the compressed size (a member may always reach RATIO_FLOOR; real logs of
repeated JSON compress well, but not 200-fold past that).
"""

from __future__ import annotations

from typing import Protocol

MAX_EXPANDED = 256 << 20  # bytes one compressed member may expand to
RATIO = 200  # ... and at most this many times its compressed size,
RATIO_FLOOR = 32 << 20  # once it is bigger than this
CHUNK = 1 << 20


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class TooExpanded(ValueError):
    """A member expands past its allowance; the message says how far it got and the bound."""


def allowance(compressed: int) -> int:
    """The most bytes a member `compressed` bytes long may expand to."""
    return min(MAX_EXPANDED, max(RATIO_FLOOR, RATIO * max(compressed, 0)))


def refusal(name: str, compressed: int, expanded: int) -> str:
    """Why member `name` is refused (it expands to more than `expanded` bytes)."""
    if expanded > MAX_EXPANDED:
        return f"{name} expands to more than {MAX_EXPANDED:,} bytes, the most scarbook expands one member to"
    return (f"{name} expands more than {RATIO}-fold ({compressed:,} bytes to more than {expanded:,}): "
            "a decompression bomb, not a log")


def check_declared(name: str, compressed: int, declared: int) -> None:
    """Refuse before reading when the archive itself says the member expands past its allowance."""
    if declared > allowance(compressed):
        raise TooExpanded(refusal(name, compressed, declared))


def read_expanded(stream: Readable, name: str, compressed: int) -> bytes:
    """All of `stream` (a decompressing reader), or TooExpanded once it passes the allowance."""
    limit = allowance(compressed)
    parts: list[bytes] = []
    got = 0
    while chunk := stream.read(min(CHUNK, limit + 1 - got)):
        parts.append(chunk)
        got += len(chunk)
        if got > limit:
            raise TooExpanded(refusal(name, compressed, got - 1))
    return b"".join(parts)
