"""Every transcript format scarbook reads, once: its name (what `--list` prints and `--format`
takes), its reader, the shapes it claims from a file's head (`Source.shape`), and the keys that mark
it (to name the closest format when nothing reads a file).

A format claims a file from the bounded prefix alone, so detection never parses a big file once per
format; a claimed file that its parser then refuses falls through to the next claimant.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scarbook.text import with_article
from scarbook.transcripts import (
    anthropic_api,
    cassette,
    claude_code,
    codex,
    codex_rollout,
    inspect_log,
    langchain,
    openai,
    openhands,
    openhands_eval,
    otel,
    otel_flat,
    plain,
    scarbook_native,
    swe_agent,
    web_export,
)
from scarbook.transcripts.inspect_json import starts_like_inspect_json
from scarbook.transcripts.inspect_zip import looks_like_eval_zip
from scarbook.transcripts.model import NotThisFormat, Transcript
from scarbook.transcripts.shape import Shape, utf8_command
from scarbook.transcripts.source import Source


@dataclass(frozen=True)
class Reader:
    name: str
    parse: Callable[[Source, bool], Transcript]  # (source, the user named this format)
    claims: Callable[[Source, Shape], bool]
    marks: frozenset[str]  # keys and record types that mark the format

    def read(self, src: Source, forced: bool) -> Transcript:
        try:
            return self.parse(src, forced)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError, UnicodeError) as exc:
            # a value of a type the reader did not expect where its format has another: this file is not
            # one this reader can read — a refusal like any other, never a traceback
            raise NotThisFormat(f"a value of an unexpected type ({type(exc).__name__}: {str(exc)[:80]})") from None


def _first(shape: Shape) -> dict[str, Any]:
    """The first record (JSON lines) or the whole small document's first item, when the head holds it."""
    for r in shape.records:
        if isinstance(r, dict):
            return r
    return {}


def _kind(record: dict[str, Any]) -> str | None:
    """A record's `type` when it is a string (a list there is wrongly typed input, and unhashable)."""
    kind = record.get("type")
    return kind if isinstance(kind, str) else None


def _is_json(shape: Shape) -> bool:
    return shape.kind in ("json-object", "json-array")


def _value(src: Source, shape: Shape) -> Any:
    """The whole document, parsed, when the head holds it whole (else None: decide from the keys)."""
    return src.json if shape.whole and _is_json(shape) else None


def _claims_inspect(src: Source, shape: Shape) -> bool:
    return looks_like_eval_zip(src.head, src.path) or starts_like_inspect_json(src.head) or (
        shape.kind == "json-object" and {"version", "eval"} <= set(shape.keys))


def _claims_scarbook(src: Source, shape: Shape) -> bool:
    first = _first(shape)
    return shape.kind == "json-lines" and _kind(first) in scarbook_native.TYPES and \
        not isinstance(first.get("message"), dict)


def _claims_claude_code(src: Source, shape: Shape) -> bool:
    if shape.kind == "json-lines":
        return any(claude_code.is_record_like(r) for r in shape.records[:8])
    if shape.kind == "json-object":
        return "loglines" in shape.keys or claude_code.is_record_like(_value(src, shape) or shape.values)
    return False


def _claims_claude_json(src: Source, shape: Shape) -> bool:
    if shape.kind == "json-object":
        return shape.values.get("type") == "result" and bool({"result", "session_id", "subtype"} & set(shape.keys))
    if shape.kind == "json-array":
        return bool({"user", "assistant", "system", "result"} & set(shape.types)) and (
            "message" in shape.keys or "session_id" in shape.keys or "uuid" in shape.keys)
    return False


def _claims_codex(src: Source, shape: Shape) -> bool:
    first = _first(shape)
    return shape.kind == "json-lines" and (_kind(first) in codex.EVENTS or codex_rollout.is_rollout_record(first)
                                           or codex_rollout.is_legacy_rollout(shape.records))


