"""A scripted Messages-API server on 127.0.0.1 for judge tests.

The real `anthropic.AsyncAnthropic` reaches it through `base_url`. Each test queues replies
(a tool call, an HTTP error status, a delay) and reads back every request body the SDK sent.

    def test_x(judge_server):
        judge_server.push(tool_reply([("PASS", "ok")]))
        judge_server.default = status_reply(529)      # what to answer once the queue is empty
        ...
        judge_server.requests[0]["body"]["messages"]

Prompt caching (issue 27): with `judge_server.cache_usage = True`, a reply scripted without its own
usage reports usage computed from the request as the Messages API does — tokens estimated at 4
characters each; a prefix up to a `cache_control` breakpoint (tools, system, message blocks, in
that order, for one model) of at least `cache_min_tokens` is written on first sight
(cache_creation_input_tokens) and read afterwards (cache_read_input_tokens); input_tokens is the rest.

Message Batches (issue 27): GET /v1/messages/batches lists them, newest first (one page);
POST /v1/messages/batches creates a batch (custom_id checked as the API
does: 1-64 of [a-zA-Z0-9_-], unique), GET /v1/messages/batches/ID retrieves it (processing_status,
request_counts, results_url once ended), GET .../results gives one JSON line per request, in reverse
order (the API does not promise request order). A batch ends at its first retrieve, unless
`hold_batches` is set: then it stays in_progress until `end_batches()`. Each request is answered when
its batch ends, from the same queue as online calls (`batch_reply("expired")` / "canceled" script
those outcomes; an HTTP error status becomes an "errored" result). `batch_read_status` makes every
GET of a batch answer that HTTP status instead (an outage while scarbook waits);
`batch_create_statuses` scripts the answers to the next creates; `batch_wrong_shape` makes every batch
endpoint answer 200 with that body (a reply that is not what was asked).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

TOOL = "record_rubric_verdicts"
# How long a test's judge waits for this server. It answers in milliseconds on an idle machine, but on a
# loaded one (2 cores, 4 xdist workers, load 20) the test process, the server's thread or a scarbook
# subprocess can be starved for seconds: a 5 s bound turned a healthy call into a timeout (issue 37).
# A test about timeouts sets its own, short one.
JUDGE_TIMEOUT_S = 60

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class ScriptedReply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    delay_s: float = 0.0
    auto_usage: bool = False  # scripted without usage: the server may compute it (cache_usage)
    batch_outcome: str = ""  # in a batch: "expired" or "canceled" instead of an answer
    raw: bytes | None = None  # sent as it is (content type `content_type`) instead of `body` as JSON
    content_type: str = "application/json"


def batch_reply(outcome: str) -> ScriptedReply:
    """A batch request's result that is no answer: "expired" or "canceled"."""
    return ScriptedReply(0, {}, batch_outcome=outcome)


def tool_reply(
    verdicts: list[tuple[str, str]] | None = None,
    *,
    tool_input: Any = None,
    text: str | None = None,
    usage: dict[str, int] | None = None,
    delay_s: float = 0.0,
    name: str = TOOL,
) -> ScriptedReply:
    """A 200 reply with a forced tool call. `verdicts` = [(PASS|FAIL, reason)] numbered from 1;
    `tool_input` overrides it with any raw input (for malformed replies); `text` adds a text block first;
    `name`: the tool called (the verdict tool unless said: propose_rubric for a rubric draft)."""
    if tool_input is None:
        tool_input = {"items": [{"item": n, "verdict": v, "reason": r} for n, (v, r) in enumerate(verdicts or [], 1)]}
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    content.append({"type": "tool_use", "id": "toolu_01", "name": name, "input": tool_input})
    return ScriptedReply(200, _message(content, "tool_use", usage), delay_s, auto_usage=usage is None)


def text_reply(text: str, *, usage: dict[str, int] | None = None) -> ScriptedReply:
    """A 200 reply without any tool call."""
    return ScriptedReply(200, _message([{"type": "text", "text": text}], "end_turn", usage), auto_usage=usage is None)


def status_reply(status: int, message: str = "scripted error", delay_s: float = 0.0) -> ScriptedReply:
    body = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}
    return ScriptedReply(status, body, delay_s)


