"""The artifacts the judge saw, kept so a session can be graded again without its agent (`scarbook rejudge`).

What is kept is the artifact exactly as the judge sees it: its text after the judge's cap
(judge.max_artifact_bytes), its label, where it came from, its full size and whether it was cut.
Content-addressed: the file is workspaces/judge-artifacts/<2 hex>/<sha256>.json, the sha256 of that
content, so N identical artifacts (the runs of a deterministic agent) are stored once. Written
atomically (scarbook.fs.files) and never rewritten: an entry that exists is whole. One read back is
trusted only when its content hashes to its name; a damaged entry is named, never used in part.

Size cap: an artifact above KEEP_MAX_BYTES (after the judge's cap) is not kept; its run is listed
as not re-judgeable. `judge.keep_artifacts: false` keeps none.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from scarbook.fs.files import atomic_write_bytes, describe_os_error, read_regular_bytes
from scarbook.judge.artifact import Artifact

FOLDER = "judge-artifacts"
VERSION = 1
KEEP_MAX_BYTES = 1_000_000


def _content(artifact: Artifact) -> bytes:
    return json.dumps({"v": VERSION, "text": artifact.text, "label": artifact.label, "source": artifact.source,
                       "bytes": artifact.size_bytes, "truncated": artifact.truncated},
                      sort_keys=True, ensure_ascii=False).encode("utf-8")


def artifact_digest(artifact: Artifact) -> str:
    """The sha256 of the artifact as the judge sees it (after truncation): its name in the store."""
    return hashlib.sha256(_content(artifact)).hexdigest()


class NotKept(Exception):
    """An artifact the store has not (any more), or cannot give back whole; str() says why."""


class ArtifactStore:
    """Kept artifacts under `folder` (workspaces/judge-artifacts)."""

    def __init__(self, folder: Path, max_bytes: int = KEEP_MAX_BYTES) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes

    def path_for(self, digest: str) -> Path:
        return self.folder / digest[:2] / f"{digest}.json"

    def keep(self, artifact: Artifact) -> dict[str, str]:
        """Keep `artifact` (once per content); what the run records of it: {"sha256"} or {"not_kept": why}."""
        data = _content(artifact)
        if len(data) > self.max_bytes:
            return {"not_kept": f"the artifact is {len(data)} bytes as kept, over the {self.max_bytes}-byte keep cap"}
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_for(digest)
        if path.is_file():
            return {"sha256": digest}
        try:
            # durable=False: an artifact lost to power loss only makes its run not re-judgeable
            atomic_write_bytes(path, data, durable=False)
        except OSError as exc:
            return {"not_kept": f"{path} could not be written ({describe_os_error(exc)})"}
        return {"sha256": digest}

    def load(self, digest: str) -> Artifact:
        """The kept artifact named `digest`; raises NotKept saying why it cannot be had."""
        path = self.path_for(digest)
        try:
            data = read_regular_bytes(path, limit=self.max_bytes + 1)
        except FileNotFoundError:
            raise NotKept(f"its artifact {digest[:12]} is no longer in {self.folder}") from None
        except OSError as exc:
            raise NotKept(f"its artifact {path} could not be read ({describe_os_error(exc)})") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise NotKept(f"its artifact {path} is damaged (its content does not match its name)")
        try:
            entry = json.loads(data.decode("utf-8"))
            return Artifact(entry["text"], entry["label"], entry["source"], int(entry["bytes"]),
                            bool(entry["truncated"]))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise NotKept(f"its artifact {path} is damaged ({exc})") from None

    def copy_from(self, other: ArtifactStore, digest: str) -> str:
        """Bring artifact `digest` from `other` (a shard machine's store) unless this store has it: "" when it
        is here, else why not. Only a whole entry is copied (its content hashes to its name)."""
        path, source = self.path_for(digest), other.path_for(digest)
        if path.is_file():
            return ""
        try:
            data = read_regular_bytes(source, limit=self.max_bytes + 1)
        except OSError as exc:
            return f"{source} could not be read ({describe_os_error(exc)})"
        if hashlib.sha256(data).hexdigest() != digest:
            return f"{source} is damaged (its content does not match its name)"
        try:
            atomic_write_bytes(path, data, durable=False)
        except OSError as exc:
            return f"{path} could not be written ({describe_os_error(exc)})"
        return ""

    def count(self) -> int:
        return sum(1 for _ in self.folder.glob("*/*.json"))
