"""OpenTelemetry GenAI spans exported as OTLP JSON (one export, or JSON lines of exports as the
collector's file exporter writes them).

Model spans carry the conversation in `gen_ai.input.messages` / `gen_ai.output.messages`
(current semantic conventions) or in the older `gen_ai.prompt` / `gen_ai.completion` (a JSON
string) and `gen_ai.prompt.N.content` / `gen_ai.completion.N.tool_calls.M.name` (indexed)
attributes. Tool executions are `execute_tool` spans. Each model span repeats the whole history
in its input, so messages already on the timeline are not added again: a message is added once
per time it occurs in a single span's input (repeated identical prompts survive). A file holding
several traces is several conversations: one is shown (--trace picks which), never a merge.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Hashable
from dataclasses import asdict
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.models import Usage
from scarbook.text import plural
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import Broken, walk
from scarbook.transcripts.model import (
    Entry,
    Message,
    NotThisFormat,
    ToolCall,
    ToolResult,
    Transcript,
    as_int,
    date_of,
)
from scarbook.transcripts.openai import add_chat_message, parse_arguments
from scarbook.transcripts.otel_flat import flat_spans, nanos
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import base64_size, blob_placeholder

FORMAT = "otel"
_INDEXED = re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$")


def any_value(v: Any) -> Any:
    """Decode an OTLP JSON AnyValue ({"stringValue": ...}, {"intValue": "3"}, arrays, kvlists)."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return as_int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [any_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: any_value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values", [])}
    if "bytesValue" in v:
        return blob_placeholder("binary", None, base64_size(v["bytesValue"]))
    return None


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    attrs = span.get("attributes") or {}
    if isinstance(attrs, dict):  # console exporters write a plain mapping (a copy: the reader drops what it read)
        return dict(attrs)
    # an attribute without a string key names nothing scarbook looks up: dropped, not kept under None
    return {a["key"]: any_value(a.get("value")) for a in attrs if isinstance(a, dict) and isinstance(a.get("key"), str)}