def _claims_otel(src: Source, shape: Shape) -> bool:
    keys = set(shape.keys)
    if "resourceSpans" in keys or ("spans" in keys and shape.kind == "json-object"):
        return True
    if shape.kind == "json-lines":
        return any(isinstance(r, dict) and ("resourceSpans" in r or otel_flat.is_flat_span(r))
                   for r in shape.records[:4])
    if _is_json(shape):
        value = _value(src, shape)
        if value is not None:
            items = value if isinstance(value, list) else [value]
            return any(otel_flat.is_flat_span(v) for v in items[:4])
        return bool(keys & {"attributes", "openinference", "llm"} or any(k.startswith(("gen_ai.", "llm.")) for k in keys))
    return shape.kind == "text" and src.head.lstrip().startswith(b"{")  # console exporter: documents one after another


def _claims_cassette(src: Source, shape: Shape) -> bool:
    if shape.kind == "yaml":
        return "interactions" in shape.keys
    keys = set(shape.keys)
    if shape.kind == "json-object" and {"status", "body"} <= keys and "request" not in keys:
        return True  # a response recorded alone
    return shape.kind in ("json-object", "json-lines") and ("interactions" in keys or {"request", "response"} <= keys)


def _claims_swe_agent(src: Source, shape: Shape) -> bool:
    keys = set(shape.keys)
    return shape.kind == "json-object" and (("trajectory" in keys and bool({"history", "info", "environment"} & keys))
                                            or ("history" in keys and b'"message_type"' in src.head))


_MINI_MARKS = (b"<returncode>", b"mswea_bash_command", b"COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")


def _claims_mini(src: Source, shape: Shape) -> bool:
    keys = set(shape.keys)
    if shape.kind == "json-array":  # the messages alone
        return {"role", "content"} <= keys and any(m in src.head for m in _MINI_MARKS)
    return shape.kind == "json-object" and ("trajectory_format" in keys or {"messages", "info"} <= keys)


def _claims_openhands(src: Source, shape: Shape) -> bool:
    """OpenHands' events: a list whose first item is an action (args) or observation (extras) with its source, or
    the UI's export `{"trajectory": [...]}` of them."""
    if shape.kind == "json-array":
        return openhands.is_event(_first(shape)) or ({"source", "action", "args"} <= set(shape.keys))
    return shape.kind == "json-object" and set(shape.keys) == {"trajectory"}


def _claims_openhands_eval(src: Source, shape: Shape) -> bool:
    """OpenHands' evaluation output: JSON lines of instances (`instance_id` with `history` or `test_result`), or
    one instance alone."""
    if shape.kind == "json-lines":
        return openhands_eval.is_instance(_first(shape))
    return shape.kind == "json-object" and "instance_id" in shape.keys and bool({"history", "test_result"} &
                                                                                set(shape.keys))


def _claims_web_export(src: Source, shape: Shape) -> bool:
    """A chat web app's export: conversations with a `mapping` (ChatGPT) or `chat_messages` (claude.ai)."""
    return _is_json(shape) and bool({"mapping", "chat_messages"} & set(shape.keys))


def _claims_langchain(src: Source, shape: Shape) -> bool:
    """A list of LangChain messages, a graph's state, a thread's state or a LangSmith run: a JSON document whose
    head holds a human or AI message (`"type": "human"`, a serialised `"lc": 1`) or a run's `run_type`."""
    return _is_json(shape) and langchain.looks_like_langchain(src.head)


def _claims_api(src: Source, shape: Shape) -> bool:
    """Messages API / OpenAI bodies: an object with messages, input, choices or output; an array; a
    stream (SSE, JSON lines or array of events)."""
    if shape.kind == "sse":
        return True
    if shape.kind == "json-lines":
        return bool(set(shape.types) & anthropic_api.STREAM_TYPES)
    if shape.kind == "json-array":
        return True
    return shape.kind == "json-object"


def _plain(src: Source, forced: bool) -> Transcript:
    return plain.parse(src, allow_json=forced)


def _plainly(parse: Callable[[Source], Transcript]) -> Callable[[Source, bool], Transcript]:
    return lambda src, forced: parse(src)


