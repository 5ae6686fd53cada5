"""Real-shaped logs of every transcript format, by record count, for benchmarks/transcript_bench.py.

Each generator writes `records` records (a JSON line, a stream event, an item of a document's list, a
line of text) shaped as the format's real files are (tests/fixtures/transcripts and the corpus show
them): an agent loop of prompts, replies, tool calls and their results, files written and read. The
`kind` says what one bare parse of the file is: `lines` (json.loads per line), `document` (one
json.loads), `sse` (json.loads per `data:` line) or `text` (json.loads of each line as a JSON string).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

WORDS = ["the", "agent", "reads", "the", "file", "then", "writes", "a", "summary", "of", "each", "section", "and",
         "checks", "the", "result", "again", "before", "it", "answers", "with", "what", "it", "did", "and", "why", "it",
         "chose", "that", "way"]


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def file_body(rng: random.Random, lines: int) -> str:
    return "".join(f"{text(rng, rng.randint(4, 12))}\n" for _ in range(lines))


def _steps(rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """An agent's steps, forever: (tool, path, content or output) — writes, reads and shell commands."""
    files: dict[str, str] = {}
    while True:
        name = f"src/mod{rng.randint(0, 40)}.py"
        pick = rng.random()
        if pick < 0.35 or name not in files:
            files[name] = file_body(rng, rng.randint(5, 40))
            yield "write", name, files[name]
        elif pick < 0.7:
            yield "read", name, files[name]
        else:
            yield "shell", "pytest -q tests/", file_body(rng, rng.randint(3, 30))


def _jsonl(fh: TextIO, values: Iterator[dict[str, Any]], records: int) -> None:
    for _, value in zip(range(records), values, strict=False):
        fh.write(json.dumps(value) + "\n")


def scarbook_native(fh: TextIO, records: int, rng: random.Random) -> None:
    def values() -> Iterator[dict[str, Any]]:
        yield {"type": "task", "text": "Refactor the modules under src/ and keep the tests green"}
        for k, (tool, path, body) in enumerate(_steps(rng)):
            cid = f"c{k}"
            yield {"type": "model_call", "model": "claude-sonnet-4-5", "input_tokens": 900, "output_tokens": 120}
            yield {"type": "assistant", "text": text(rng, 20)}
            if tool == "write":
                yield {"type": "tool_call", "id": cid, "name": "write_file", "input": {"path": path, "content": body}}
                yield {"type": "tool_result", "id": cid, "output": "ok", "is_error": False}
            elif tool == "read":
                yield {"type": "tool_call", "id": cid, "name": "read_file", "input": {"path": path}}
                yield {"type": "tool_result", "id": cid, "output": body, "is_error": False}
            else:
                yield {"type": "tool_call", "id": cid, "name": "bash", "input": {"command": path}}
                yield {"type": "tool_result", "id": cid, "output": body, "is_error": False}
            yield {"type": "usage", "model": "claude-sonnet-4-5", "input_tokens": 900, "output_tokens": 120}
    _jsonl(fh, values(), records - 1)
    fh.write(json.dumps({"type": "final", "text": "Refactored; the tests pass."}) + "\n")


def codex_exec(fh: TextIO, records: int, rng: random.Random) -> None:
    def values() -> Iterator[dict[str, Any]]:
        yield {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}
        for k, (tool, path, body) in enumerate(_steps(rng)):
            yield {"type": "turn.started"}
            yield {"type": "item.completed", "item": {"id": f"r{k}", "type": "reasoning", "text": text(rng, 30)}}
            command = f"bash -lc 'cat {path}'" if tool != "shell" else f"bash -lc '{path}'"
            yield {"type": "item.started", "item": {"id": f"i{k}", "type": "command_execution", "command": command,
                                                    "aggregated_output": "", "exit_code": None, "status": "in_progress"}}
            yield {"type": "item.completed", "item": {"id": f"i{k}", "type": "command_execution", "command": command,
                                                      "aggregated_output": body, "exit_code": 0, "status": "completed"}}
            if tool == "write":
                yield {"type": "item.completed", "item": {"id": f"f{k}", "type": "file_change", "status": "completed",
                                                          "changes": [{"path": f"/w/{path}", "kind": "update"}]}}
            yield {"type": "item.completed", "item": {"id": f"m{k}", "type": "agent_message", "text": text(rng, 25)}}
            yield {"type": "turn.completed", "usage": {"input_tokens": 24763, "cached_input_tokens": 24448,
                                                       "output_tokens": 122}}
    _jsonl(fh, values(), records)


