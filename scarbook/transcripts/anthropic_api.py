"""Anthropic Messages API JSON: a request body, a response, a list of messages, a request and
response pair, or a saved stream of events (a JSON list, JSON lines, or raw `event:/data:` SSE).

The content-block helpers here are shared with the Claude Code parser, whose records embed
Messages API messages.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import STREAMED, Broken, walk
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, shared_names
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import base64_size, blob_placeholder

FORMAT = "anthropic"
BLOCK_TYPES = {"text", "tool_use", "tool_result", "image", "document", "thinking", "redacted_thinking",
               "server_tool_use", "web_search_tool_result", "search_result"}
STREAM_TYPES = {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                "message_delta", "message_stop", "ping", "error"}


def blob_text(block: dict[str, Any]) -> str:
    """Placeholder for an image or document block: "[image: image/png, 12 kB]"."""
    kind = "image" if block.get("type") == "image" else "document"
    src = block.get("source") or {}
    if src.get("type") == "base64":
        return blob_placeholder(kind, src.get("media_type"), base64_size(src.get("data", "")))
    if src.get("type") == "url":
        return f"[{kind}: {src.get('url')}]"
    if src.get("type") == "text":
        return src.get("data", "")
    return blob_placeholder(kind, src.get("media_type"), None)


def content_text(content: Any) -> str:
    """The text of a tool_result's content: a string, or a list of text / image blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                parts.append(b.get("text", ""))
            elif isinstance(b, dict) and b.get("type") in ("image", "document"):
                parts.append(blob_text(b))
            elif isinstance(b, str):
                parts.append(b)
            else:
                parts.append(json.dumps(b, ensure_ascii=False))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def is_result_block(kind: str) -> bool:
    """A tool's result: `tool_result`, or a server tool's (`web_search_tool_result`,
    `text_editor_code_execution_tool_result`, `bash_code_execution_tool_result`, …)."""
    return kind == "tool_result" or kind.endswith("_tool_result")


def server_result_text(content: Any) -> str:
    """A result's text; a server tool's result object by what it holds (a file's content, stdout, an error)."""
    if isinstance(content, dict):
        for key in ("content", "stdout", "error_message", "text"):
            if isinstance(content.get(key), str):
                return content[key]
        return json.dumps(content, ensure_ascii=False)
    return content_text(content)


def add_content(t: Transcript, role: str, content: Any, *, sidechain: bool = False) -> list[Any]:
    """Append one API message (string or block list) to the timeline; return the entries added."""
    added: list[Any] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            added.append(Message(role, "\n".join(text), sidechain=sidechain))
            text.clear()

    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
    for b in blocks:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            text.append(b.get("text", ""))
        elif kind in ("image", "document"):
            text.append(blob_text(b))
        elif kind in ("thinking", "redacted_thinking"):
            flush()
            added.append(Message(role, b.get("thinking", "[redacted thinking]"), kind="thinking", sidechain=sidechain))
        elif kind in ("tool_use", "server_tool_use"):
            flush()
            inp = b.get("input")
            added.append(ToolCall(str(b.get("id", "")), str(b.get("name", "")),
                                  shared_names(inp) if isinstance(inp, dict) else {"input": inp}, sidechain=sidechain))
        elif isinstance(kind, str) and is_result_block(kind):
            flush()
            content = b.get("content")
            error = bool(b.get("is_error")) or (isinstance(content, dict) and str(content.get("type", "")).endswith(
                "_error"))
            added.append(ToolResult(str(b.get("tool_use_id", "")), server_result_text(content), error,
                                    sidechain=sidechain))
    flush()
    t.entries.extend(added)
    return added


def add_usage(total: Usage, usage: dict[str, Any] | None) -> None:
    if not isinstance(usage, dict):
        return
    total.add(Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
    ))


