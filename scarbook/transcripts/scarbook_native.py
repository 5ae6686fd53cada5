"""scarbook's own transcript JSON lines: what the demo agent (and any agent that follows
docs/transcript-format.md) appends to `$SCARBOOK_TRANSCRIPT`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from scarbook.models import Usage
from scarbook.models.reported import MAX_TOKENS, reported_number
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, shared_names
from scarbook.transcripts.source import JsonLines, Source, truncation_warning

FORMAT = "scarbook"
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
TYPES = {"task", "assistant", "tool_call", "tool_result", "final", "usage", "model_call"}
# `model_call` (the recorder's, docs/transcript-format.md) is followed by the ordinary records derived
# from it: the timeline is read from those, the call itself is kept for replay and for readers that want it.


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _usage(r: dict[str, Any], problems: list[str], number: int) -> Usage:
    """A usage record's counts; the common case (whole numbers a count can be) without a check each."""
    counts = [r.get(key, 0) for key in USAGE_KEYS]
    if all(type(c) is int and 0 <= c <= MAX_TOKENS for c in counts):
        return Usage(*counts)
    where = f"transcript usage record {number}"
    return Usage(**{key: _count(r, key, problems, where) for key in USAGE_KEYS})


def _count(r: dict[str, Any], key: str, problems: list[str], where: str) -> int:
    """A usage record's count; one that no count can be (negative, not finite, over the cap: the agent
    wrote it) is 0, said in `problems`."""
    value = reported_number(r.get(key), MAX_TOKENS, key, problems, where)
    return int(value) if value is not None else 0


def parse(src: Source) -> Transcript:
    """One streamed pass: each line is checked as it is read (another format's log is refused on its first
    line) and becomes its entry at once, so the records are never held together."""
    stats = JsonLines()
    counted = {"objects": 0}
    t = from_records(_checked(src.iter_json_lines(stats), counted), Transcript(format=FORMAT, source=src.path),
                     finish=False)
    if not counted["objects"]:
        raise NotThisFormat("not JSON lines")
    if len(stats.bad) >= counted["objects"]:
        raise NotThisFormat(f"line {stats.bad[0][0]} is not JSON")
    t.warnings[:0] = truncation_warning(stats)
    return finish_transcript(t)


def _checked(lines: Iterator[tuple[int, Any]], counted: dict[str, int]) -> Iterator[dict[str, Any]]:
    for no, r in lines:
        if not isinstance(r, dict):
            continue
        if isinstance(r.get("message"), dict):
            raise NotThisFormat(f"line {no} has a `message` object (a Claude Code record, not a scarbook one)")
        if not isinstance(r.get("type"), str) or r["type"] not in TYPES:
            what = f"type {r['type']!r}" if "type" in r else "no \"type\""
            raise NotThisFormat(f"line {no} has {what} (scarbook records are {', '.join(sorted(TYPES))})")
        counted["objects"] += 1
        yield r


def from_records(records: Iterable[Any], t: Transcript, *, finish: bool = True) -> Transcript:
    """`t` filled from scarbook transcript records (a file's lines, or the recorder's own list of them);
    `finish`: derive the files and the answer (else the caller does, once it has added its warnings)."""
    usage, saw_usage = Usage(), False
    models: dict[str, str] = {}
    for r in records:
        kind = r["type"]
        if kind == "task":
            t.entries.append(Message("user", _text(r.get("text", ""))))
        elif kind == "assistant":
            t.entries.append(Message("assistant", _text(r.get("text", ""))))
        elif kind == "tool_call":
            inp = r.get("input")
            t.entries.append(ToolCall(str(r.get("id", "")), str(r.get("name", "")),
                                      shared_names(inp) if isinstance(inp, dict) else {"input": inp}))
        elif kind == "tool_result":
            t.entries.append(ToolResult(str(r.get("id", "")), _text(r.get("output", "")), bool(r.get("is_error"))))
        elif kind == "final":
            t.final_answer = _text(r.get("text", ""))
            t.entries.append(Message("assistant", t.final_answer))
        elif kind == "model_call":
            t.model_calls += 1
        elif kind == "usage":
            saw_usage = True
            model = r.get("model")
            if isinstance(model, str):  # one string a model: each record's came parsed as its own
                model = models.setdefault(model, model)
            t.model = model or t.model
            step = _usage(r, t.usage_problems, len(t.usage_steps) + 1)
            usage.add(step)
            t.usage_steps.append((len(t.entries), model if isinstance(model, str) else None, step))
    t.usage = usage if saw_usage else None
    return finish_transcript(t) if finish else t