def chat_reply(text: str | None = None, tool_calls: list[tuple[str, str, dict[str, Any]]] | None = None,
               usage: dict[str, int] | None = None) -> ScriptedReply:
    """A 200 OpenAI Chat Completions reply: text and/or tool calls [(id, name, arguments)]."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in tool_calls]
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": usage or {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}
    return ScriptedReply(200, body)


def raw_reply(data: bytes, content_type: str = "application/json", status: int = 200) -> ScriptedReply:
    """Bytes sent as they are (a response no parser knows, a huge one)."""
    return ScriptedReply(status, {}, raw=data, content_type=content_type)


def _sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode())
    return out


def anthropic_stream(message: dict[str, Any]) -> list[bytes]:
    """A Messages response as the API streams it: message_start, each block's start, deltas, stop."""
    usage = message.get("usage") or {}
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message.get("content") or []):
        if block.get("type") == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            text = block["text"]
            for part in (text[: len(text) // 2], text[len(text) // 2:]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": part}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {**block, "input": {}}}))
            args = json.dumps(block.get("input") or {})
            for part in (args[: len(args) // 2], args[len(args) // 2:]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta", "partial_json": part}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message.get("stop_reason")},
                                     "usage": {"output_tokens": usage.get("output_tokens", 0)}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def chat_stream(body: dict[str, Any]) -> list[bytes]:
    """A Chat Completions response as the API streams it (usage in the last chunk)."""
    message = body["choices"][0]["message"]
    base = {"id": body.get("id"), "object": "chat.completion.chunk", "model": body.get("model")}
    chunks: list[tuple[str | None, Any]] = [(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]})]
    if message.get("content"):
        chunks.append((None, {**base, "choices": [{"index": 0, "delta": {"content": message["content"]}}]}))
    for n, call in enumerate(message.get("tool_calls") or []):
        chunks.append((None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": n, "id": call["id"], "type": "function",
             "function": {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}}]}}]}))
    chunks.append((None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": body["choices"][0].get("finish_reason")}],
                          "usage": body.get("usage")}))
    chunks.append((None, "[DONE]"))
    return _sse(chunks)


OUTPUT_TOKENS = 100


