"""Chat web apps' data exports, one conversation at a time: ChatGPT's `conversations.json` (each conversation a
`mapping` of message nodes, the branch on screen the one that ends at `current_node`; the code interpreter's,
browser's and canvas's calls are tool calls) and claude.ai's `conversations.json` (`chat_messages` of a
`sender` human or assistant, `content` blocks with tool_use and tool_result).

An export holds every conversation of the account: one is imported, the latest updated unless `--trace ID`
picks another (`--list` lists them). The file is read a conversation at a time and only the one kept is held.
"""

from __future__ import annotations

import json
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import Broken, walk
from scarbook.transcripts.model import (
    FileOp,
    Message,
    NotThisFormat,
    ToolCall,
    ToolResult,
    Transcript,
    date_of,
    shared_names,
)
from scarbook.transcripts.openai import part_text
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import preview

CHATGPT = "chatgpt"
CLAUDE_AI = "claude-ai"


def is_chatgpt(item: dict[str, Any]) -> bool:
    return isinstance(item.get("mapping"), dict)


def is_claude_ai(item: dict[str, Any]) -> bool:
    return isinstance(item.get("chat_messages"), list)


def parse(src: Source) -> Transcript:
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON document")
    listed: list[tuple[str, str, float]] = []  # (id, summary, when) of each conversation
    kept: dict[str, Any] = {}
    wanted = src.trace

    def on_item(_path: str, item: Any) -> None:
        if not isinstance(item, dict) or not (is_chatgpt(item) or is_claude_ai(item)):
            raise NotThisFormat(f"conversation {len(listed) + 1} has neither `mapping` (ChatGPT) nor "
                                "`chat_messages` (claude.ai)")
        cid, when = _conversation_id(item, len(listed)), _updated(item)
        listed.append((cid, _summary(item), when))
        if cid == wanted or wanted is None and (not kept or when >= kept["when"]):
            kept.update(item=item, when=when)

    try:
        value = walk(src.path, {""}, on_item)
    except Broken:
        raise NotThisFormat("not a JSON document") from None
    if isinstance(value, dict):  # one conversation saved alone
        on_item("", value)
    if not listed:
        raise NotThisFormat("the export holds no conversation")
    if wanted is not None and not kept:
        raise ScarbookError(f"{src.path}: no conversation {wanted!r} in this export; it holds "
                            + ", ".join(cid for cid, _, _ in listed[:10]) + (" …" if len(listed) > 10 else ""))
    item = kept["item"]
    t = Transcript(format=CHATGPT if is_chatgpt(item) else CLAUDE_AI, source=src.path)
    if len(listed) > 1:
        t.traces = [(cid, summary) for cid, summary, _ in listed]
        t.trace = _conversation_id(item, -1)
        if wanted is None:
            t.warnings.append(f"the file holds {len(listed)} conversations; showing {t.trace} (the latest "
                              "updated); pick another with --trace ID (see --list)")
    if is_chatgpt(item):
        _read_chatgpt(t, item)
    else:
        _read_claude_ai(t, item)
    t.date = date_of(item.get("update_time") or item.get("updated_at") or item.get("create_time")
                     or item.get("created_at"))
    if not any(isinstance(e, Message) and e.role == "user" for e in t.entries):
        raise NotThisFormat("the conversation has no message of the user to be the task")
    return finish_transcript(t)


def _conversation_id(item: dict[str, Any], index: int) -> str:
    cid = item.get("conversation_id") or item.get("id") or item.get("uuid")
    return str(cid) if cid else f"#{index + 1}"


def _updated(item: dict[str, Any]) -> float:
    import datetime as dt

    stamp = item.get("update_time") or item.get("updated_at") or item.get("create_time") or item.get("created_at")
    if isinstance(stamp, (int, float)):
        return float(stamp)
    try:
        return dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _summary(item: dict[str, Any]) -> str:
    title = item.get("title") or item.get("name") or "(untitled)"
    day = date_of(item.get("update_time") or item.get("updated_at")) or "no date"
    return f"{preview(str(title), 50)}, updated {day}"


def _read_chatgpt(t: Transcript, conv: dict[str, Any]) -> None:
    """The branch on screen: from `current_node` up to the root, then in order. A message to a tool (its
    `recipient`) is a call; the tool's reply its result."""
    mapping = conv["mapping"]
    node, branch, seen = conv.get("current_node"), [], set()
    while isinstance(node, str) and node in mapping and node not in seen:
        seen.add(node)
        branch.append(mapping[node])
        node = mapping[node].get("parent")
    call_id = ""
    for n in reversed(branch):
        m = n.get("message") if isinstance(n, dict) else None
        if not isinstance(m, dict) or (m.get("metadata") or {}).get("is_visually_hidden_from_conversation"):
            continue
        role = str((m.get("author") or {}).get("role") or "")
        content = c if isinstance(c := m.get("content"), dict) else {}
        kind, text = content.get("content_type"), _chatgpt_text(content)
        recipient = m.get("recipient") or "all"
        if kind == "user_editable_context" or role == "system" and not text.strip():
            continue  # custom instructions, the empty system root: not the conversation
        if role == "tool":
            t.entries.append(ToolResult(call_id or str((m.get("author") or {}).get("name") or ""), text))
        elif role == "assistant" and recipient != "all":
            call_id = str(m.get("id") or f"call-{len(t.entries)}")
            t.entries.append(ToolCall(call_id, str(recipient), _call_input(text, kind)))
        elif kind in ("thoughts", "reasoning_recap"):
            t.entries.append(Message("assistant", text, kind="thinking"))
        elif text.strip():
            t.entries.append(Message(role, text))
        t.model = (m.get("metadata") or {}).get("model_slug") or t.model


