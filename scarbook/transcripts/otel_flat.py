"""OTel spans written flat, not as OTLP exports: the OpenTelemetry SDK's console exporter
(`span.to_json()`: one indented document per span, `attributes` a plain mapping, ISO times,
`context.trace_id`), a JSON list or JSON lines of such spans, and OpenInference spans (Arize
Phoenix, `openinference-instrumentation-*`: `llm.input_messages.N.message.role`, `tool.name`,
`input.value`; `attributes` flat or nested). Each span is rewritten as the OTLP span the otel
parser reads, OpenInference attributes as their gen_ai equivalents.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from scarbook.transcripts.source import Source

_OI_MESSAGE = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$")
_OI_CALL = re.compile(r"^tool_calls\.(\d+)\.tool_call\.(?:function\.)?(name|arguments|id)$")


def is_flat_span(value: Any) -> bool:
    return is_attributes(value) or (isinstance(value, dict) and isinstance(value.get("attributes"), dict)
                                    and (isinstance(value.get("context"), dict) or "span_id" in value
                                         or "trace_id" in value or "start_time" in value))


def is_attributes(value: Any) -> bool:
    """A span's OpenInference attributes saved alone (Phoenix shows them so: {"llm": {...},
    "input": {"value": ...}, "openinference": {"span": {"kind": "LLM"}}}), or flat."""
    return isinstance(value, dict) and "attributes" not in value and (
        isinstance(value.get("openinference"), dict) or "openinference.span.kind" in value
        or isinstance(value.get("llm"), dict) and ("input_messages" in value["llm"] or "output_messages" in value["llm"])
        or isinstance(value.get("gen_ai"), dict) or any(isinstance(k, str) and k.startswith(_FLAT) for k in value))


# flat GenAI / OpenInference attributes saved alone (the attribute form of the semantic conventions)
_FLAT = ("gen_ai.input", "gen_ai.output", "gen_ai.prompt", "gen_ai.completion", "llm.input_messages",
         "llm.output_messages")
_OI_PART = re.compile(r"^contents\.(\d+)\.message_content\.(text|type|image\.image\.url)$")


def _documents(src: Source) -> list[Any]:
    """Every JSON value in the file: one document, JSON lines, or documents one after another."""
    if src.is_json:
        value = src.json
        return value if isinstance(value, list) else [value.get("spans")] if isinstance(value, dict) \
            and isinstance(value.get("spans"), list) else [value]
    text = src.text
    if text is None or not text.lstrip().startswith("{"):
        return []
    decoder, docs, i = json.JSONDecoder(), [], 0
    try:  # the first value says whether the file holds spans at all: nothing more is decoded if not
        first, _ = decoder.raw_decode(text, len(text) - len(text.lstrip()))
    except ValueError:
        return []
    if not is_flat_span(first):
        return []
    while i < len(text):
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text):
            break
        try:
            value, i = decoder.raw_decode(text, i)
        except ValueError:
            break
        docs.append(value)
    return docs


def _flatten(attrs: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested OpenInference attributes ({"llm": {"input_messages": [{"message": ...}]}}) as dotted keys;
    gen_ai values (JSON strings or lists of messages) are kept whole."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and not name.startswith("gen_ai."):
            out.update(_flatten(value, name + "."))
        elif isinstance(value, list) and name.startswith("llm.") and all(isinstance(v, dict) for v in value):
            for n, item in enumerate(value):
                out.update(_flatten(item, f"{name}.{n}."))
        else:
            out[name] = value
    return out


def _gen_ai(attrs: dict[str, Any]) -> dict[str, Any]:
    """OpenInference attributes as the gen_ai ones the otel parser reads (gen_ai ones kept)."""
    out = dict(attrs)
    parts: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}  # (side, message) -> part number -> fields
    for key, value in attrs.items():
        m = _OI_MESSAGE.match(key)
        if m:
            side = "prompt" if m.group(1) == "input" else "completion"
            field = m.group(3)
            part = _OI_PART.match(field)
            if part:  # `message.contents.M.message_content.text`: a message given as parts
                parts.setdefault((side, m.group(2)), {}).setdefault(int(part.group(1)), {})[part.group(2)] = value
                continue
            c = _OI_CALL.match(field)
            field = f"tool_calls.{c.group(1)}.{c.group(2)}" if c else field
            out[f"gen_ai.{side}.{m.group(2)}.{field}"] = value
    for (side, n), numbered in parts.items():
        text = [str(p["text"]) if "text" in p else f"[image: {p.get('image.image.url', 'attached')}]"
                if p.get("type") == "image" else "" for _, p in sorted(numbered.items())]
        out.setdefault(f"gen_ai.{side}.{n}.content", "\n".join(t for t in text if t))
    kind = str(attrs.get("openinference.span.kind", "")).upper()
    if kind == "LLM":
        if "llm.model_name" in attrs:
            out.setdefault("gen_ai.response.model", attrs["llm.model_name"])
        if not any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.", "gen_ai.input", "gen_ai.output")) for k in out):
            out.update(_values_as_messages(attrs))
        for oi, gen in (("llm.token_count.prompt", "gen_ai.usage.input_tokens"),
                        ("llm.token_count.completion", "gen_ai.usage.output_tokens")):
            if oi in attrs:
                out.setdefault(gen, attrs[oi])
    elif kind == "TOOL":
        out.setdefault("gen_ai.operation.name", "execute_tool")
        out.setdefault("gen_ai.tool.name", attrs.get("tool.name", ""))
        if "input.value" in attrs:
            out.setdefault("gen_ai.tool.call.arguments", attrs["input.value"])
        if "output.value" in attrs:
            out.setdefault("gen_ai.tool.call.result", attrs["output.value"])
        if "tool_call.id" in attrs:
            out.setdefault("gen_ai.tool.call.id", attrs["tool_call.id"])
    return out


def _values_as_messages(attrs: dict[str, Any]) -> dict[str, Any]:
    """An LLM span that keeps only `input.value` and `output.value` (OpenInference's fallback): the input a
    JSON list of messages (GenAI `parts` or chat-shaped), or text; the output a chat completion, a
    `{text}` object, a message, or text."""
    out: dict[str, Any] = {}
    given, answer = _json_or_text(attrs.get("input.value")), _json_or_text(attrs.get("output.value"))
    if isinstance(given, dict) and isinstance(given.get("messages"), list):
        given = given["messages"]  # a request body
    if isinstance(given, list) and given:
        out["gen_ai.input.messages"] = given
    elif isinstance(given, str) and given.strip():
        out["gen_ai.input.messages"] = [{"role": "user", "content": given}]
    if isinstance(answer, dict) and isinstance(answer.get("choices"), list) and answer["choices"] \
            and isinstance(answer["choices"][0], dict) and isinstance(answer["choices"][0].get("message"), dict):
        answer = answer["choices"][0]["message"]
    if isinstance(answer, dict) and ("role" in answer or "parts" in answer):
        out["gen_ai.output.messages"] = [{"role": "assistant", **answer}]
    elif isinstance(answer, dict) and isinstance(answer.get("text") or answer.get("content"), str):
        out["gen_ai.output.messages"] = [{"role": "assistant", "content": answer.get("text") or answer["content"]}]
    elif isinstance(answer, str) and answer.strip():
        out["gen_ai.output.messages"] = [{"role": "assistant", "content": answer}]
    return out


def _json_or_text(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def nanos(stamp: Any) -> int:
    """Nanoseconds since the epoch from what exporters write: an integer (nanoseconds, or seconds), a
    decimal string (OTLP JSON's uint64), a float or an ISO time; 0 for anything else."""
    if isinstance(stamp, str):
        text = stamp.strip()
        try:
            stamp = float(text) if text and text.lstrip("-").replace(".", "", 1).isdigit() else stamp
        except ValueError:
            pass
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        if stamp != stamp or stamp in (float("inf"), float("-inf")) or stamp <= 0:
            return 0
        return int(stamp if stamp > 1e14 else stamp * 1e9)
    if isinstance(stamp, str):
        try:
            when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            return 0
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return int(when.timestamp() * 1e9)
    return 0


def flat_spans(src: Source) -> list[dict[str, Any]]:
    """The file's flat spans as OTLP-shaped spans, or [] when it holds none."""
    values = [v for doc in _documents(src) for v in (doc if isinstance(doc, list) else [doc])]
    spans = []
    for v in values:
        if not is_flat_span(v):
            continue
        if is_attributes(v):
            v = {"attributes": v}
        context = v.get("context") if isinstance(v.get("context"), dict) else {}
        status = v.get("status") if isinstance(v.get("status"), dict) else {}
        code = str(status.get("status_code", v.get("status_code", ""))).upper()
        spans.append({
            "traceId": str(context.get("trace_id") or v.get("trace_id") or ""),
            "spanId": str(context.get("span_id") or v.get("span_id") or ""),
            "name": v.get("name", ""),
            "startTimeUnixNano": nanos(v.get("start_time")),
            "endTimeUnixNano": nanos(v.get("end_time")),
            "status": {"code": 2 if code.endswith("ERROR") else 0},
            "attributes": _gen_ai(_flatten(v["attributes"])),
        })
    return spans
