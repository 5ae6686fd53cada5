"""HTTP cassettes of model calls: VCR / pytest-recording YAML (`interactions: [{request, response}]`),
the same as JSON, and one `{request, response: {status, headers, body}}` exchange saved as JSON.

Each interaction is an HTTP exchange; those that call the Anthropic Messages API or OpenAI (Chat
Completions or Responses) are read. An agent's calls each repeat the conversation before them, so
the last model call (its request's history and its reply) is the conversation; the number of calls
is said in a warning when there are several. A reply saved as a server-sent event stream is folded
back into one message. Bodies may be JSON text, a `{string: ...}` wrapper, or gzip bytes.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import yaml

from scarbook.text import plural
from scarbook.transcripts import anthropic_api, openai
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import NotThisFormat, Transcript
from scarbook.transcripts.source import Source

FORMAT = "http-cassette"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _document(src: Source) -> Any:
    if src.is_json:
        return src.json
    if src.text is None:
        raise NotThisFormat("the file is not UTF-8 text")
    try:
        return yaml.load(src.text, Loader=_Loader)  # noqa: S506 — the safe loader (C or Python)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise NotThisFormat(f"YAML that does not parse{where}") from None


def _interactions(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict) and isinstance(doc.get("interactions"), list):
        return [i for i in doc["interactions"] if isinstance(i, dict)]
    if isinstance(doc, list):
        return [i for i in doc if isinstance(i, dict) and "request" in i]
    if isinstance(doc, dict) and isinstance(doc.get("request"), dict) and isinstance(doc.get("response"), dict):
        return [doc]
    raise NotThisFormat("no `interactions` list and no {request, response} exchange")


def _body(part: Any) -> Any:
    """A request's or response's body, as JSON when it is JSON, else text (an SSE stream)."""
    if not isinstance(part, dict):
        return None
    body = part.get("body", part.get("content"))
    if isinstance(body, dict) and body.get("type") in ("json", "text", "base64") and "content" in body:
        body = body["content"]  # pydantic-ai's cassettes: {type: json, content: {...}}
    if isinstance(body, dict) and ("string" in body or "base64_string" in body):
        body = body.get("string", body.get("base64_string"))
    if isinstance(body, bytes):
        try:
            body = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
        except (OSError, EOFError):
            return None
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return body
    return body


def _url(request: dict[str, Any]) -> str:
    return str(request.get("uri") or request.get("url") or request.get("path") or "")


def _api(url: str, body: Any) -> str | None:
    if url.endswith("/messages") or "/v1/messages" in url:
        return "anthropic"
    if "/chat/completions" in url:
        return "openai"
    if url.endswith("/responses") or "/v1/responses" in url:
        return "openai"
    if isinstance(body, dict) and ("messages" in body or "input" in body):
        return "anthropic" if "max_tokens" in body and "messages" in body and "system" in body else "openai"
    return None


def _sse_events(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            try:
                value = json.loads(line[5:].strip())
            except ValueError:
                continue
            if isinstance(value, dict):
                events.append(value)
    return events


def _openai_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Chat Completions chunks folded into one response (text and tool calls)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    model = None
    for ev in events:
        model = ev.get("model") or model
        for choice in ev.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for tc in delta.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                call = calls.setdefault(int(tc.get("index") or 0) if isinstance(tc.get("index"), int) else 0,
                                        {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                call["id"] = tc.get("id") or call["id"]
                fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else {}
                call["function"]["name"] += str(fn.get("name") or "")
                call["function"]["arguments"] += str(fn.get("arguments") or "")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"object": "chat.completion", "model": model, "choices": [{"message": message}]}


def _exchange(request: dict[str, Any], response: dict[str, Any], src: Source) -> Transcript:
    req_body, resp_body = _body(request), _body(response)
    api = _api(_url(request), req_body)
    if api is None:
        raise NotThisFormat(f"the request to {_url(request) or 'an unknown URL'} is not a model call")
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    if api == "anthropic":
        stream = isinstance(resp_body, str) and "message_start" in resp_body
        if isinstance(resp_body, dict) and isinstance(resp_body.get("content"), list):
            resp_body = {"type": "message", "role": "assistant", **resp_body}  # some recorders drop them
        pair = {"request": req_body, "response": None if stream or not isinstance(resp_body, dict)
                or resp_body.get("type") != "message" else resp_body}
        t = anthropic_api.read_value(pair, src.path)
        if stream:
            anthropic_api.read_stream(_sse_events(resp_body), t)
    else:
        if isinstance(resp_body, str) and "data:" in resp_body:
            resp_body = _openai_stream(_sse_events(resp_body))
        pair = {"request": req_body, "response": resp_body if isinstance(resp_body, dict)
                and ("choices" in resp_body or "output" in resp_body) else None}
        t = openai.read_value(pair, src.path)
    if isinstance(code, int) and code >= 400:
        t.warnings.append(f"the model call answered HTTP {code}: {str(resp_body)[:200]}")
    return t


def parse(src: Source) -> Transcript:
    interactions = _interactions(_document(src))
    calls = [(i["request"], i.get("response") or {}) for i in interactions
             if isinstance(i.get("request"), dict) and _api(_url(i["request"]), _body(i["request"])) is not None]
    if not calls:
        raise NotThisFormat(f"{plural(len(interactions), 'HTTP exchange')}, none of them a call to the "
                            "Anthropic Messages API or OpenAI")
    t = _exchange(*calls[-1], src)
    t.format = FORMAT
    if len(calls) > 1:
        t.warnings.append(f"the cassette holds {plural(len(calls), 'model call')}; the last one's conversation is "
                          "imported (each call repeats the history before it)")
    return finish_transcript(t)
