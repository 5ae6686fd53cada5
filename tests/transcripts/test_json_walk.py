"""transcripts/json_walk.py: a JSON document read in chunks, its long lists handed over an item at a time
(issue 34.7: a big request body or trajectory is never parsed whole). Every chunk size must give what one
json.loads gives, whatever a chunk's end cuts (a \\u escape, a number, a multi-byte character)."""

from __future__ import annotations

import json
import random

import pytest

from scarbook.transcripts import json_walk
from scarbook.transcripts.json_walk import STREAMED, Broken, walk

RNG = random.Random(1)
DOC = {"model": "x", "messages": [{"role": "user", "content": "héllo ☃ " * RNG.randint(1, 50),
                                   "n": RNG.randint(0, 10**6), "f": 1.5e10, "t": True} for _ in range(300)],
       "system": "s", "z": 12345678}


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("ascii_only, indent", [(True, None), (False, 1)])
def test_every_chunk_size_reads_what_json_loads_reads(tmp_path, monkeypatch, chunk, ascii_only, indent):
    monkeypatch.setattr(json_walk, "CHUNK", chunk)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC, ensure_ascii=ascii_only, indent=indent), encoding="utf-8")
    items: list = []
    top = walk(path, {"messages"}, lambda where, item: items.append((where, item)))
    assert items == [("messages", m) for m in DOC["messages"]]
    assert top == {**DOC, "messages": STREAMED}


@pytest.mark.parametrize("chunk", [5, 1 << 20])
def test_nested_lists_and_a_top_level_array(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(json_walk, "CHUNK", chunk)
    path = tmp_path / "otlp.json"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {"a": 1}, "scopeSpans": [
        {"scope": {"n": "s"}, "spans": [{"i": i} for i in range(40)]}, {"spans": [{"i": -1}]}]}]}))
    seen: list = []
    top = walk(path, {"resourceSpans.*.scopeSpans.*.spans"}, lambda where, item: seen.append(item["i"]))
    assert seen == [*range(40), -1] and top["resourceSpans"][0]["resource"] == {"a": 1}
    path.write_text(json.dumps([{"a": i} for i in range(30)]))
    listed: list = []
    assert walk(path, {""}, lambda where, item: listed.append(item)) is STREAMED and len(listed) == 30


@pytest.mark.parametrize("text, why", [
    ('{"messages": [{"a": 1}, {"b": ', "Expecting value at 30"),
    ('{"messages": [1 2]}', "expected ',' or ']' at 16"),
    ('{"a": 1} x', "more after the document at 9"),
    ("", "the document ends at 0"),
])
def test_a_broken_or_cut_document_is_broken_where_it_breaks(tmp_path, text, why):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(Broken) as exc:
        walk(path, {"messages"}, lambda where, item: None)
    assert str(exc.value) == why


def test_a_swe_agent_trajectory_is_read_a_step_at_a_time(tmp_path, monkeypatch):
    """A SWE-agent .traj file (hundreds of MB for a long run) is walked, never read whole as one text or one
    parsed document: the same timeline as before, with the prompt from the history after it."""
    from scarbook.transcripts import load_transcript
    from scarbook.transcripts.source import HEAD_BYTES, Source

    def whole(self):
        raise AssertionError("the whole file was read as one text")

    monkeypatch.setattr(Source, "text", property(whole))
    monkeypatch.setattr(json_walk, "CHUNK", 64)
    steps = [{"action": "create a.py", "observation": "[File: /repo/a.py (1 lines total)]\n1:\n", "thought": "make it"},
             {"action": "edit 1:1\nx = 1\nend_of_edit", "observation": "done", "thought": "fill it"},
             *[{"action": "ls", "observation": "a.py\n" * 10, "thought": ""}] * 2000,  # more than the head holds
             {"action": "submit", "observation": "diff --git a/a.py b/a.py\n", "thought": ""}]
    path = tmp_path / "run.traj"
    path.write_text(json.dumps({"environment": "swe_main", "trajectory": steps, "history": [
        {"role": "system", "content": "You are an autonomous programmer."},
        {"role": "user", "content": "<issue>\nx must be 1\n</issue>", "agent": "primary"}], "info": {}}))
    assert path.stat().st_size > 2 * HEAD_BYTES
    t = load_transcript(path)
    assert t.format == "swe-agent"
    assert [(type(e).__name__, getattr(e, "text", None)) for e in t.entries[:2]] == [
        ("Message", "x must be 1"), ("Message", "make it")]
    assert [(f.path, f.content) for f in t.files_written] == [("a.py", "x = 1\n")]
    assert t.final_answer == "diff --git a/a.py b/a.py\n"


def test_an_otlp_export_is_read_a_span_at_a_time(tmp_path, monkeypatch):
    """A big OTLP JSON export is walked a span at a time, never read whole as one text: its timeline is a
    model span's input and output and a tool span's call and result, in time order, each message once."""
    from scarbook.transcripts import load_transcript
    from scarbook.transcripts.source import HEAD_BYTES, Source

    def attr(key, value):
        return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}

    def chat(k, start, text, call):
        return {"traceId": "t1", "spanId": f"c{k}", "name": "chat m", "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + 10), "attributes": [
                    attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "m"),
                    attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [
                        {"type": "text", "content": "Write a.py"}]}])),
                    attr("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                        {"type": "text", "content": text},
                        *([{"type": "tool_call", "id": call, "name": "write_file",
                            "arguments": {"path": "/w/a.py", "content": "x = 1\n"}}] if call else [])]}])),
                    attr("gen_ai.usage.input_tokens", 9), attr("gen_ai.usage.output_tokens", 3)]}

    tool = {"traceId": "t1", "spanId": "tool", "name": "execute_tool write_file", "startTimeUnixNano": "1020",
            "endTimeUnixNano": "1030", "attributes": [
                attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "write_file"),
                attr("gen_ai.tool.call.id", "w1"), attr("gen_ai.tool.call.result", "written")]}
    pad = [{"traceId": "t1", "spanId": f"p{k}", "name": "http", "startTimeUnixNano": str(2000 + k),
            "endTimeUnixNano": str(2001 + k), "attributes": [attr("http.url", "https://x/" + "y" * 40)]}
           for k in range(2000)]  # spans of no model or tool: more than the head holds
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "a")]},
                                                   "scopeSpans": [{"scope": {"name": "s"}, "spans": [
                                                       chat(1, 1000, "Writing it.", "w1"), tool,
                                                       chat(2, 1040, "Done.", None), *pad]}]}]}))
    assert path.stat().st_size > 2 * HEAD_BYTES
    monkeypatch.setattr(Source, "text", property(lambda self: pytest.fail("the whole file was read as one text")))
    monkeypatch.setattr(json_walk, "CHUNK", 64)
    t = load_transcript(path)
    assert t.format == "otel"
    assert [(type(e).__name__, getattr(e, "text", None)) for e in t.entries] == [
        ("Message", "Write a.py"), ("Message", "Writing it."), ("ToolCall", None), ("ToolResult", "written"),
        ("Message", "Done.")]
    assert [(f.path, f.content) for f in t.files_written] == [("a.py", "x = 1\n")]
    assert t.usage is not None and (t.usage.input_tokens, t.usage.output_tokens) == (18, 6)