def codex_rollout(fh: TextIO, records: int, rng: random.Random) -> None:
    def values() -> Iterator[dict[str, Any]]:
        stamp = "2026-01-03T04:05:10.000Z"
        yield {"timestamp": stamp, "type": "session_meta", "payload": {"id": "3333", "timestamp": stamp, "cwd": "/w",
                                                                       "originator": "codex_cli_rs"}}
        for k, (tool, path, body) in enumerate(_steps(rng)):
            yield {"timestamp": stamp, "type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5-codex"}}
            yield {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": text(rng, 15)}]}}
            command = ["bash", "-lc", f"cat {path}" if tool != "shell" else path]
            yield {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "function_call", "name": "shell", "call_id": f"c{k}", "arguments": json.dumps({"command": command})}}
            yield {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{k}",
                "output": json.dumps({"output": body, "metadata": {"exit_code": 0}})}}
            yield {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text(rng, 25)}]}}
            yield {"timestamp": stamp, "type": "event_msg", "payload": {"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": 1000 * k, "cached_input_tokens": 900 * k, "output_tokens": 90 * k}}}}
    _jsonl(fh, values(), records)


def plain_text(fh: TextIO, records: int, rng: random.Random) -> None:
    for k in range(records):
        fh.write(f"[{k:07d}] step {k}: {text(rng, rng.randint(3, 12))}\n")


def _api_turns(rng: random.Random) -> Iterator[tuple[str, str, str, str]]:
    for k, (tool, path, body) in enumerate(_steps(rng)):
        yield f"toolu_{k:08d}", tool, path, body


def anthropic_messages(fh: TextIO, records: int, rng: random.Random) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Refactor the modules under src/"}]
    for cid, tool, path, body in _api_turns(rng):
        if len(messages) >= records - 1:
            break
        name, inp = ("write_file", {"path": path, "content": body}) if tool == "write" else \
            ("read_file", {"path": path}) if tool == "read" else ("bash", {"command": path})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": text(rng, 15)},
                                                          {"type": "tool_use", "id": cid, "name": name, "input": inp}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid,
                                                      "content": "ok" if tool == "write" else body}]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Refactored."}]})
    json.dump({"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": "You edit files.", "messages": messages}, fh)


def openai_chat(fh: TextIO, records: int, rng: random.Random) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You edit files."},
                                      {"role": "user", "content": "Refactor the modules under src/"}]
    for cid, tool, path, body in _api_turns(rng):
        if len(messages) >= records - 1:
            break
        name, inp = ("write_file", {"path": path, "content": body}) if tool == "write" else \
            ("read_file", {"path": path}) if tool == "read" else ("bash", {"command": path})
        messages.append({"role": "assistant", "content": text(rng, 15), "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(inp)}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "content": "ok" if tool == "write" else body})
    messages.append({"role": "assistant", "content": "Refactored."})
    json.dump({"model": "gpt-4.1", "messages": messages}, fh)


def anthropic_stream(fh: TextIO, records: int, rng: random.Random) -> None:
    def event(value: dict[str, Any]) -> str:
        return f"event: {value['type']}\ndata: {json.dumps(value)}\n\n"
    fh.write(event({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                         "model": "claude-sonnet-4-5", "content": [],
                                                         "usage": {"input_tokens": 410, "output_tokens": 1}}}))
    fh.write(event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    for _ in range(records - 5):
        fh.write(event({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": text(rng, rng.randint(1, 6)) + " "}}))
    fh.write(event({"type": "content_block_stop", "index": 0}))
    fh.write(event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": records}}))
    fh.write(event({"type": "message_stop"}))


def otel(fh: TextIO, records: int, rng: random.Random) -> None:
    """One OTLP JSON export: a chat span and a tool span a step (each chat span keeps its last messages,
    not the whole history, so the file grows linearly)."""
    def attr(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
    spans = []
    for k, (cid, _, path, body) in zip(range(records // 2), _api_turns(rng), strict=False):
        start = 1731574800000000000 + k * 2_000_000_000
        spans.append({"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": f"c{k:x}", "parentSpanId": "a0",
                      "name": "chat gpt-4.1", "kind": 3, "startTimeUnixNano": str(start),
                      "endTimeUnixNano": str(start + 900_000_000), "attributes": [
                          attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "gpt-4.1"),
                          attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [
                              {"type": "text", "content": "Refactor the modules under src/"}]}])),
                          attr("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                              {"type": "text", "content": text(rng, 12)},
                              {"type": "tool_call", "id": cid, "name": "read_file", "arguments": {"path": path}}]}])),
                          attr("gen_ai.usage.input_tokens", 900), attr("gen_ai.usage.output_tokens", 120)]})
        spans.append({"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": f"t{k:x}", "parentSpanId": "a0",
                      "name": "execute_tool read_file", "kind": 1, "startTimeUnixNano": str(start + 1_000_000_000),
                      "endTimeUnixNano": str(start + 1_100_000_000), "attributes": [
                          attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "read_file"),
                          attr("gen_ai.tool.call.id", cid), attr("gen_ai.tool.call.arguments", json.dumps({"path": path})),
                          attr("gen_ai.tool.call.result", body)]})
    json.dump({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "bench-agent")]},
                                  "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}, fh)


