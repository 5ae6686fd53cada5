"""HTTP cassettes of model calls: VCR / pytest-recording YAML (`interactions: [{request, response}]`),
the same as JSON, one `{request, response: {status, headers, body}}` exchange saved as JSON, and a
recorded response alone (`{status, headers, body}`: the answer, with no request to take a task from).

Each interaction is an HTTP exchange; those that call the Anthropic Messages API or OpenAI (Chat
Completions or Responses) are read. An agent's calls each repeat the conversation before them, so
the last model call (its request's history and its reply) is the conversation; the number of calls
is said in a warning when there are several; a Responses API call that continues an earlier one
(`previous_response_id`) carries that call's conversation before its own. A reply saved as a
server-sent event stream is folded back into one message (`transcripts/sse.py`, as the recorder does). Bodies may be JSON text, a `{string: ...}`
wrapper, gzip bytes, or already parsed (`parsed_body`, pydantic-ai's `{type: json, content}`). The
legacy Text Completions API (`/v1/complete`: a `Human:` / `Assistant:` prompt) is read as messages.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from typing import Any

import yaml

from scarbook.errors import ScarbookError
from scarbook.text import plural
from scarbook.transcripts import anthropic_api, openai
from scarbook.transcripts.expand import TooExpanded, read_expanded
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import STREAMED, Broken, walk
from scarbook.transcripts.model import NothingToImport, NotThisFormat, Transcript
from scarbook.transcripts.source import Source
from scarbook.transcripts.sse import fold_chat_chunks, sse_events

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


def is_response_alone(doc: Any) -> bool:
    """A recorded HTTP response without its request: `{status, headers, body}`."""
    return isinstance(doc, dict) and "body" in doc and "status" in doc and "request" not in doc


def _interactions(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict) and isinstance(doc.get("interactions"), list):
        return [i for i in doc["interactions"] if isinstance(i, dict)]
    if isinstance(doc, list):
        return [i for i in doc if isinstance(i, dict) and "request" in i]
    if isinstance(doc, dict) and isinstance(doc.get("request"), dict) and isinstance(doc.get("response"), dict):
        return [doc]
    if is_response_alone(doc):
        return [{"request": {}, "response": doc}]
    raise NotThisFormat("no `interactions` list, no {request, response} exchange and no {status, headers, body} "
                        "response")


def _body(part: Any) -> Any:
    """A request's or response's body, as JSON when it is JSON, else text (an SSE stream)."""
    if not isinstance(part, dict):
        return None
    body = part["parsed_body"] if "parsed_body" in part else part.get("body", part.get("content"))
    if isinstance(body, dict) and body.get("type") in ("json", "text", "base64") and "content" in body:
        body = body["content"]  # pydantic-ai's cassettes: {type: json, content: {...}}
    if isinstance(body, dict) and ("string" in body or "base64_string" in body):
        body = body.get("string", body.get("base64_string"))
    if isinstance(body, bytes):
        try:  # capped (expand.py): a gzip bomb in a cassette is refused, never expanded
            body = read_expanded(gzip.GzipFile(fileobj=io.BytesIO(body)), "a gzip body", len(body)) \
                if body[:2] == b"\x1f\x8b" else body
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
    if "/v1/complete" in url and not url.rstrip("/").endswith("completions"):
        return "anthropic-complete"
    if url.endswith("/messages") or "/v1/messages" in url:
        return "anthropic"
    if "/chat/completions" in url:
        return "openai"
    if url.endswith("/responses") or "/v1/responses" in url:
        return "openai"
    if isinstance(body, dict) and ("messages" in body or "input" in body):
        return "anthropic" if "max_tokens" in body and "messages" in body and "system" in body else "openai"
    return None


def _reply_api(body: Any) -> str | None:
    """Which API a response body alone comes from (a response recorded without its request)."""
    if isinstance(body, str) and "message_start" in body:
        return "anthropic"
    if isinstance(body, str) and "data:" in body and "choices" in body:
        return "openai"
    if not isinstance(body, dict):
        return None
    if body.get("type") == "message" and isinstance(body.get("content"), list):
        return "anthropic"
    if "choices" in body or body.get("object") == "response" or isinstance(body.get("output"), list):
        return "openai"
    if isinstance(body.get("completion"), str):
        return "anthropic-complete"
    return None


_TURN = re.compile(r"\n\n(Human|Assistant):")


def _complete_as_messages(request: Any, response: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A Text Completions exchange (`prompt: "\\n\\nHuman: …\\n\\nAssistant:"`, reply `completion`) as a
    Messages API request and response."""
    prompt = request.get("prompt") if isinstance(request, dict) else None
    messages: list[dict[str, Any]] = []
    if isinstance(prompt, str):
        parts = _TURN.split("\n\n" + prompt.lstrip("\n"))
        for role, text in zip(parts[1::2], parts[2::2], strict=False):
            if text.strip():
                messages.append({"role": "user" if role == "Human" else "assistant", "content": text.strip()})
    body: dict[str, Any] = {"model": request.get("model") if isinstance(request, dict) else None,
                            "messages": messages or [{"role": "user", "content": ""}]}
    reply = None
    if isinstance(response, dict) and isinstance(response.get("completion"), str):
        reply = {"type": "message", "role": "assistant", "model": response.get("model"),
                 "content": [{"type": "text", "text": response["completion"].strip()}]}
    return body, reply


