"""Read the artifact a judge grades: the agent's final output or one workspace file.

The artifact is what an untrusted agent produced, so reading it is guarded: the path must stay
inside the workspace (no `..`, no absolute path, no symlink that leads out — an agent that links
`answer.txt` to ~/.ssh/id_rsa must not get the key sent to an API), binary files are refused, and
the size is capped with a visible truncation note.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from scarbook.errors import PathEscapeError
from scarbook.paths import resolve_inside

OUTPUT = "output"
_BINARY_SNIFF = 8192


class ArtifactRefused(Exception):
    """The artifact cannot be judged; `detail` says why in one line (the run fails)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass
class Artifact:
    text: str
    label: str  # "the agent's final output" or "workspace file tmp.txt"
    source: str  # "output" or the workspace path
    size_bytes: int  # full size before truncation
    truncated: bool = False

    def truncation_note(self, cap: int) -> str | None:
        if not self.truncated:
            return None
        return (
            f"[scarbook note, outside the artifact: the artifact is {self.size_bytes} bytes and was "
            f"truncated to its first {cap} bytes; grade what is shown and FAIL items that need the rest.]"
        )

    def describe(self) -> dict[str, object]:
        return {"source": self.source, "bytes": self.size_bytes, "truncated": self.truncated}


def read_artifact(source: str, workspace: Path, output: str, max_bytes: int) -> Artifact:
    """The artifact named by a check's `artifact:` field; raises ArtifactRefused with the reason."""
    if source == OUTPUT:
        data = output.encode("utf-8", errors="replace")
        text, truncated = _cap(data, max_bytes)
        return Artifact(text, "the agent's final output", OUTPUT, len(data), truncated)
    try:
        target = resolve_inside(workspace, source)
    except PathEscapeError as exc:
        raise ArtifactRefused(f"artifact {source!r} not read, nothing sent to the judge: {exc}") from None
    data, size = _read_capped(target, source, max_bytes)
    if _looks_binary(data):
        raise ArtifactRefused(f"artifact {source!r} is a binary file; the judge grades text only")
    text, truncated = _cap(data, max_bytes)
    truncated = truncated or size > max_bytes
    return Artifact(text, f"workspace file {source}", source, size, truncated)


def _read_capped(target: Path, source: str, max_bytes: int) -> tuple[bytes, int]:
    """At most max_bytes + 1 bytes of the file (enough to know it is longer), and its full size."""
    # resolve_inside returned a real path; O_NOFOLLOW refuses it if a symlink was swapped in since.
    # O_NONBLOCK: a FIFO planted by the agent must not hang the harness (it is refused below).
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
    except FileNotFoundError:
        raise ArtifactRefused(f"artifact {source!r} does not exist in the workspace") from None
    except IsADirectoryError:
        raise ArtifactRefused(f"artifact {source!r} is a directory, not a file") from None
    except OSError as exc:
        raise ArtifactRefused(f"artifact {source!r} could not be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise ArtifactRefused(f"artifact {source!r} is a directory, not a file")
        if not stat.S_ISREG(mode):
            raise ArtifactRefused(f"artifact {source!r} is not a regular file")
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return handle.read(max_bytes + 1), info.st_size
    finally:
        if fd >= 0:
            os.close(fd)


def _looks_binary(data: bytes) -> bool:
    head = data[:_BINARY_SNIFF]
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the sniff window is not binary.
        return exc.start < len(head) - 3
    return False


def _cap(data: bytes, max_bytes: int) -> tuple[str, bool]:
    if len(data) <= max_bytes:
        return data.decode("utf-8", errors="replace"), False
    # errors="ignore" only drops a character cut in half at the cap.
    return data[:max_bytes].decode("utf-8", errors="ignore"), True