def estimate_tokens(part: Any) -> int:
    """About 4 characters a token, as a rule of thumb for English text and JSON."""
    return max(1, len(json.dumps(part, sort_keys=True, ensure_ascii=False)) // 4)


def _prefix_parts(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """The request in cache-prefix order (tools, system, message blocks): (part without its
    cache_control, whether a breakpoint closes it)."""
    parts: list[tuple[Any, bool]] = []

    def add(part: Any) -> None:
        if isinstance(part, dict) and "cache_control" in part:
            parts.append(({k: v for k, v in part.items() if k != "cache_control"}, True))
        else:
            parts.append((part, False))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    for block in system if isinstance(system, list) else ([system] if system else []):
        add(block)
    for message in body.get("messages") or []:
        content = message.get("content")
        parts.append((message.get("role"), False))
        for block in content if isinstance(content, list) else [content]:
            add(block)
    return parts


def _message(content: list[dict[str, Any]], stop_reason: str, usage: dict[str, int] | None) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        or {"input_tokens": 1000, "output_tokens": 100, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
    }


class JudgeServer:
    def __init__(self) -> None:
        self.queue: deque[ScriptedReply] = deque()
        self.default: ScriptedReply | None = None
        # with the queue empty: called with each request's body (a batch request's params); its reply (None: the default)
        self.responder: Callable[[dict[str, Any]], ScriptedReply | None] | None = None
        self.requests: list[dict[str, Any]] = []
        self.unscripted = 0  # requests that found neither a queued reply nor a default
        self.on_request: Any = None  # called with the client's (host, port) while connected; returns extra keys
        # set: the rest of a stream waits for it after the first event (at most 5 s), so a test can
        # show the first event got through before the rest was sent; `stream_gate_at` events instead of 1
        self.stream_gate: threading.Event | None = None
        self.stream_gate_at = 1
        self.stream_gate_s = 5.0  # how long the gate holds at most
        self.stream_pause_s = 0.0  # between a stream's events after the gate (each then arrives on its own)
        self.cache_usage = False  # report prompt-cache usage computed from each request (issue 27)
        self.cache_min_tokens = 1024  # the shortest cacheable prefix (the Messages API's, for Sonnet)
        self._cached: set[str] = set()  # digests of the prefixes written to the prompt cache
        self.batches: dict[str, dict[str, Any]] = {}  # id -> {"requests", "status", "results"}
        self.hold_batches = False  # batches stay in_progress until end_batches()
        self.batch_read_status = 200  # another status: every GET of a batch answers it (an outage)
        self.batch_create_statuses: deque[int] = deque()  # the next batch creates answer these (200: create)
        # set: every batch endpoint answers 200 with this body instead (a vendor whose /v1/messages/batches
        # is something else, or a proxy's page): a reply that is not what was asked
        self.batch_wrong_shape: Any = None
        # set: a create makes its batch, then waits for this event (no time bound; stop() sets it) before it answers — a
        # client killed meanwhile sent the create and never heard its id
        self.batch_create_gate: threading.Event | None = None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: ScriptedReply) -> None:
        with self._lock:
            self.queue.extend(replies)

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    def user_texts(self) -> list[str]:
        """The single user message of every recorded request, as text."""
        texts = []
        for body in self.bodies():
            (message,) = body["messages"]
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
        return texts

    def usage_for(self, body: dict[str, Any]) -> dict[str, int]:
        """The usage the Messages API would report for `body`, given what this server cached so far."""
        parts = _prefix_parts(body)
        digest = hashlib.sha256(str(body.get("model")).encode())
        tokens = read = written = 0
        with self._lock:
            for part, breakpoint in parts:
                digest.update(json.dumps(part, sort_keys=True).encode())
                tokens += estimate_tokens(part)
                if not breakpoint or tokens < self.cache_min_tokens:
                    continue
                key = digest.copy().hexdigest()
                if key in self._cached:
                    read, written = tokens, 0
                else:
                    self._cached.add(key)
                    written = tokens - read
        return {"input_tokens": tokens - read - written, "output_tokens": OUTPUT_TOKENS,
                "cache_read_input_tokens": read, "cache_creation_input_tokens": written}

    def end_batches(self) -> None:
        """Every batch held in_progress ends now (its requests answered)."""
        with self._lock:
            held = [b for b in self.batches.values() if b["status"] == "in_progress"]
        for batch in held:
            self._end(batch)

    def batch_requests(self) -> list[dict[str, Any]]:
        """Every request of every batch, in the order they were submitted ({"custom_id", "params"})."""
        with self._lock:
            return [r for b in self.batches.values() for r in b["requests"]]

    def _end(self, batch: dict[str, Any]) -> None:
        results = []
        for request in batch["requests"]:
            reply = self._next(request.get("params"))
            if reply is None:
                self.unscripted += 1
                reply = status_reply(400, "judge_server: no scripted reply left")
            if reply.batch_outcome:
                result: dict[str, Any] = {"type": reply.batch_outcome}
            elif reply.status != 200:
                result = {"type": "errored", "error": reply.body}
            else:
                message = reply.body
                if self.cache_usage and reply.auto_usage:
                    message = {**message, "usage": self.usage_for(request["params"])}
                result = {"type": "succeeded", "message": message}
            results.append({"custom_id": request["custom_id"], "result": result})
        with self._lock:
            batch["results"] = results[::-1]
            batch["status"] = "ended"
            batch["ended_at"] = _now()

    def _batch_json(self, batch: dict[str, Any]) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch["status"] == "ended":
            for line in batch["results"]:
                counts[line["result"]["type"]] += 1
        else:
            counts["processing"] = len(batch["requests"])
        ended = batch["status"] == "ended"
        return {"id": batch["id"], "type": "message_batch", "processing_status": batch["status"],
                "request_counts": counts, "created_at": batch["created_at"], "expires_at": batch["created_at"],
                "ended_at": batch.get("ended_at"), "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{batch['id']}/results" if ended else None}

    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self.batch_create_gate is not None:
            self.batch_create_gate.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, body: Any = None) -> ScriptedReply | None:
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None and isinstance(body, dict):  # a reply chosen by what was asked
            reply = self.responder(body)
            if reply is not None:
                return reply
        return self.default

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                seen = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                if server.on_request is not None:  # e.g. which process sent it (tests/run/test_ray_*.py)
                    seen.update(server.on_request(self.client_address))
                with server._lock:
                    server.requests.append(seen)
                if self.path.split("?")[0] == "/v1/messages/batches":
                    self._create_batch(body)
                    return
                reply = server._next(body)
                if reply is None:
                    server.unscripted += 1
                    # x-should-retry: false so an unscripted request fails fast instead of retrying.
                    reply = status_reply(400, "judge_server: no scripted reply left")
                    extra = {"x-should-retry": "false"}
                else:
                    extra = {}
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                answer = reply.body
                if server.cache_usage and reply.auto_usage and isinstance(body, dict) and "messages" in body:
                    answer = {**answer, "usage": server.usage_for(body)}
                    seen["usage"] = answer["usage"]
                data = json.dumps(answer).encode() if reply.raw is None else reply.raw
                ctype = reply.content_type
                if reply.raw is None and reply.status == 200 and isinstance(body, dict) and body.get("stream"):
                    parts = anthropic_stream(answer) if self.path.endswith("messages") else chat_stream(answer)
                    self._stream(parts)
                    return
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(data)))
                    # The SDK honours retry-after-ms, so retry backoff costs a millisecond in tests.
                    self.send_header("retry-after-ms", "1")
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", kind)
                    self.send_header("content-length", str(len(data)))
                    self.send_header("retry-after-ms", "1")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _error(self, status: int, message: str) -> None:
                self._send(status, json.dumps(status_reply(status, message).body).encode())

            def _create_batch(self, body: Any) -> None:
                if server.batch_wrong_shape is not None:
                    return self._send(200, json.dumps(server.batch_wrong_shape).encode())
                with server._lock:
                    scripted = server.batch_create_statuses.popleft() if server.batch_create_statuses else 200
                if scripted != 200:
                    return self._error(scripted, "scripted create failure")
                requests = body.get("requests") if isinstance(body, dict) else None
                if not isinstance(requests, list) or not requests:
                    return self._error(400, "requests: at least one request is required")
                seen_ids: set[str] = set()
                for request in requests:
                    custom_id = request.get("custom_id") if isinstance(request, dict) else None
                    if not isinstance(custom_id, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", custom_id):
                        return self._error(400, f"custom_id {custom_id!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
                    if custom_id in seen_ids:
                        return self._error(400, f"custom_id {custom_id!r} is not unique in the batch")
                    if not isinstance(request.get("params"), dict):
                        return self._error(400, f"request {custom_id}: params must be an object")
                    seen_ids.add(custom_id)
                batch = {"id": "msgbatch_" + secrets.token_hex(12), "requests": requests, "status": "in_progress",
                         "results": [], "created_at": _now()}
                with server._lock:
                    server.batches[batch["id"]] = batch
                gate = server.batch_create_gate
                if gate is not None:  # held until the test lets go (stop() does at the latest): no time bound
                    gate.wait()
                self._send(200, json.dumps(server._batch_json(batch)).encode())

            def do_GET(self) -> None:
                if server.batch_read_status != 200:
                    return self._error(server.batch_read_status, "scripted outage")
                if server.batch_wrong_shape is not None:
                    return self._send(200, json.dumps(server.batch_wrong_shape).encode())
                if self.path.split("?")[0] == "/v1/messages/batches":  # the list, newest first, one page
                    with server._lock:
                        listed = [server._batch_json(b) for b in reversed(list(server.batches.values()))]
                    return self._send(200, json.dumps({"data": listed, "has_more": False,
                                                       "first_id": listed[0]["id"] if listed else None,
                                                       "last_id": listed[-1]["id"] if listed else None}).encode())
                m = re.fullmatch(r"/v1/messages/batches/([A-Za-z0-9_]+)(/results)?", self.path.split("?")[0])
                batch = server.batches.get(m.group(1)) if m else None
                if batch is None:
                    return self._error(404, f"no batch at {self.path}")
                if batch["status"] == "in_progress" and not server.hold_batches:
                    server._end(batch)
                if m.group(2):
                    if batch["status"] != "ended":
                        return self._error(400, "the batch is still processing: no results yet")
                    lines = "".join(json.dumps(line) + "\n" for line in batch["results"])
                    return self._send(200, lines.encode(), "application/binary")
                self._send(200, json.dumps(server._batch_json(batch)).encode())

            def _stream(self, parts: list[bytes]) -> None:
                """Server-sent events, one write each (a client sees them arrive one by one)."""
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("cache-control", "no-cache")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for i, part in enumerate(parts):
                        if i == server.stream_gate_at and server.stream_gate is not None:
                            server.stream_gate.wait(server.stream_gate_s)
                        elif i > server.stream_gate_at and server.stream_pause_s:
                            time.sleep(server.stream_pause_s)
                        self.wfile.write(part)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        return Handler


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@pytest.fixture
def judge_server():
    server = JudgeServer().start()
    try:
        yield server
    finally:
        server.stop()


def make_judge(server: JudgeServer, env: dict[str, str] | None = None, **settings: Any):
    """A real Judge pointed at `server`, with a fake key in its own env and fast defaults."""
    from scarbook.judge import Judge, JudgeSettings

    options: dict[str, Any] = {"base_url": server.url, "max_retries": 2, "timeout_s": JUDGE_TIMEOUT_S}
    options.update(settings)
    return Judge(JudgeSettings(**options), env=env if env is not None else {"ANTHROPIC_API_KEY": "sk-test-key"})
