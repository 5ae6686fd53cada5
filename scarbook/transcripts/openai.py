"""OpenAI transcripts: Chat Completions messages (`tool_calls` whose `arguments` are JSON
strings, `role: tool` replies) and Responses API items (`message`, `function_call`,
`function_call_output`, `reasoning`). Each may come as a bare list, a request body, a response,
or a `{"request": ..., "response": ...}` pair."""

from __future__ import annotations

import json
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import STREAMED, Broken, walk
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, shared_names
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import data_url_placeholder

FORMAT = "openai"
CHAT_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
ITEM_TYPES = {"message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
              "custom_tool_call_output", "web_search_call", "file_search_call", "computer_call",
              "item_reference"}


def parse_arguments(t: Transcript, call_id: str, arguments: Any) -> dict[str, Any]:
    """Tool arguments arrive as a JSON string; a string that is not JSON is kept raw."""
    if isinstance(arguments, dict):
        return shared_names(arguments)
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        t.warnings.append(f"tool call {call_id} has arguments that are not JSON; kept as raw text")
        return {"_raw_arguments": arguments}
    return shared_names(value) if isinstance(value, dict) else {"arguments": value}


def part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return json.dumps(part, ensure_ascii=False)
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text", "summary_text", "reasoning_text"):
        return part.get("text", "")
    if kind == "refusal":
        return part.get("refusal", "")
    if kind in ("image_url", "input_image"):
        url = part.get("image_url")
        url = url.get("url", "") if isinstance(url, dict) else url
        return data_url_placeholder("image", url) if url else f"[image: file {part.get('file_id')}]"
    if kind in ("input_file", "file"):
        f = part.get("file", part)
        return f"[file: {f.get('filename') or f.get('file_id') or 'attached'}]"
    if kind == "input_audio":
        return f"[audio: {(part.get('input_audio') or {}).get('format', 'unknown type')}]"
    return json.dumps(part, ensure_ascii=False)


def content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(part_text(p) for p in content)
    return part_text(content)


def add_chat_message(t: Transcript, m: dict[str, Any], fn_ids: list[str]) -> None:
    role = m.get("role")
    if role == "tool":
        t.entries.append(ToolResult(str(m.get("tool_call_id", "")), content_text(m.get("content"))))
        return
    if role == "function":  # the pre-tools function calling API: results matched by order
        call_id = fn_ids.pop(0) if fn_ids else f"function-{len(t.entries)}"
        t.entries.append(ToolResult(call_id, content_text(m.get("content"))))
        return
    text = content_text(m.get("content"))
    if text or not (m.get("tool_calls") or m.get("function_call")):
        t.entries.append(Message("system" if role == "developer" else str(role), text))
    for call in m.get("tool_calls") or []:
        fn = call.get("function") or {}
        cid = str(call.get("id", ""))
        t.entries.append(ToolCall(cid, str(fn.get("name", "")), parse_arguments(t, cid, fn.get("arguments"))))
    if isinstance(m.get("function_call"), dict):
        cid = f"function-{len(t.entries)}"
        fn_ids.append(cid)
        fc = m["function_call"]
        t.entries.append(ToolCall(cid, str(fc.get("name", "")), parse_arguments(t, cid, fc.get("arguments"))))


