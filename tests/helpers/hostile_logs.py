"""Real-shaped incident logs with the flaws real files have, written into a test's tmp_path: what a first-week
user brings to `scarbook import` and the import screen."""

from __future__ import annotations

import json
from pathlib import Path


def _record(kind: str, uuid: str, parent: str | None, message: dict, **extra) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/w",
                       "timestamp": "2026-11-20T10:00:00Z", "message": message, **extra})


def _call(n: int, parent: str, tool: str, inputs: dict, result: str, **extra) -> list[str]:
    """An assistant record calling `tool` and the user record with its result: uuids a{n} and r{n}."""
    return [_record("assistant", f"a{n}", parent, {"id": f"m{n}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{n}", "name": tool, "input": inputs}]}),
            _record("user", f"r{n}", f"a{n}", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{n}", "content": result}]}, **extra)]


def _answer(n: int, parent: str, text: str) -> str:
    return _record("assistant", f"a{n}", parent, {"id": f"m{n}", "role": "assistant", "content": [
        {"type": "text", "text": text}]})


def half_emoji_log(path: Path) -> Path:
    """A Claude Code log as Node writes one where it cut text between an emoji's two halves: JSON's lone
    `\\ud83d` escape, in the prompt, a file the task read, a written file, a tool's output and the answer."""
    path.write_text("\n".join([
        _record("user", "u1", None, {"role": "user", "content": "Write the release note \ud83d"}),
        *_call(0, "u1", "Read", {"file_path": "/w/README.md"}, "     1\u2192Hi \ud83d",
               toolUseResult={"type": "text", "file": {"filePath": "/w/README.md", "content": "Hi \ud83d"}}),
        *_call(1, "r0", "Write", {"file_path": "/w/NOTE.md", "content": "Ship \ud83d"}, "wrote \ude00"),
        _answer(2, "r1", "Done \ud83d"),
    ]) + "\n")
    return path


def head_cut_log(path: Path) -> Path:
    """A Claude Code log cut at its head in the middle of a record, as `tail -c 1M session.jsonl` or a rotated copy
    leaves one: its first line is the end of the prompt's record."""
    records = [
        _record("user", "u1", None, {"role": "user", "content": "Write NOTE.md saying we ship on Friday"}),
        *_call(1, "u1", "Write", {"file_path": "/w/NOTE.md", "content": "Ship Monday"}, "File created successfully"),
        _answer(2, "r1", "NOTE.md says we ship on Friday."),
    ]
    path.write_text(records[0][60:] + "\n" + "\n".join(records[1:]) + "\n")
    return path
