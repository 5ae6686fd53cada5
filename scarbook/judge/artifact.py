"""Read the artifact a judge grades: the agent's final output or one workspace file.

The artifact is what an untrusted agent produced, so reading it is guarded (scarbook.fs.safefs): the
path must stay inside the workspace (no `..`, no absolute path, no symlink anywhere on it, even one
swapped in while it is opened — an agent that links `answer.txt` to ~/.ssh/id_rsa must not get the
key sent to an API), only a regular file is read, binary files are refused, and the size is capped
with a visible truncation note.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scarbook.fs import safefs
from scarbook.models import JudgedArtifact

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
    label: str  # "the agent's final output", "workspace file tmp.txt", "the body of the last X call"
    source: str  # "output", the workspace path, or a tool call's input ("tool:X:body", tool_input.ToolInput)
    size_bytes: int  # full size before truncation
    truncated: bool = False

    def truncation_note(self, cap: int) -> str | None:
        if not self.truncated:
            return None
        return (
            f"[scarbook note, outside the artifact: the artifact is {self.size_bytes} bytes and was "
            f"truncated to its first {cap} bytes; grade what is shown and FAIL items that need the rest.]"
        )

    def describe(self) -> JudgedArtifact:
        """What the judge's record keeps of it (CheckResult.judge.artifact)."""
        return JudgedArtifact(self.source, self.size_bytes, self.truncated)


def read_artifact(source: str, workspace: Path, output: str, max_bytes: int) -> Artifact:
    """The artifact named by a check's `artifact:` field; raises ArtifactRefused with the reason."""
    if source == OUTPUT:
        return text_artifact(output, "the agent's final output", OUTPUT, max_bytes)
    try:
        data, size = safefs.read_file(workspace, source, max_bytes + 1)  # one more: enough to know it is longer
    except safefs.Refused as exc:
        if exc.missing:
            raise ArtifactRefused(f"artifact {source!r} does not exist in the workspace") from None
        raise ArtifactRefused(f"artifact {source!r} not read, nothing sent to the judge: {exc}") from None
    except OSError as exc:
        raise ArtifactRefused(f"artifact {source!r} could not be read: {exc.strerror or exc}") from None
    if _looks_binary(data):
        raise ArtifactRefused(f"artifact {source!r} is a binary file; the judge grades text only")
    text, truncated = _cap(data, max_bytes)
    truncated = truncated or size > max_bytes
    return Artifact(text, f"workspace file {source}", source, size, truncated)


def text_artifact(text: str, label: str, source: str, max_bytes: int) -> Artifact:
    """Text the agent produced outside any file (its final output, a tool call's input), capped."""
    data = text.encode("utf-8", errors="replace")
    shown, truncated = _cap(data, max_bytes)
    return Artifact(shown, label, source, len(data), truncated)


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