_MARKS: dict[str, set[str]] = {
    "inspect": {"eval", "samples", "results", "stats", "plan"},  # not `version`: cassettes have one too
    "scarbook": {"task", "tool_call", "tool_result", "final", "usage", "model_call"},
    "claude-code": {"message", "uuid", "parentUuid", "sessionId", "isSidechain", "cwd", "loglines", "user",
                    "assistant", "summary", "toolUseResult"},
    "claude-json": {"result", "subtype", "session_id", "total_cost_usd", "num_turns", "duration_ms", "is_error"},
    "codex": {"payload", "item", "thread_id", "thread.started", "item.completed", "session_meta", "response_item",
              "turn_context", "event_msg"},
    "otel": {"resourceSpans", "scopeSpans", "spans", "attributes", "traceId", "spanId", "context", "span_id",
             "trace_id", "start_time", "openinference", "llm"},
    "http-cassette": {"interactions", "recorded_at", "status", "headers", "uri"},
    "swe-agent": {"trajectory", "history", "info", "environment", "replay_config"},
    "mini-swe-agent": {"messages", "info", "trajectory_format"},
    "anthropic-messages": {"messages", "model", "system", "max_tokens", "stop_reason", "content", "role", "request",
                           "response"},
    "anthropic-stream": {"message_start", "content_block_start", "content_block_delta", "message_delta"},
    "openai-chat": {"messages", "choices", "object", "tool_calls", "role", "content"},
    "openai-responses": {"input", "output", "instructions", "function_call", "output_text"},
    "openhands": {"action", "args", "observation", "extras", "cause", "source", "tool_call_metadata", "llm_metrics"},
    "openhands-eval": {"instance_id", "instruction", "test_result", "history", "metrics", "metadata", "error"},
    "chatgpt": {"mapping", "current_node", "conversation_id", "moderation_results", "create_time", "update_time",
                "title"},
    "claude-ai": {"chat_messages", "sender", "account", "name", "created_at", "updated_at"},
    "langchain": {"human", "ai", "lc", "kwargs", "run_type", "child_runs", "values", "additional_kwargs",
                  "response_metadata", "tool_call_id", "usage_metadata", "inputs", "outputs"},
}

_READERS = [
    Reader("inspect", _plainly(inspect_log.parse), _claims_inspect, frozenset(_MARKS["inspect"])),
    Reader("scarbook", _plainly(scarbook_native.parse), _claims_scarbook, frozenset(_MARKS["scarbook"])),
    Reader("claude-code", _plainly(claude_code.parse), _claims_claude_code, frozenset(_MARKS["claude-code"])),
    Reader("claude-json", _plainly(claude_code.parse_json_output), _claims_claude_json, frozenset(_MARKS["claude-json"])),
    Reader("codex", _plainly(codex.parse), _claims_codex, frozenset(_MARKS["codex"])),
    Reader("otel", _plainly(otel.parse), _claims_otel, frozenset(_MARKS["otel"])),
    Reader("http-cassette", _plainly(cassette.parse), _claims_cassette, frozenset(_MARKS["http-cassette"])),
    Reader("swe-agent", _plainly(swe_agent.parse_swe_agent), _claims_swe_agent, frozenset(_MARKS["swe-agent"])),
    Reader("mini-swe-agent", _plainly(swe_agent.parse_mini), _claims_mini, frozenset(_MARKS["mini-swe-agent"])),
    Reader("openhands", _plainly(openhands.parse), _claims_openhands, frozenset(_MARKS["openhands"])),
    Reader("openhands-eval", _plainly(openhands_eval.parse), _claims_openhands_eval,
           frozenset(_MARKS["openhands-eval"])),
    Reader("chatgpt", _plainly(web_export.parse), _claims_web_export, frozenset(_MARKS["chatgpt"])),
    Reader("claude-ai", _plainly(web_export.parse), _claims_web_export, frozenset(_MARKS["claude-ai"])),
    Reader("langchain", _plainly(langchain.parse), _claims_langchain, frozenset(_MARKS["langchain"])),
    Reader("anthropic-messages", _plainly(anthropic_api.parse), _claims_api, frozenset(_MARKS["anthropic-messages"])),
    Reader("anthropic-stream", _plainly(anthropic_api.parse), _claims_api, frozenset(_MARKS["anthropic-stream"])),
    Reader("openai-chat", _plainly(openai.parse), _claims_api, frozenset(_MARKS["openai-chat"])),
    Reader("openai-responses", _plainly(openai.parse), _claims_api, frozenset(_MARKS["openai-responses"])),
    Reader("plain", _plain, lambda src, shape: shape.kind in ("text", "yaml"), frozenset()),
]
READERS: dict[str, Reader] = {r.name: r for r in _READERS}
NAMES: tuple[str, ...] = tuple(READERS)
# one parser reads both names of a pair: detection tries it once
_SAME_PARSER = {"anthropic-stream": "anthropic-messages", "openai-responses": "openai-chat", "claude-ai": "chatgpt"}