def _once(seen: dict[str, str], value: Any) -> Any:
    """One string for each short value a big export repeats on every span (keys, ids, names): each came
    parsed as its own string."""
    return seen.setdefault(value, value) if isinstance(value, str) and len(value) <= 64 else value


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _spans(src: Source) -> list[dict[str, Any]]:
    if src.shape.kind == "json-object" and not src.shape.whole:
        streamed = _streamed_spans(src)
        if streamed is not None:
            return streamed or flat_spans(src)
    exports = [src.json] if src.is_json else src.objects()
    spans: list[dict[str, Any]] = []
    for export in exports:
        if not isinstance(export, dict) or "resourceSpans" not in export:
            continue
        for rs in _dicts(export.get("resourceSpans")):
            for ss in _dicts(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")):
                spans.extend(_dicts(ss.get("spans")))
    return spans or flat_spans(src)


_DECODED = "\0attributes"  # a slim span's decoded attributes (no OTLP key is spelt so)
_SPAN_KEYS = ("traceId", "spanId", "name", "startTimeUnixNano", "endTimeUnixNano", "status")


def _slim(span: dict[str, Any], seen: dict[str, str]) -> dict[str, Any]:
    """What the reader takes from a span: its ids, name, times and status, and its attributes decoded (the
    events form read as attributes). The OTLP key/value wrappers, a dict or two an attribute, are dropped."""
    slim = {key: _once(seen, span[key]) for key in _SPAN_KEYS if key in span}
    # decoded once, here; taken (not copied) by the timeline, so what it drops once read is gone
    slim[_DECODED] = {_once(seen, k): _once(seen, v) for k, v in _with_events(span, attributes(span)).items()}
    return slim


def _streamed_spans(src: Source) -> list[dict[str, Any]] | None:
    """The spans of one big OTLP export, read a span at a time (json_walk) and each kept slim; None when the
    file is not one export with `resourceSpans` (the reader then reads it whole, as before)."""
    spans: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    try:
        doc = walk(src.path, {"resourceSpans.*.scopeSpans.*.spans"},
                   lambda _, span: spans.append(_slim(span, seen)) if isinstance(span, dict) else None)
    except Broken:
        return None
    if not isinstance(doc, dict) or "resourceSpans" not in doc:
        return None
    for rs in _dicts(doc["resourceSpans"]):  # the pre-1.0 name, read where a resource has no scopeSpans
        if not rs.get("scopeSpans"):
            for ss in _dicts(rs.get("instrumentationLibrarySpans")):
                spans.extend(_slim(span, seen) for span in _dicts(ss.get("spans")))
    return spans


def _json_attr(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _part_entries(t: Transcript, role: str, part: Any) -> tuple[str | None, Entry | None]:
    """(text to add to the message, or a tool entry) for one semconv message part."""
    if isinstance(part, str):
        return part, None
    kind = part.get("type")
    if kind == "text":
        return str(part.get("content", "")), None
    if kind == "tool_call":
        cid = str(part.get("id") or "")
        return None, ToolCall(cid, str(part.get("name", "")), parse_arguments(t, cid, part.get("arguments")))
    if kind == "tool_call_response":
        resp = part.get("response", part.get("result"))
        return None, ToolResult(str(part.get("id") or ""), resp if isinstance(resp, str) else json.dumps(resp, ensure_ascii=False))
    if kind == "reasoning":
        return None, Message(role, str(part.get("content", "")), kind="thinking")
    if kind == "blob":
        return blob_placeholder(part.get("modality") or "blob", part.get("mime_type"), base64_size(part.get("content", ""))), None
    if kind in ("uri", "file"):
        return f"[{part.get('modality') or 'file'}: {part.get('uri') or part.get('file_id')}]", None
    return json.dumps(part, ensure_ascii=False), None


def _message_entries(t: Transcript, m: Any, default_role: str) -> list[Entry]:
    scratch = Transcript(format=FORMAT)
    if isinstance(m, str):
        return [Message(default_role, m)]
    if not isinstance(m, dict):
        return []
    if "parts" not in m:  # the older, OpenAI-shaped messages
        add_chat_message(scratch, {"role": default_role, **m}, [])
        t.warnings.extend(scratch.warnings)
        return scratch.entries
    role, text = str(m.get("role", default_role)), []
    out: list[Entry] = []
    for part in m.get("parts") or []:
        piece, entry = _part_entries(t, role, part)
        if piece is not None:
            text.append(piece)
        if entry is not None:
            if text:
                out.append(Message(role, "\n".join(text)))
                text = []
            out.append(entry)
    if text or not out:
        out.append(Message(role, "\n".join(text)))
    return out


def _indexed(attrs: dict[str, Any], which: str) -> list[dict[str, Any]]:
    """gen_ai.prompt.0.role / .content / .completion.0.tool_calls.1.name -> OpenAI-shaped messages."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _INDEXED.match(key or "")
        if not m or m.group(1) != which:
            continue
        msg, field = found.setdefault(int(m.group(2)), {}), m.group(3)
        tc = re.match(r"tool_calls\.(\d+)\.(\w+)$", field)
        if tc:
            calls = msg.setdefault("_calls", {})
            calls.setdefault(int(tc.group(1)), {})[tc.group(2)] = value
        else:
            msg[field] = value
    out = []
    for _, msg in sorted(found.items()):
        calls = msg.pop("_calls", {})
        if calls:
            msg["tool_calls"] = [{"id": c.get("id", ""), "function": {"name": c.get("name", ""), "arguments": c.get("arguments", "")}}
                                 for _, c in sorted(calls.items())]
        out.append(msg)
    return out


def _is_message(m: Any) -> bool:
    return isinstance(m, str) or isinstance(m, dict) and bool({"role", "content", "parts", "tool_calls"} & m.keys())


def _messages(attrs: dict[str, Any], side: str) -> list[Any]:
    new, old = ("gen_ai.input.messages", "gen_ai.prompt") if side == "input" else ("gen_ai.output.messages", "gen_ai.completion")
    for key in (new, old):
        if key in attrs:
            value = _json_attr(attrs[key])
            value = value if isinstance(value, list) else [value]
            if key == old and isinstance(attrs[key], str) and not all(_is_message(m) for m in value):
                return [attrs[key]]  # the completion's text happens to be JSON: it is the answer itself
            return value
    return _indexed(attrs, old.split(".")[1])


_EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _with_events(span: dict[str, Any], attrs: dict[str, Any]) -> dict[str, Any]:
    """The GenAI semantic conventions' events form (span events `gen_ai.user.message`, `gen_ai.choice`,
    or `gen_ai.content.prompt` / `.completion` holding the JSON) as the attribute form the rest reads."""
    events = span.get("events")
    if not isinstance(events, list) or "gen_ai.input.messages" in attrs or "gen_ai.prompt" in attrs:
        return attrs
    inputs: list[Any] = []
    outputs: list[Any] = []
    for ev in events:
        if not isinstance(ev, dict) or not isinstance(ev.get("name"), str):
            continue
        name, ev_attrs = ev["name"], attributes(ev)
        body: dict[str, Any] = ev["body"] if isinstance(ev.get("body"), dict) else {}
        if name in _EVENT_ROLES:
            msg = {"role": _EVENT_ROLES[name], "content": ev_attrs.get("content", body.get("content", ""))}
            calls = _json_attr(ev_attrs.get("tool_calls", body.get("tool_calls")))
            if isinstance(calls, list):
                msg["tool_calls"] = calls
            if name == "gen_ai.tool.message":
                msg["tool_call_id"] = str(ev_attrs.get("id", body.get("id", "")))
            inputs.append(msg)
        elif name == "gen_ai.choice":
            message = _json_attr(ev_attrs.get("message", body.get("message")))
            outputs.append(message if isinstance(message, dict) else
                           {"role": "assistant", "content": ev_attrs.get("content", "")})
        elif name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            key = "gen_ai.prompt" if name.endswith("prompt") else "gen_ai.completion"
            value = _json_attr(ev_attrs.get(key))
            (inputs if key == "gen_ai.prompt" else outputs).extend(value if isinstance(value, list) else [value])
    if not inputs and not outputs:
        return attrs
    return {**attrs, "gen_ai.input.messages": inputs, "gen_ai.output.messages": outputs}


def _is_model_span(attrs: dict[str, Any]) -> bool:
    return any(k.startswith(("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion"))
               for k in attrs if k)


def _signature(e: Entry) -> Hashable:
    """What makes two entries the same one: a message's fields as they are (no copy of its text), another
    entry's as JSON."""
    if isinstance(e, Message):
        return e.role, e.text, e.kind, e.sidechain
    return type(e).__name__ + json.dumps(asdict(e), sort_keys=True, default=str)


def _pick_trace(t: Transcript, spans: list[dict[str, Any]], wanted: str | None) -> list[dict[str, Any]]:
    """A file with several traces holds several conversations: show one (the one the user picked
    with --trace, else the latest) and list them all in `t.traces`."""
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_trace.setdefault(str(span.get("traceId") or ""), []).append(span)
    if wanted is None and len(by_trace) < 2:
        return spans
    start = {tid: min(nanos(s.get("startTimeUnixNano")) for s in group) for tid, group in by_trace.items()}
    order = sorted(by_trace, key=lambda tid: start[tid])
    t.traces = [(tid, f"{plural(len(by_trace[tid]), 'span')}, started {_when(start[tid])}") for tid in order]
    if wanted is not None and wanted not in by_trace:
        raise ScarbookError(f"{src_name(t)}: no trace {wanted!r} in this file; it holds "
                            + ", ".join(order or ["none"]))
    t.trace = wanted if wanted is not None else order[-1]
    if wanted is None:
        t.warnings.append(f"the file holds {len(order)} traces; showing {t.trace} (the latest); "
                          "pick another with --trace ID (see --list)")
    return by_trace[t.trace]


def src_name(t: Transcript) -> str:
    return str(t.source) if t.source else "the transcript"


def _when(nanos: int) -> str:
    import datetime as dt

    if not nanos:
        return "at an unknown time"
    return dt.datetime.fromtimestamp(nanos / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


_Moment = tuple[int, int, str, dict[str, Any], dict[str, Any]]  # (time, span index, action, span, attributes)


def _timeline(spans: list[dict[str, Any]]) -> list[_Moment]:
    """Each tool span's start and end and each model span's input (at its start) and output (at its
    end), in time order; at one instant, what ends comes before what starts."""
    timeline: list[_Moment] = []
    for seq, span in enumerate(spans):
        attrs = span.pop(_DECODED) if _DECODED in span else _with_events(span, attributes(span))
        start, end = nanos(span.get("startTimeUnixNano")), nanos(span.get("endTimeUnixNano"))
        end = max(end, start + 1)  # a span saved without times (or ending as it starts): its input comes first
        if attrs.get("gen_ai.operation.name") == "execute_tool" or str(span.get("name", "")).startswith("execute_tool"):
            timeline += [(start, seq, "tool_start", span, attrs), (end, seq, "tool_end", span, attrs)]
        elif _is_model_span(attrs):
            timeline += [(start, seq, "input", span, attrs), (end, seq, "output", span, attrs)]
    timeline.sort(key=lambda x: (x[0], x[2] in ("input", "tool_start"), x[1]))
    return timeline


class _Entries:
    """Adds entries to the transcript once: a model span repeats the history before it, so a tool
    call or result is kept once per id, and a message once per time it occurs within one span
    (`local` counts those of the span being added)."""

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.emitted: Counter[Hashable] = Counter()
        self.call_ids: set[str] = set()
        self.result_ids: set[str] = set()

    def add(self, entries: list[Entry], local: Counter[Hashable] | None = None) -> None:
        local = Counter() if local is None else local
        for e in entries:
            cid = getattr(e, "id", None) if isinstance(e, ToolCall) else getattr(e, "call_id", None)
            seen = self.call_ids if isinstance(e, ToolCall) else self.result_ids
            if cid and not isinstance(e, Message):
                if cid in seen:
                    continue
                seen.add(cid)
            else:
                sig = _signature(e)
                local[sig] += 1
                if local[sig] <= self.emitted[sig]:
                    continue
                self.emitted[sig] += 1
            self.t.entries.append(e)


def _tool_entry(t: Transcript, action: str, span: dict[str, Any], attrs: dict[str, Any]) -> Entry | None:
    """The call of a tool span's start, the result of its end (None when the span records none)."""
    cid = str(attrs.get("gen_ai.tool.call.id") or span.get("spanId", ""))
    if action == "tool_start":
        args = attrs.get("gen_ai.tool.call.arguments", attrs.get("gen_ai.tool.arguments"))
        return ToolCall(cid, str(attrs.get("gen_ai.tool.name", "")), parse_arguments(t, cid, args))
    result = attrs.get("gen_ai.tool.call.result", attrs.get("gen_ai.tool.result"))
    if result is None:
        return None
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    failed = (span.get("status") or {}).get("code") in (2, "STATUS_CODE_ERROR")
    return ToolResult(cid, text, failed)


def _span_usage(attrs: dict[str, Any]) -> Usage | None:
    """A model span's tokens; None for an agent span (it re-counts its children) or without any."""
    if attrs.get("gen_ai.operation.name") == "invoke_agent":
        return None
    inp = attrs.get("gen_ai.usage.input_tokens", attrs.get("gen_ai.usage.prompt_tokens"))
    out = attrs.get("gen_ai.usage.output_tokens", attrs.get("gen_ai.usage.completion_tokens"))
    if inp is None and out is None:
        return None
    return Usage(input_tokens=as_int(inp), output_tokens=as_int(out))


# What each moment of a span reads, and nothing after it: dropped once read, so a big export's text is not
# held twice (as the span's JSON and as the entries made of it) while the rest of the timeline is read.
_SPENT = {"input": ("gen_ai.input.messages", "gen_ai.prompt"), "output": ("gen_ai.output.messages", "gen_ai.completion"),
          "tool_start": ("gen_ai.tool.call.arguments", "gen_ai.tool.arguments"),
          "tool_end": ("gen_ai.tool.call.result", "gen_ai.tool.result")}


def _spend(attrs: dict[str, Any], action: str) -> None:
    for key in _SPENT[action]:
        attrs.pop(key, None)


def parse(src: Source) -> Transcript:
    spans = _spans(src)
    if not spans:
        raise NotThisFormat("no OTLP `resourceSpans` with spans, and no spans with an `attributes` mapping")
    t = Transcript(format=FORMAT, source=src.path)
    spans = _pick_trace(t, spans, src.trace)
    ends = [nanos(s.get("endTimeUnixNano")) or nanos(s.get("startTimeUnixNano")) for s in spans]
    t.date = date_of(max(ends)) if any(ends) else None
    timeline = _timeline(spans)
    if not timeline:
        raise NotThisFormat("OTLP spans, but none with gen_ai messages or execute_tool")
    entries = _Entries(t)
    usage, saw_usage = Usage(), False
    # System instructions repeat on every model span; they open the conversation once.
    for _, _, action, _, attrs in timeline:
        system = _json_attr(attrs.get("gen_ai.system_instructions")) if action == "input" else None
        if system:
            entries.add(_message_entries(t, {"role": "system", "parts": system if isinstance(system, list) else [system]}, "system"))
            break
    for _, _, action, span, attrs in timeline:
        if action in ("tool_start", "tool_end"):
            tool_entry = _tool_entry(t, action, span, attrs)
            if tool_entry is not None:
                entries.add([tool_entry])
            _spend(attrs, action)
            continue
        local: Counter[Hashable] = Counter()
        role = "user" if action == "input" else "assistant"
        for m in _messages(attrs, action):
            entries.add(_message_entries(t, m, role), local)
        _spend(attrs, action)
        if action == "output":
            t.model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model") or t.model
            span_usage = _span_usage(attrs)
            if span_usage is not None:
                saw_usage = True
                usage.add(span_usage)
    t.usage = usage if saw_usage else None
    del spans, timeline, span, attrs, entries  # the spans' text is in the entries now: let it go before the files are derived
    return finish_transcript(t)
