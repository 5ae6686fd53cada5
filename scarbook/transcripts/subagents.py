"""A Claude Code subagent's own file (`agent-*.jsonl`, every record a sidechain), read as its conversation
(issue 34.3): its task is the prompt its parent gave it — the parent's Task / Agent call input when the
parent session sits beside it, else its first user message — and its artifact its final answer or the
last file it wrote. A compaction file (Claude Code's auto-compact, `agent-acompact-*`) re-emits the
conversation it summarises, then asks for the summary: the task is that request, the summary the answer.

Where a parent sits: `<project>/<session>/subagents/agent-<id>.jsonl` beside `<project>/<session>.jsonl`
(newer versions), or `<project>/agent-<id>.jsonl` beside the session its records name (older ones).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from scarbook.transcripts.model import Message, Transcript
from scarbook.transcripts.text import between

_COMPACT_PROMPT = re.compile(r"\A\s*Your task is to create a detailed summary of the conversation so far", re.I)
_CALLS = ('"Task"', '"Agent"')


def is_compaction(path: Path | None, agent_id: str | None, t: Transcript) -> bool:
    """Claude Code's auto-compact: `acompact` in its agent id or file name, or a last request that asks for
    the summary of the conversation so far."""
    if (agent_id or "").startswith("acompact") or (path is not None and path.name.startswith("agent-acompact")):
        return True
    last = next((m for m in reversed(t.messages) if m.role == "user" and m.kind == "text"), None)
    return last is not None and bool(_COMPACT_PROMPT.match(last.text))


def parent_session(path: Path | None, session_id: str | None) -> Path | None:
    """The session file a subagent's file belongs to, when it sits beside it."""
    if path is None:
        return None
    candidates = []
    if path.parent.name == "subagents":
        candidates.append(path.parent.parent.with_suffix(".jsonl"))
    if session_id:
        candidates.append(path.parent / f"{session_id.split('#', 1)[0]}.jsonl")
    return next((p for p in candidates if p != path and p.is_file()), None)


def spawn_prompt(parent: Path, agent_id: str) -> str | None:
    """The prompt the parent's Task / Agent call gave the subagent `agent_id`: the call whose result's
    `toolUseResult.agentId` names it. Streamed, and only lines that can hold either are parsed."""
    prompts: dict[str, str] = {}
    needle = f'"{agent_id}"'
    try:
        with parent.open("r", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if needle in line:
                    call_id = _result_of(line, agent_id)
                    if call_id is not None:
                        return prompts.get(call_id)
                elif any(name in line for name in _CALLS):
                    prompts.update(_spawns(line))
    except OSError:
        return None
    return None


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _spawns(line: str) -> dict[str, str]:
    """Task / Agent calls of one assistant record: call id -> prompt."""
    r = _record(line)
    message = r.get("message") if r else None
    content = message.get("content") if isinstance(message, dict) else None
    out: dict[str, str] = {}
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") in ("Task", "Agent") \
                and isinstance(b.get("input"), dict) and isinstance(b["input"].get("prompt"), str):
            out[str(b.get("id"))] = b["input"]["prompt"]
    return out


def _result_of(line: str, agent_id: str) -> str | None:
    """The call id whose result record names `agent_id` as the agent it ran."""
    r = _record(line)
    if not r or not isinstance(r.get("toolUseResult"), dict) or r["toolUseResult"].get("agentId") != agent_id:
        return None
    message = r.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            return str(b.get("tool_use_id"))
    return None


def read_as_subagent(t: Transcript, path: Path | None, session_id: str | None, agent_id: str | None) -> None:
    """Say what the file is and give it its task from the parent when the parent sits beside it."""
    t.parent = parent_session(path, session_id)
    if is_compaction(path, agent_id, t):
        t.compaction = True
        t.warnings.append("a compaction file (Claude Code's auto-compact): the conversation it summarises comes "
                          "first, then the request for the summary; the task is that request, the artifact the summary")
    else:
        t.warnings.append("a subagent's log (every record is a sidechain): the task is its prompt, the artifact "
                          "its answer or the last file it wrote")
        prompt = spawn_prompt(t.parent, agent_id) if t.parent is not None and agent_id else None
        if prompt:
            _set_prompt(t, prompt)
    if t.parent is not None:
        t.warnings.append(f"its parent session sits beside it: {t.parent} (import that to file the session's own "
                          "incident)")


def _set_prompt(t: Transcript, prompt: str) -> None:
    """The prompt the parent gave, as the subagent's first user message (in its place when it has one)."""
    for e in t.entries:
        if isinstance(e, Message) and e.role == "user" and e.kind == "text":
            e.text = prompt
            return
        if isinstance(e, Message) and e.role == "assistant":
            break
    t.entries.insert(0, Message("user", prompt))


def summary_of(answer: str | None) -> str | None:
    """A compaction's answer: the `<summary>` it wrote (its `<analysis>` is the work before it)."""
    if answer is None:
        return None
    summary = between(answer, "<summary>", "</summary>")
    return answer if summary is None else summary
