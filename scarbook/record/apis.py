"""What the recorder knows of the model APIs: which one a request is, its digest, the response's
usage, and the ordinary transcript records (text, tool calls, tool results) a call adds.

Anthropic Messages (`…/messages`), OpenAI Chat Completions (`…/chat/completions`) and Responses
(`…/responses`), each answered as JSON or as a stream of server-sent events; a stream is folded back
into the response it spells out. Anything else is `other`: passed through and recorded, not parsed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from scarbook.transcripts.sse import fold_chat_chunks, sse_events

__all__ = ["Reply", "api_of", "digest", "first_user_text", "fold", "normalized", "parse_json", "sse_events",
           "tool_results"]

VOLATILE = ("metadata", "user")  # per-process ids a client puts in every request: not what the agent asked


def api_of(vendor: str, tail: str) -> str:
    tail = tail.rstrip("/")
    if vendor == "anthropic" and tail.endswith("messages"):
        return "anthropic.messages"
    if vendor == "openai" and tail.endswith("chat/completions"):
        return "openai.chat"
    if vendor == "openai" and tail.endswith("responses"):
        return "openai.responses"
    return "other"


def normalized(method: str, api: str, tail: str, body: Any, *, pretty: bool = False) -> str:
    """The request as replay compares it: method, API, path and the body (keys sorted, volatile ids
    out). Compact for the digest (the C encoder: this runs on every call); `pretty` (a line per
    value) only for showing a divergence."""
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in VOLATILE}
    value = {"method": method, "api": api, "path": tail, "body": body}
    if pretty:
        return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_json(data: bytes) -> Any:
    """The JSON value of `data`, or None when it is not JSON."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


@dataclass
class Reply:
    """A response folded into what the transcript needs."""

    model: str = ""
    texts: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (id, name, input)
    usage: dict[str, int] = field(default_factory=dict)