def _check_messages(messages: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise NotThisFormat(f"{what} is not a non-empty list of messages")
    for i, m in enumerate(messages):
        _check_message(m, what, i)
    return messages


def _check_message(m: Any, what: str, i: int) -> None:
    if not isinstance(m, dict) or "role" not in m or "content" not in m:
        raise NotThisFormat(f"{what}[{i}] has no role and content")
    if m["role"] not in ("user", "assistant"):
        raise NotThisFormat(f"{what}[{i}] has role {m['role']!r} (the Messages API has only user and assistant)")
    if "tool_calls" in m:
        raise NotThisFormat(f"{what}[{i}] has tool_calls (an OpenAI field)")
    if isinstance(m["content"], list):
        for b in m["content"]:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind not in BLOCK_TYPES and not (isinstance(kind, str) and is_result_block(kind)):
                raise NotThisFormat(f"{what}[{i}] has a content block of type {kind!r}")
    elif not isinstance(m["content"], str):
        raise NotThisFormat(f"{what}[{i}] content is neither text nor a list of blocks")


def _system_text(system: Any) -> str:
    return system if isinstance(system, str) else content_text(system)


def _stream_events(src: Source) -> Iterator[dict[str, Any]] | None:
    """The file as stream events, whichever way it was saved (a JSON array, raw SSE read a line at a time,
    JSON lines), or None when it is not a stream of Messages API events."""
    if not src.is_binary and src.head.lstrip(b"\xef\xbb\xbf").lstrip().startswith((b"event:", b"data:")):
        events: Iterator[dict[str, Any]] = _sse_lines(src)
    elif src.is_json_lines:
        events = (e for _, e in src.iter_json_lines() if isinstance(e, dict))
    elif src.shape.kind == "json-array" and src.shape.types[:1] == ["message_start"]:  # events saved as a list
        value = src.json
        if not (isinstance(value, list) and value and all(isinstance(e, dict) for e in value)):
            return None
        events = iter(value)
    else:
        return None
    first = next(events, None)
    if first is None or first.get("type") != "message_start":
        return None
    return itertools.chain([first], events)


def _sse_lines(src: Source) -> Iterator[dict[str, Any]]:
    """The `data:` payloads of a saved SSE stream, parsed a line at a time (a line that does not parse is a
    stream cut short)."""
    with open(src.path, "rb") as fh:
        for line in fh:
            if line.startswith(b"data:"):
                try:
                    value = json.loads(line[5:])
                except ValueError:
                    yield {"type": "_truncated"}
                    continue
                if isinstance(value, dict):
                    yield value


def _parse_stream(t: Transcript, events: Iterable[dict[str, Any]]) -> None:
    usage = Usage()
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    pieces: dict[tuple[int, str], list[str]] = {}  # (block, "text" | "thinking") -> its deltas, joined once
    message_usage: dict[str, Any] = {}

    def close_message() -> None:
        for (index, key), parts in pieces.items():
            if index in blocks:
                blocks[index][key] = blocks[index].get(key, "") + "".join(parts)
        pieces.clear()
        for index in sorted(blocks):
            block = blocks[index]
            if block.get("type") == "tool_use" and partial.get(index):
                raw = "".join(partial[index])
                try:
                    block["input"] = json.loads(raw)
                except ValueError:
                    t.warnings.append(f"tool call {block.get('id')} input was cut off mid-stream; kept as raw text")
                    block["input"] = {"_partial_json": raw}
        if blocks:
            add_content(t, "assistant", [blocks[i] for i in sorted(blocks)])
        add_usage(usage, message_usage)
        blocks.clear()
        partial.clear()

    for ev in events:
        kind = ev.get("type")
        if kind == "_truncated":
            t.warnings.append("last line truncated by a crash; it was skipped")
        elif kind == "message_start":
            close_message()
            msg = ev.get("message") or {}
            t.model = msg.get("model") or t.model
            message_usage = dict(msg.get("usage") or {})
        elif kind == "content_block_start":
            blocks[int(ev.get("index", len(blocks)))] = dict(ev.get("content_block") or {})
        elif kind == "content_block_delta":
            index, delta = int(ev.get("index", 0)), ev.get("delta") or {}
            blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":  # a delta each few words: joined once, not a copy each
                pieces.setdefault((index, "text"), []).append(str(delta.get("text", "")))
            elif delta.get("type") == "input_json_delta":
                partial.setdefault(index, []).append(delta.get("partial_json", ""))
            elif delta.get("type") == "thinking_delta":
                pieces.setdefault((index, "thinking"), []).append(str(delta.get("thinking", "")))
        elif kind == "message_delta":
            # output_tokens in message_delta is the running total for the message, not an increment
            message_usage.update({k: v for k, v in (ev.get("usage") or {}).items() if v is not None})
        elif kind == "error":
            t.warnings.append(f"the stream ended with an error: {json.dumps(ev.get('error'))}")
    close_message()
    t.usage = usage


def parse(src: Source) -> Transcript:
    events = _stream_events(src)
    if events is not None:
        t = Transcript(format="anthropic-stream", source=src.path)
        _parse_stream(t, events)
        return finish_transcript(t)
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON document or a stream of message events")
    return finish_transcript(_read_document(src))


def _read_document(src: Source) -> Transcript:
    """A body, a list of messages or a {request, response} pair read from the file with its messages handed
    over one at a time (json_walk), each checked and added as it comes: a big body is never parsed whole."""
    t = Transcript(format="anthropic-messages", source=src.path)
    seen = [0]

    def on_message(_: str, m: Any) -> None:
        _check_message(m, "messages", seen[0])
        seen[0] += 1
        add_content(t, m["role"], m["content"])

    try:
        value = walk(src.path, {"", "messages", "request.messages"}, on_message)
    except Broken:
        raise NotThisFormat("not a JSON document or a stream of message events") from None
    return _fill(t, {"messages": STREAMED} if value is STREAMED else value, streamed=seen[0])


def read_stream(events: Iterable[dict[str, Any]], t: Transcript) -> None:
    """Add a saved stream of Messages API events (one reply) to `t`."""
    _parse_stream(t, events)


def read_value(value: Any, source: Any = None) -> Transcript:
    """The timeline of one Messages API body, list or {request, response} pair (files not yet derived)."""
    return _fill(Transcript(format="anthropic-messages", source=source), value)


def _fill(t: Transcript, value: Any, streamed: int = 0) -> Transcript:
    """`t` from a parsed body; its request's `messages` may be STREAMED (`streamed` of them already added)."""
    usage = Usage()
    if isinstance(value, dict) and isinstance(value.get("request"), dict):
        request, response = value["request"], value.get("response")
    elif isinstance(value, dict) and value.get("type") == "message" and value.get("role") == "assistant":
        request, response = None, value
    elif isinstance(value, dict) and "messages" in value:
        request, response = value, None
    elif isinstance(value, list):
        request, response = {"messages": value}, None
    else:
        raise NotThisFormat("no `messages` list, `type: message` response or stream events")
    if request is not None:
        if request.get("messages") is STREAMED:
            if not streamed:
                raise NotThisFormat("messages is not a non-empty list of messages")
            added: list[Any] = []
        else:
            added = _check_messages(request.get("messages"), "messages")
        t.model = request.get("model") if isinstance(request.get("model"), str) else None
        if request.get("system"):  # first, wherever the body put it
            t.entries.insert(0, Message("system", _system_text(request["system"])))
        for m in added:
            add_content(t, m["role"], m["content"])
    if isinstance(response, dict):
        if response.get("type") != "message" or not isinstance(response.get("content"), list):
            raise NotThisFormat("the response is not a Messages API message (type: message, content blocks)")
        _check_messages([response], "response")
        t.model = response.get("model") or t.model
        add_content(t, "assistant", response["content"])
        add_usage(usage, response.get("usage"))
        t.usage = usage
    return t