def swe_agent(fh: TextIO, records: int, rng: random.Random) -> None:
    steps = []
    for (tool, path, body), _ in zip(_steps(rng), range(records), strict=False):
        action = f"open {path}" if tool == "read" else f"create {path}" if tool == "write" else path
        steps.append({"action": action, "observation": body, "thought": text(rng, 20), "response": text(rng, 25),
                      "state": json.dumps({"open_file": path, "working_dir": "/repo"}), "execution_time": 0.1})
    json.dump({"environment": "swe_main", "trajectory": steps,
               "history": [{"role": "system", "content": "You are an autonomous programmer.", "agent": "primary"},
                           {"role": "user", "content": "<issue>\nTimeSeries: misleading exception\n</issue>",
                            "agent": "primary"}],
               "info": {"submission": "diff --git a/src/mod1.py b/src/mod1.py\n", "exit_status": "submitted"}}, fh)


def mini_swe_agent(fh: TextIO, records: int, rng: random.Random) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."},
                                      {"role": "user", "content": "<pr_description>\nadd() subtracts\n</pr_description>"}]
    for tool, path, body in _steps(rng):
        if len(messages) >= records - 1:
            break
        command = f"cat {path}" if tool != "shell" else path
        messages.append({"role": "assistant", "content": f"THOUGHT: {text(rng, 20)}\n\n```bash\n{command}\n```"})
        messages.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{body}</output>"})
    messages.append({"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"})
    json.dump({"info": {"exit_status": "Submitted", "submission": "diff --git a/calc.py b/calc.py\n"},
               "messages": messages, "trajectory_format": "mini-swe-agent-1"}, fh)


def http_cassette(fh: TextIO, records: int, rng: random.Random) -> None:
    """A JSON cassette (`{"interactions": [...]}`): one Messages API call an interaction, each repeating only
    the prompt (a loop of independent calls, so the file grows linearly)."""
    interactions = []
    for k in range(records):
        request = {"model": "claude-sonnet-4-5", "max_tokens": 512, "system": "s",
                   "messages": [{"role": "user", "content": f"Summarise step {k}: {text(rng, 12)}"}]}
        response = {"id": f"msg_{k}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": text(rng, 25)}], "usage": {"input_tokens": 30, "output_tokens": 25}}
        interactions.append({"request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                                         "body": json.dumps(request), "headers": {"content-type": ["application/json"]}},
                             "response": {"status": {"code": 200, "message": "OK"}, "body": {"string": json.dumps(response)},
                                          "headers": {"content-type": ["application/json"]}}})
    json.dump({"interactions": interactions, "version": 1}, fh)


# name -> (generator, what one bare parse is, the format the import must report)
SHAPES: dict[str, tuple[Callable[[TextIO, int, random.Random], None], str, str]] = {
    "scarbook": (scarbook_native, "lines", "scarbook"),
    "codex-exec": (codex_exec, "lines", "codex"),
    "codex-rollout": (codex_rollout, "lines", "codex"),
    "plain": (plain_text, "text", "plain"),
    "anthropic-messages": (anthropic_messages, "document", "anthropic-messages"),
    "anthropic-stream": (anthropic_stream, "sse", "anthropic-stream"),
    "openai-chat": (openai_chat, "document", "openai-chat"),
    "otel": (otel, "document", "otel"),
    "swe-agent": (swe_agent, "document", "swe-agent"),
    "mini-swe-agent": (mini_swe_agent, "document", "mini-swe-agent"),
    "http-cassette": (http_cassette, "document", "http-cassette"),
}


def write_shape(name: str, path: Path, records: int, seed: int = 7) -> None:
    make = SHAPES[name][0]
    with open(path, "w", encoding="utf-8") as fh:
        make(fh, records, random.Random(seed))