def _chatgpt_text(content: dict[str, Any]) -> str:
    if isinstance(content.get("parts"), list):
        return "\n".join(p if isinstance(p, str) else _asset(p) for p in content["parts"])
    if isinstance(content.get("thoughts"), list):
        return "\n".join(str(th.get("content") or th.get("summary") or "") for th in content["thoughts"]
                         if isinstance(th, dict))
    return str(content.get("text") or content.get("content") or content.get("result") or "")


def _asset(part: Any) -> str:
    if isinstance(part, dict) and part.get("content_type") == "image_asset_pointer":
        return f"[image: {part.get('asset_pointer') or 'attached'}]"
    return part_text(part)


def _call_input(text: str, kind: Any) -> dict[str, Any]:
    """What a message to a tool sent: a JSON object (canvas, search) as its fields, code as `code`."""
    if kind == "code":
        try:
            value = json.loads(text)
        except ValueError:
            return {"code": text}
        return shared_names(value) if isinstance(value, dict) else {"code": text}
    return {"input": text}


def _read_claude_ai(t: Transcript, conv: dict[str, Any]) -> None:
    """Each message's blocks in order; a message's words (and the files pasted into it) are one message. An
    artifact the assistant made (the `artifacts` tool: create, rewrite, update) is a file it wrote."""
    for m in conv["chat_messages"]:
        if not isinstance(m, dict):
            continue
        role = {"human": "user", "assistant": "assistant"}.get(str(m.get("sender")), str(m.get("sender")))
        blocks = c if isinstance(c := m.get("content"), list) and c else [{"type": "text", "text": str(m.get("text") or "")}]
        words: list[str] = []
        for b in blocks:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "tool_use":
                _say(t, role, words)
                t.entries.append(_claude_ai_call(b, len(t.entries)))
            elif kind == "tool_result":
                _say(t, role, words)
                calls = [e for e in t.entries if isinstance(e, ToolCall)]
                body = b.get("content")
                text = "\n".join(part_text(p) for p in body) if isinstance(body, list) else part_text(body or "")
                t.entries.append(ToolResult(str(b.get("tool_use_id") or (calls[-1].id if calls else "")), text,
                                            is_error=bool(b.get("is_error"))))
            elif kind == "thinking":
                _say(t, role, words)
                t.entries.append(Message("assistant", str(b.get("thinking") or ""), kind="thinking"))
            elif isinstance(b, dict):
                words.append(part_text(b))
        for a in m.get("attachments") or []:
            if isinstance(a, dict) and a.get("extracted_content"):  # a file pasted in: part of the request
                words.append(f"[attached {a.get('file_name') or 'file'}]\n{a['extracted_content']}")
        _say(t, role, words)


def _say(t: Transcript, role: str, words: list[str]) -> None:
    """The words gathered so far as one message (emptied)."""
    if "".join(words).strip():
        t.entries.append(Message(role, "\n\n".join(w for w in words if w.strip())))
    words.clear()


_ARTIFACT_EXT = {"text/markdown": ".md", "text/html": ".html", "image/svg+xml": ".svg", "application/vnd.ant.react":
                 ".jsx", "application/vnd.ant.mermaid": ".mmd"}
_LANGUAGE_EXT = {"python": ".py", "javascript": ".js", "typescript": ".ts", "bash": ".sh", "shell": ".sh", "sql": ".sql",
                 "json": ".json", "yaml": ".yaml", "rust": ".rs", "go": ".go", "java": ".java", "html": ".html", "css": ".css"}


def _claude_ai_call(b: dict[str, Any], index: int) -> ToolCall:
    args = b.get("input")
    call = ToolCall(str(b.get("id") or f"call-{index}"), str(b.get("name") or ""),
                    shared_names(args) if isinstance(args, dict) else {"input": args})
    inp = call.input
    if call.name == "artifacts" and isinstance(inp.get("id"), str) and inp["id"].strip():
        language = str(inp.get("language") or "").lower()
        path = inp["id"].strip() + (_ARTIFACT_EXT.get(str(inp.get("type"))) or _LANGUAGE_EXT.get(language) or ".txt")
        if inp.get("command") in ("create", "rewrite") and isinstance(inp.get("content"), str):
            call.ops = (FileOp("write", path, content=inp["content"]),)
        elif inp.get("command") == "update" and isinstance(inp.get("old_str"), str):
            call.ops = (FileOp("edit", path, edits=[(inp["old_str"], str(inp.get("new_str") or ""), False)]),)
    return call
