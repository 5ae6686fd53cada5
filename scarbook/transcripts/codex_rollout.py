"""OpenAI Codex CLI session logs: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, what Codex keeps
for every session (interactive or `codex exec`).

Each line is `{"timestamp", "type", "payload"}`: `session_meta` (the session's id and cwd),
`turn_context` (the model, the cwd of each turn), `response_item` (the conversation itself, as
OpenAI Responses API items: messages, reasoning, `function_call` / `function_call_output`,
`custom_tool_call` such as `apply_patch`) and `event_msg` (what the UI showed: the same messages
again, and `token_count` with the session's running usage). Response items build the timeline;
event messages give the usage, and the messages when no response item holds any. Codex's own context
messages (`<environment_context>`, `<user_instructions>`) are system messages, not the task. A file an
`apply_patch` adds (`*** Add File:`) is a file write with its content; updates are kept as calls only.
A spawned agent's rollout (`session_meta.source.subagent`) starts with its parent's history, forked:
the user messages from before the thread began are the parent's, context, not its task. The older
rollout shape is a `{id, timestamp}` header, then bare Responses items.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import Message, ToolCall, ToolResult, Transcript, date_of
from scarbook.transcripts.openai import ITEM_TYPES, add_item
from scarbook.transcripts.source import JsonLines, Source, truncation_warning

RECORD_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")
_ADD_FILE = re.compile(r"^\*\*\* Add File: (.+)$")


def is_rollout_record(r: Any) -> bool:
    return isinstance(r, dict) and isinstance(r.get("type"), str) and r["type"] in RECORD_TYPES \
        and isinstance(r.get("payload"), dict)


def is_legacy_rollout(records: list[Any]) -> bool:
    """The older rollout: a `{id, timestamp}` header line (perhaps `instructions`, `git`), then bare
    Responses API items and `{record_type: state}` lines."""
    head = records[0] if records else None
    if not (isinstance(head, dict) and {"id", "timestamp"} <= set(head) and "type" not in head):
        return False
    return any(isinstance(r, dict) and (isinstance(r.get("type"), str) and r["type"] in ITEM_TYPES
                                        or r.get("record_type") == "state")
               for r in records[1:6])


def _added_files(patch: str) -> list[tuple[str, str]]:
    """(path, content) of each file an apply_patch adds."""
    out: list[tuple[str, str]] = []
    current: tuple[str, list[str]] | None = None
    for line in patch.splitlines():
        m = _ADD_FILE.match(line)
        if m:
            current = (m.group(1).strip(), [])
            out.append((current[0], ""))
            continue
        if line.startswith("*** "):
            current = None
        elif current is not None and line.startswith("+"):
            current[1].append(line[1:])
            out[-1] = (current[0], "\n".join(current[1]) + "\n")
    return out


def _output(raw: Any) -> tuple[str, bool]:
    """A tool output's text and whether it failed: Codex wraps it as a JSON string
    {"output": ..., "metadata": {"exit_code": N}} (newer versions write the text alone)."""
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    try:
        value = json.loads(text)
    except ValueError:
        return text, False
    if isinstance(value, dict) and isinstance(value.get("output"), str):
        code = (value.get("metadata") or {}).get("exit_code")
        return value["output"], isinstance(code, int) and code != 0
    return text, False


def _item(t: Transcript, item: dict[str, Any]) -> None:
    kind = item.get("type")
    if kind == "message" and item.get("role") == "user":
        before = len(t.entries)
        add_item(t, item)
        for e in t.entries[before:]:
            if isinstance(e, Message) and e.text.lstrip().startswith(_CONTEXT):
                e.role = "system"  # what Codex tells the model about the session, not the user's words
        return
    if kind == "function_call" and item.get("name") == "shell":
        cid = str(item.get("call_id") or item.get("id") or "")
        try:
            args = json.loads(item.get("arguments") or "{}")
        except ValueError:
            args = {"arguments": item.get("arguments")}
        cmd = args.get("command") if isinstance(args, dict) else None
        if isinstance(cmd, list):  # ["bash", "-lc", "head -n 1 README.md"]
            args["command"] = cmd[-1] if len(cmd) == 3 and cmd[1] in ("-lc", "-c") else " ".join(map(str, cmd))
        t.entries.append(ToolCall(cid, "shell", args if isinstance(args, dict) else {"arguments": args}))
        return
    if kind == "custom_tool_call" and item.get("name") == "apply_patch" and isinstance(item.get("input"), str):
        cid = str(item.get("call_id") or item.get("id") or "")
        added = _added_files(item["input"])
        if not added:
            t.entries.append(ToolCall(cid, "apply_patch", {"patch": item["input"]}))
        for path, content in added:
            t.entries.append(ToolCall(cid, "apply_patch", {"path": path, "content": content}))
        return
    if kind in ("function_call_output", "custom_tool_call_output"):
        text, failed = _output(item.get("output"))
        t.entries.append(ToolResult(str(item.get("call_id", "")), text, failed))
        return
    add_item(t, item)


def parse_rollout(src: Source) -> Transcript:
    stats = JsonLines()
    t = Transcript(format="codex", source=src.path)
    usage: Usage | None = None
    last_time = None
    shown: set[int] = set()  # entries from event_msg messages: kept only when no item holds a message
    spawned_at: str | None = None  # a spawned agent's thread began then: earlier user messages are its parent's
    times: list[str | None] = []  # each entry's record's time (a list beside the entries: a dict entry each cost more)
    legacy = False
    for n, (_, r) in enumerate(src.iter_json_lines(stats)):
        if n == 0 and is_legacy_rollout([r, *src.shape.records[1:6]]):
            legacy, last_time = True, r.get("timestamp")
            continue
        if legacy and isinstance(r, dict) and r.get("type") in ITEM_TYPES:
            _item(t, r)
            times += [None] * (len(t.entries) - len(times))
            continue
        if not is_rollout_record(r):
            continue
        kind, payload = r["type"], r["payload"]
        last_time = r.get("timestamp") or last_time
        if kind == "session_meta":
            t.cwd = t.cwd or payload.get("cwd")
            if isinstance(payload.get("source"), dict) and "subagent" in payload["source"]:
                spawned_at = str(payload.get("timestamp") or r.get("timestamp") or "")
        elif kind == "turn_context":
            t.model = payload.get("model") or t.model
            t.cwd = t.cwd or payload.get("cwd")
        elif kind == "response_item":
            _item(t, payload)
        elif kind == "event_msg" and payload.get("type") in ("user_message", "agent_message") \
                and isinstance(payload.get("message"), str):
            shown.add(len(t.entries))
            t.entries.append(Message("user" if payload["type"] == "user_message" else "assistant", payload["message"]))
        elif kind == "event_msg" and payload.get("type") == "token_count":
            total = (payload.get("info") or {}).get("total_token_usage")
            if isinstance(total, dict):  # a running total: the last one is the session's
                cached = int(total.get("cached_input_tokens") or 0)
                usage = Usage(input_tokens=max(int(total.get("input_tokens") or 0) - cached, 0),
                              output_tokens=int(total.get("output_tokens") or 0), cache_read_tokens=cached)
        elif kind == "event_msg" and payload.get("type") in ("error", "stream_error"):
            t.warnings.append(f"codex: {payload.get('message', 'error')}")
        if len(t.entries) > len(times):
            stamp = r.get("timestamp")
            times += [stamp if isinstance(stamp, str) else None] * (len(t.entries) - len(times))
    if any(isinstance(e, Message) and e.role in ("user", "assistant") and i not in shown
           for i, e in enumerate(t.entries)):  # the items hold the messages: the UI's copies go
        kept = [i for i in range(len(t.entries)) if i not in shown]
        t.entries = [t.entries[i] for i in kept]
        times = [times[i] for i in kept]
    if spawned_at:
        _parent_history_is_context(t, spawned_at, times)
    t.warnings[:0] = truncation_warning(stats)
    t.usage = usage
    t.date = date_of(last_time)
    return finish_transcript(t)


def _parent_history_is_context(t: Transcript, spawned_at: str, times: list[str | None]) -> None:
    """A spawned agent's rollout replays its parent's history first: user messages from before its thread
    began are the parent's requests — context, never this agent's task."""
    began = _when(spawned_at)
    for i, e in enumerate(t.entries):
        stamp = _when(times[i] if i < len(times) else None)
        if isinstance(e, Message) and e.role == "user" and began is not None and stamp is not None and stamp < began:
            e.role = "system"


def _when(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