def add_item(t: Transcript, item: dict[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind == "message":
        t.entries.append(Message("system" if item.get("role") == "developer" else str(item.get("role")),
                                 content_text(item.get("content"))))
    elif kind in ("function_call", "custom_tool_call"):
        cid = str(item.get("call_id") or item.get("id") or "")
        args = item.get("arguments", item.get("input"))
        t.entries.append(ToolCall(cid, str(item.get("name", "")), parse_arguments(t, cid, args)))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        t.entries.append(ToolResult(str(item.get("call_id", "")), content_text(item.get("output"))))
    elif kind == "reasoning":
        text = "\n".join(part_text(p) for p in (item.get("summary") or []) + (item.get("content") or []))
        t.entries.append(Message("assistant", text or "[reasoning]", kind="thinking"))


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    inp = int(u.get("prompt_tokens", u.get("input_tokens")) or 0)
    details = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    # OpenAI counts cached tokens inside the input; scarbook's Usage keeps them apart.
    return Usage(input_tokens=inp - cached, output_tokens=int(u.get("completion_tokens", u.get("output_tokens")) or 0),
                 cache_read_tokens=cached)


def _check_chat(messages: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise NotThisFormat(f"{what} is not a non-empty list")
    for i, m in enumerate(messages):
        _check_chat_message(m, what, i)
    return messages


def _check_chat_message(m: Any, what: str, i: int) -> None:
    if not isinstance(m, dict) or not isinstance(m.get("role"), str) or m["role"] not in CHAT_ROLES or "type" in m:
        raise NotThisFormat(f"{what}[{i}] is not a chat message (role one of {', '.join(sorted(CHAT_ROLES))})")


def _check_items(items: Any, what: str) -> list[dict[str, Any]]:
    if isinstance(items, str):
        return [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise NotThisFormat(f"{what} is not a non-empty list")
    for i, it in enumerate(items):
        _check_item(it, what, i)
    return items


def _check_item(it: Any, what: str, i: int) -> None:
    ok = isinstance(it, dict) and (isinstance(it.get("type"), str) and it["type"] in ITEM_TYPES
                                   or ("type" not in it and "role" in it))
    if not ok:
        raise NotThisFormat(f"{what}[{i}] is not a Responses API item (type one of message, function_call, "
                            "function_call_output, reasoning)")


def _is_items(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) and v.get("type") in ITEM_TYPES for v in value)


def parse(src: Source) -> Transcript:
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON document")
    return finish_transcript(_read_document(src))


def _read_document(src: Source) -> Transcript:
    """A body, a list or a {request, response} pair read with its messages (or Responses items) handed over
    one at a time (json_walk), each checked and added as it comes: a big body is never parsed whole."""
    t = Transcript(format="openai-chat", source=src.path)
    fn_ids: list[str] = []
    seen = {"messages": 0, "input": 0}

    def on_item(path: str, item: Any) -> None:
        # in a bare list, a typed entry is a Responses item, an untyped one a chat message (the same Message
        # either way when it is only a role and content)
        side = "input" if path.endswith("input") or path == "" and isinstance(item, dict) and "type" in item \
            else "messages"
        if side == "input":
            _check_item(item, "input", seen["input"])
            add_item(t, item)
        else:
            _check_chat_message(item, "messages", seen["messages"])
            add_chat_message(t, item, fn_ids)
        seen[side] += 1

    try:
        value = walk(src.path, {"", "messages", "input", "request.messages", "request.input"}, on_item)
    except Broken:
        raise NotThisFormat("not a JSON document") from None
    if value is STREAMED:
        value = {"input" if seen["input"] else "messages": STREAMED}
    return _fill(t, value, fn_ids, streamed=seen["messages"] + seen["input"])


def read_value(value: Any, source: Any = None) -> Transcript:
    """The timeline of one OpenAI body, list or {request, response} pair (files not yet derived)."""
    return _fill(Transcript(format="openai-chat", source=source), value, [])


def _fill(t: Transcript, value: Any, fn_ids: list[str], streamed: int = 0) -> Transcript:
    """`t` from a parsed body; its request's `messages` or `input` may be STREAMED (`streamed` of them added)."""
    request = response = None
    if isinstance(value, dict) and isinstance(value.get("request"), dict):
        request, response = value["request"], value.get("response")
    elif isinstance(value, dict) and (value.get("object") in ("chat.completion", "response") or "choices" in value):
        response = value
    elif isinstance(value, dict) and ("messages" in value or "input" in value):
        request = value
    elif isinstance(value, list):
        request = {"input": value} if _is_items(value) else {"messages": value}
    else:
        raise NotThisFormat("no `messages`, `input`, `choices` or `output`")
    responses_api = (request is not None and "input" in request) or (
        isinstance(response, dict) and (response.get("object") == "response" or "output" in response))
    t.format = "openai-responses" if responses_api else "openai-chat"
    if request is not None:
        t.model = request.get("model")
        key = "input" if responses_api else "messages"
        if request.get(key) is STREAMED:
            if not streamed:
                raise NotThisFormat(f"{key} is not a non-empty list")
        elif responses_api:
            for item in _check_items(request.get("input"), "input"):
                add_item(t, item)
        else:
            for m in _check_chat(request.get("messages"), "messages"):
                add_chat_message(t, m, fn_ids)
        if responses_api and request.get("instructions"):  # first, wherever the body put it
            t.entries.insert(0, Message("system", str(request["instructions"])))
    if isinstance(response, dict):
        t.model = response.get("model") or t.model
        if responses_api:
            for item in _check_items(response.get("output"), "output"):
                add_item(t, item)
        else:
            choices = response.get("choices")
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
                    or not isinstance(choices[0].get("message"), dict):
                raise NotThisFormat("the response has no choices[0].message")
            add_chat_message(t, choices[0]["message"], fn_ids)
        t.usage = _usage(response.get("usage"))
    return t