def claiming(src: Source) -> list[Reader]:
    """The readers that claim the file from its head, in order; one parser once."""
    shape = src.shape
    return [r for r in _READERS if r.name not in _SAME_PARSER and r.claims(src, shape)]


def closest(shape: Shape, tried: tuple[tuple[str, str], ...] | list[tuple[str, str]] = ()) -> tuple[str | None, str]:
    """(the format the file is most like by the keys and record types seen, why its reader did not
    take it when it was tried); (None, "") when no format shares a mark with it."""
    seen = set(shape.keys) | set(shape.types)
    best, score = None, 0
    for name, marks in _MARKS.items():
        hits = len(seen & marks)
        if hits > score:
            best, score = name, hits
    if best is None:
        return None, ""
    whys = dict(tried)
    return best, whys.get(best) or whys.get(_SAME_PARSER.get(best, ""), "")


def todo(path: Path, shape: Shape, name: str | None, *, forced: str | None = None) -> str:
    """What to do about a file scarbook does not read (one clause). `forced`: the format the user
    named, which did not fit (never suggested again)."""
    if shape.kind == "empty":
        return "the file holds nothing: import the log the agent wrote"
    if shape.kind == "binary":
        return _unpack(path, shape.packed)
    if forced is not None:
        if name and name not in (forced, "plain"):
            return f"it looks closest to {name}: import it without --format, or with --format {name}"
        return "import it without --format to detect its format, or with --format plain to keep it whole as text"
    if name and name != "plain":
        return (f"if it is {name}, `scarbook import {shlex.quote(str(path))} --format {name}` says what does not fit; "
                "`--format plain` keeps the whole file as the failed artifact")
    return keep_plain(path)


def _unpack(path: Path, packed: str) -> str:
    """What to do about a binary file: the command that makes the log in it UTF-8 text, when it is one."""
    name = shlex.quote(str(path))
    if packed.startswith("UTF-16"):
        return f"convert it to UTF-8 and import that: {utf8_command(path, packed)}"
    if packed == "gzip":
        return f"unpack it and import the log inside: `gunzip -k {name}`"
    return "save the log as UTF-8 text (or JSON) and import that"


def keep_plain(path: Path) -> str:
    """The whole command, quoted: the TUI's import screen shows this line too, and offers no --format."""
    return f"`scarbook import {shlex.quote(str(path))} --format plain` keeps the whole file as the failed artifact"


def forced_refusal(path: Path, src: Source, format: str, why: str) -> str:
    """The one line for `--format NAME` on a file that reader does not take."""
    name, _ = closest(src.shape)
    return (f"{path} is not {with_article(format)} transcript: {why}; seen: "
            f"{src.shape.describe()}; {todo(path, src.shape, name, forced=format)}")


def refusal(path: Path, src: Source, tried: list[tuple[str, str]]) -> str:
    """The one line a file nothing reads gets: what was seen, the closest format, what to do."""
    shape = src.shape
    seen = shape.describe()
    name, why = closest(shape, tried)
    if shape.kind in ("json-object", "json-array") and not src.is_json and src.json_error:
        broken = src.json_error.removeprefix("not JSON (").removesuffix(")")
        near = f"; closest format: {name}" if name else ""
        return (f"{path}: not a transcript scarbook can read: JSON cut off or broken ({broken}), {seen}{near}; "
                f"repair or export it again; {keep_plain(path)}")
    near = f"closest format: {name}" + (f" ({why})" if why else "") if name else "no format is close"
    return f"{path}: not a transcript scarbook can read: {seen}; {near}; {todo(path, shape, name)}"
