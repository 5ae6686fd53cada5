"""OpenAI Codex CLI `codex exec --json` event streams (JSON lines), as the `codex` agent preset
saves them as a run's transcript; Codex's session logs (`rollout-*.jsonl`) are read by
codex_rollout.

Only `item.completed` events are read (started / updated ones are the same item in progress):
agent_message -> an assistant message (the last one is the final answer), reasoning -> thinking,
command_execution -> a `shell` call and its output, mcp_tool_call -> a `<server>.<tool>` call and
its result, web_search -> a call, file_change -> an `apply_patch` call naming the files (Codex does
not put their content in the stream, so they are not candidates). `turn.completed` carries usage;
`turn.failed` and `error` become warnings. A first `{"type": "scarbook.task"}` line (written by
the preset) holds the task; Codex itself never writes the prompt into the stream (exec_events.rs has no
user item), so without that line the transcript says where the prompt is kept: the session log of the
stream's thread. Plan items are the agent's words; a to-do list (its last state, `todo_list`) is a `todo_list`
call, offered as a to-do candidate (never the default artifact); plan deltas and questions to the user are
accepted and left out.
"""

from __future__ import annotations

import json
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.codex_rollout import is_legacy_rollout, is_rollout_record, parse_rollout
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import TODO_TOOL, Message, NotThisFormat, ToolCall, ToolResult, Transcript
from scarbook.transcripts.source import JsonLines, Source, truncation_warning

FORMAT = "codex"
EVENTS = {"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated",
          "item.completed", "item.plan.delta", "request_user_input", "error", "scarbook.task"}


def turn_usage(u: Any) -> Usage:
    """A turn's usage. Codex counts cached input inside input_tokens; scarbook keeps cache reads apart."""
    if not isinstance(u, dict):
        return Usage()
    cached = int(u.get("cached_input_tokens") or 0)
    return Usage(input_tokens=max(int(u.get("input_tokens") or 0) - cached, 0),
                 output_tokens=int(u.get("output_tokens") or 0), cache_read_tokens=cached)


def prompt_hint(thread: str | None) -> str:
    """Where the prompt of a `codex exec --json` stream is, since the stream does not hold it."""
    log = f"~/.codex/sessions/YYYY/MM/DD/rollout-*-{thread or '<thread id>'}.jsonl"
    whose = f"of thread {thread} " if thread else ""
    return f"codex exec --json does not log the prompt; Codex's session log {whose}({log}) holds it"


def _result_text(result: Any) -> str:
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in result["content"])
    return "" if result is None else result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _item(t: Transcript, item: dict[str, Any]) -> None:
    kind, iid = item.get("type"), str(item.get("id", ""))
    failed = item.get("status") in ("failed", "declined")
    if kind in ("agent_message", "plan"):
        t.entries.append(Message("assistant", str(item.get("text", ""))))
    elif kind == "reasoning":
        t.entries.append(Message("assistant", str(item.get("text", "")), kind="thinking"))
    elif kind == "command_execution":
        t.entries.append(ToolCall(iid, "shell", {"command": str(item.get("command", ""))}))
        code = item.get("exit_code")
        t.entries.append(ToolResult(iid, str(item.get("aggregated_output") or ""),
                                    failed or (isinstance(code, int) and code != 0)))
    elif kind == "mcp_tool_call":
        args = item.get("arguments")
        t.entries.append(ToolCall(iid, f"{item.get('server', 'mcp')}.{item.get('tool', '')}",
                                  args if isinstance(args, dict) else {"arguments": args}))
        err = item.get("error")
        text = err.get("message", "") if isinstance(err, dict) else _result_text(item.get("result"))
        t.entries.append(ToolResult(iid, str(text), failed or bool(err)))
    elif kind == "web_search":
        t.entries.append(ToolCall(iid, "web_search", {"query": str(item.get("query", ""))}))
    elif kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        t.entries.append(ToolCall(iid, "apply_patch", {"changes": changes}))
        t.entries.append(ToolResult(iid, ", ".join(f"{c.get('kind', '?')} {c.get('path', '?')}" for c in changes), failed))
    elif kind == "todo_list":  # shown as a to-do candidate (case_pieces), as a plan is
        items = [{"text": str(x.get("text", "")), "completed": x.get("completed") is True}
                 for x in item.get("items") or [] if isinstance(x, dict)]
        t.entries.append(ToolCall(iid, TODO_TOOL, {"items": items}))
    elif kind == "error":
        t.warnings.append(f"codex: {item.get('message', 'error')}")


def parse(src: Source) -> Transcript:
    if src.is_binary or src.is_json:
        raise NotThisFormat("not JSON lines")
    for _, first in src.iter_json_lines():
        if is_rollout_record(first) or is_legacy_rollout(src.shape.records):
            return parse_rollout(src)  # a session log (~/.codex/sessions), not an `exec --json` stream
        break
    stats = JsonLines()
    t = Transcript(format=FORMAT, source=src.path)
    usage: Usage | None = None
    seen = False
    thread: str | None = None
    for no, ev in src.iter_json_lines(stats):
        if not isinstance(ev, dict) or ev.get("type") not in EVENTS:
            what = f"type {ev.get('type')!r}" if isinstance(ev, dict) and "type" in ev else "no codex event type"
            raise NotThisFormat(f"line {no} has {what} (codex events are thread.started, item.completed, ...)")
        kind = ev["type"]
        seen = seen or kind != "scarbook.task"
        if kind == "scarbook.task":
            t.entries.append(Message("user", str(ev.get("text", ""))))
        elif kind == "thread.started":
            thread = thread or str(ev.get("thread_id") or "") or None
        elif kind == "item.completed" and isinstance(ev.get("item"), dict):
            _item(t, ev["item"])
        elif kind == "turn.completed":
            usage = usage or Usage()
            usage.add(turn_usage(ev.get("usage")))
        elif kind == "turn.failed":
            err = ev.get("error")
            t.warnings.append(f"the turn failed: {err.get('message') if isinstance(err, dict) else err}")
        elif kind == "error":
            t.warnings.append(f"the stream reported an error: {ev.get('message')}")
    if not seen:
        raise NotThisFormat("no codex events")
    t.warnings[:0] = truncation_warning(stats)
    t.usage = usage
    if not any(isinstance(e, Message) and e.role == "user" for e in t.entries):
        t.task_hint = prompt_hint(thread)
    return finish_transcript(t)