def _args(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        parsed = parse_json(value.encode())
        if isinstance(parsed, dict):
            return parsed
        return {"input": value} if value else {}
    return {"input": value} if value is not None else {}


def _usage(u: Any, api: str) -> dict[str, int]:
    if not isinstance(u, dict):
        return {}

    def n(*keys: str, within: Any = None) -> int:
        d = u if within is None else within
        for key in keys:
            v = d.get(key) if isinstance(d, dict) else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return int(v)
        return 0
    if api == "anthropic.messages":
        return {"input_tokens": n("input_tokens"), "output_tokens": n("output_tokens"),
                "cache_read_tokens": n("cache_read_input_tokens"), "cache_write_tokens": n("cache_creation_input_tokens")}
    details = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    cached = n("cached_tokens", within=details)
    return {"input_tokens": n("prompt_tokens", "input_tokens") - cached, "output_tokens": n("completion_tokens", "output_tokens"),
            "cache_read_tokens": cached, "cache_write_tokens": 0}


def fold(api: str, body: Any, events: list[Any] | None) -> Reply | None:
    """The reply of a JSON body or of a stream's events; None when it is not this API's shape."""
    if api == "anthropic.messages":
        return _anthropic(body) if events is None else _anthropic_stream(events)
    if api == "openai.chat":
        return _chat(body) if events is None else _chat_stream(events)
    if api == "openai.responses":
        if events is not None:  # the last event with the whole response: response.completed
            done = [e["response"] for e in events if isinstance(e, dict) and isinstance(e.get("response"), dict)
                    and e.get("type") in ("response.completed", "response.incomplete", "response.failed")]
            body = done[-1] if done else None
        return _responses(body)
    return None


def _anthropic(body: Any) -> Reply | None:
    if not isinstance(body, dict) or body.get("type") != "message" or not isinstance(body.get("content"), list):
        return None
    r = Reply(model=str(body.get("model") or ""), usage=_usage(body.get("usage"), "anthropic.messages"))
    for b in body["content"]:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and b.get("text"):
            r.texts.append(str(b["text"]))
        elif b.get("type") in ("tool_use", "server_tool_use"):
            r.tool_calls.append((str(b.get("id", "")), str(b.get("name", "")), _args(b.get("input"))))
    return r


def _anthropic_stream(events: list[Any]) -> Reply | None:
    start = next((e for e in events if isinstance(e, dict) and e.get("type") == "message_start"), None)
    if start is None or not isinstance(start.get("message"), dict):
        return None
    message = dict(start["message"])
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    usage = dict(message.get("usage") or {})
    for e in events:
        if not isinstance(e, dict):
            continue
        kind, i = e.get("type"), e.get("index")
        if kind == "message_delta" and isinstance(e.get("usage"), dict):
            usage.update({k: v for k, v in e["usage"].items() if v is not None})
        if not isinstance(i, int):
            continue
        if kind == "content_block_start" and isinstance(e.get("content_block"), dict):
            blocks[i] = dict(e["content_block"])
        elif kind == "content_block_delta" and i in blocks and isinstance(e.get("delta"), dict):
            d = e["delta"]
            if d.get("type") == "text_delta":
                blocks[i]["text"] = blocks[i].get("text", "") + str(d.get("text", ""))
            elif d.get("type") == "input_json_delta":
                partial[i] = partial.get(i, "") + str(d.get("partial_json", ""))
    for i, text in partial.items():
        blocks[i]["input"] = _args(text)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    message["usage"] = usage
    message.setdefault("type", "message")
    return _anthropic(message)


def _chat(body: Any) -> Reply | None:
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return None
    r = Reply(model=str(body.get("model") or ""), usage=_usage(body.get("usage"), "openai.chat"))
    for choice in body["choices"][:1]:
        msg = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(msg, dict):
            continue
        if isinstance(msg.get("content"), str) and msg["content"]:
            r.texts.append(msg["content"])
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {} if isinstance(call, dict) else {}
            r.tool_calls.append((str(call.get("id", "")), str(fn.get("name", "")), _args(fn.get("arguments"))))
    return r


def _chat_stream(events: list[Any]) -> Reply | None:
    body = fold_chat_chunks(events)
    return _chat(body) if body is not None else None


def _responses(body: Any) -> Reply | None:
    if not isinstance(body, dict) or not isinstance(body.get("output"), list):
        return None
    r = Reply(model=str(body.get("model") or ""), usage=_usage(body.get("usage"), "openai.responses"))
    for item in body["output"]:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "output_text" and part.get("text"):
                    r.texts.append(str(part["text"]))
        elif item.get("type") == "function_call":
            r.tool_calls.append((str(item.get("call_id") or item.get("id") or ""), str(item.get("name", "")),
                                 _args(item.get("arguments"))))
    return r


def first_user_text(api: str, body: Any) -> str:
    """The request's first user message as text (the run's task), or ""."""
    if not isinstance(body, dict):
        return ""
    if api == "openai.responses":
        items = body.get("input")
        if isinstance(items, str):
            return items
        messages: list[Any] = items if isinstance(items, list) else []
    else:
        messages = body["messages"] if isinstance(body.get("messages"), list) else []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            return _text_of(m.get("content"))
    return ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, dict) and b.get("type") in ("text", "input_text") and b.get("text"))
    return ""


def tool_results(api: str, body: Any) -> list[tuple[str, str, bool]]:
    """Every tool result the request carries: (call id, output text, is_error)."""
    if not isinstance(body, dict):
        return []
    found: list[tuple[str, str, bool]] = []
    if api == "openai.responses":
        for item in body["input"] if isinstance(body.get("input"), list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                found.append((str(item.get("call_id", "")), _text_of(item.get("output")) or str(item.get("output", "")),
                              False))
        return found
    for m in body["messages"] if isinstance(body.get("messages"), list) else []:
        if not isinstance(m, dict):
            continue
        if api == "openai.chat" and m.get("role") == "tool":
            found.append((str(m.get("tool_call_id", "")), _text_of(m.get("content")), False))
        elif api == "anthropic.messages" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    found.append((str(b.get("tool_use_id", "")), _text_of(b.get("content")), bool(b.get("is_error"))))
    return found
