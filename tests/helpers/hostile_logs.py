"""Real-shaped incident logs with the flaws real files have, written into a test's tmp_path: what a first-week
user brings to `scarbook import` and the import screen."""

from __future__ import annotations

import json
from pathlib import Path


def _record(kind: str, uuid: str, parent: str | None, message: dict, **extra) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/w",
                       "timestamp": "2026-11-20T10:00:00Z", "message": message, **extra})


def half_emoji_log(path: Path) -> Path:
    """A Claude Code log as Node writes one where it cut text between an emoji's two halves: JSON's lone
    `\\ud83d` escape, in the prompt, a file the task read, a written file, a tool's output and the answer."""
    path.write_text("\n".join([
        _record("user", "u1", None, {"role": "user", "content": "Write the release note \ud83d"}),
        _record("assistant", "a0", "u1", {"id": "m0", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t0", "name": "Read", "input": {"file_path": "/w/README.md"}}]}),
        _record("user", "r0", "a0", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t0", "content": "     1\u2192Hi \ud83d"}]},
            toolUseResult={"type": "text", "file": {"filePath": "/w/README.md", "content": "Hi \ud83d"}}),
        _record("assistant", "a1", "r0", {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/w/NOTE.md", "content": "Ship \ud83d"}}]}),
        _record("user", "u2", "a1", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "wrote \ude00"}]}),
        _record("assistant", "a2", "u2", {"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": "Done \ud83d"}]}),
    ]) + "\n")
    return path