def _exchange(api: str, req_body: Any, resp_body: Any, code: Any, src: Source) -> Transcript:
    if api == "anthropic-complete":
        req_body, resp_body = _complete_as_messages(req_body, resp_body)
        api = "anthropic"
    request = req_body if isinstance(req_body, dict) and req_body else None
    stream = False
    if api == "anthropic":
        stream = isinstance(resp_body, str) and "message_start" in resp_body
        if isinstance(resp_body, dict) and isinstance(resp_body.get("content"), list):
            resp_body = {"type": "message", "role": "assistant", **resp_body}  # some recorders drop them
        reply = None if stream or not isinstance(resp_body, dict) or resp_body.get("type") != "message" else resp_body
        t = anthropic_api.read_value({"request": request, "response": reply} if request else reply or {}, src.path)
        if stream:
            anthropic_api.read_stream([e for e in sse_events(resp_body) if isinstance(e, dict)], t)
    else:
        if isinstance(resp_body, str) and "data:" in resp_body:
            resp_body = fold_chat_chunks(sse_events(resp_body))
        reply = resp_body if isinstance(resp_body, dict) and ("choices" in resp_body or "output" in resp_body) else None
        t = openai.read_value({"request": request, "response": reply} if request else reply or {}, src.path)
    if isinstance(code, int) and code >= 400:
        t.warnings.append(f"the model call answered HTTP {code}: {str(resp_body)[:200]}")
    elif reply is None and not stream:
        seen = f"keys {', '.join(map(str, resp_body))}" if isinstance(resp_body, dict) and resp_body else \
            "no body" if resp_body in (None, "", {}) else f"{str(resp_body)[:60]!r}"
        raise NothingToImport(f"the last model call's response ({seen}) is not a reply of the "
                              f"{'Anthropic Messages API' if api == 'anthropic' else 'OpenAI API'}: the model's "
                              "answer is not in the log; import a cassette that recorded the response")
    return t


def _status(response: dict[str, Any]) -> Any:
    status = response.get("status")
    return status.get("code") if isinstance(status, dict) else status


def _call(interaction: dict[str, Any]) -> tuple[str, Any, Any, Any] | None:
    """(api, request body, response body, HTTP status) of an interaction that is a model call."""
    request, response = interaction.get("request"), interaction.get("response") or {}
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    req_body, resp_body = _body(request), _body(response)
    api = _api(_url(request), req_body) if request else _reply_api(resp_body)
    return (api, req_body, resp_body, _status(response)) if api is not None else None


class _Calls:
    """The model calls of a cassette, met one interaction at a time: the last one whole, and of each earlier
    Responses API call only what a later one continuing it (`previous_response_id`) needs."""

    def __init__(self) -> None:
        self.interactions = 0
        self.calls = 0
        self.last: tuple[str, Any, Any, Any] | None = None
        self.responses: dict[str, tuple[Any, Any, list[Any]]] = {}  # id -> (input, previous id, output messages)

    def add(self, interaction: Any, *, listed: bool = False) -> None:
        if not isinstance(interaction, dict) or listed and "request" not in interaction:
            return
        self.interactions += 1
        call = _call(interaction)
        if call is None:
            return
        self.calls += 1
        self.last = call
        _, req, resp, _ = call
        if isinstance(req, dict) and isinstance(resp, dict) and isinstance(resp.get("id"), str) \
                and isinstance(resp.get("output"), list):
            out = [i for i in resp["output"] if isinstance(i, dict) and i.get("type") == "message"]
            self.responses[resp["id"]] = (req.get("input"), req.get("previous_response_id"), out)

    def chained(self) -> tuple[str, Any, Any, Any]:
        """The last call, with the input of the Responses API calls it continues put before its own (the
        server keeps the history; the request holds only the new turn)."""
        assert self.last is not None
        api, req, resp, code = self.last
        if not isinstance(req, dict) or not isinstance(req.get("input"), (list, str)):
            return self.last
        items = _items(req["input"])
        seen: set[str] = set()
        previous = req.get("previous_response_id")
        while isinstance(previous, str) and previous in self.responses and previous not in seen:
            seen.add(previous)
            earlier_input, previous, earlier_out = self.responses[previous]
            items = _items(earlier_input) + earlier_out + items
        return api, {**req, "input": items}, resp, code


def _items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def parse(src: Source) -> Transcript:
    calls = _Calls()
    try:
        if src.shape.kind in ("json-object", "json-array"):  # read an interaction at a time
            try:
                doc = walk(src.path, {"", "interactions"}, lambda where, i: calls.add(i, listed=where == ""))
            except Broken:
                raise NotThisFormat("JSON that does not parse") from None
            if doc is not STREAMED and not (isinstance(doc, dict) and doc.get("interactions") is STREAMED):
                for interaction in _interactions(doc):  # one exchange, or a response alone
                    calls.add(interaction)
        else:
            for interaction in _interactions(_document(src)):
                calls.add(interaction)
    except TooExpanded as exc:
        raise ScarbookError(f"{src.path}: this cassette is refused: {exc}") from None
    if calls.last is None:
        raise NotThisFormat(f"{plural(calls.interactions, 'HTTP exchange')}, none of them a call to the "
                            "Anthropic Messages API or OpenAI")
    t = _exchange(*calls.chained(), src)
    t.format = FORMAT
    if calls.calls > 1:
        t.warnings.append(f"the cassette holds {plural(calls.calls, 'model call')}; the last one's conversation is "
                          "imported (each call repeats the history before it)")
    return finish_transcript(t)
