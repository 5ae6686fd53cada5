"""Anthropic Messages API JSON: request body, response, message list, stream events."""

import json
from pathlib import Path

from scarbook.models import Usage
from scarbook.transcripts import (
    Message,
    SeedSuggestion,
    ToolCall,
    candidates,
    load_transcript,
    suggest_seeds,
    suggest_task,
)
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts"


def rows(t):
    return [(c.number, c.kind, c.label, c.path, c.content) for c in candidates(t)]


def test_request_body_with_editor_tool_and_image():
    t = load_transcript(FIX / "anthropic_request.json")
    assert (t.format, t.model, t.usage, t.warnings) == ("anthropic-messages", "claude-sonnet-4-5", None, [])
    assert t.messages[:3] == [
        Message("system", "You are a file agent."),
        Message("user", "Summarise notes.txt into summary.md\n[image: image/jpeg, 2 kB]"),
        Message("assistant", "Read it first.", kind="thinking"),
    ]
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "summary.md is written."),
        (2, "file", "file summary.md (final content)", "summary.md", "# Summary\nalpha and beta\n"),
        (3, "tool_result", "result of read_file notes.txt", None, "alpha\nbeta\n"),
        (4, "tool_result", "result of str_replace_based_edit_tool summary.md", None, "created"),
        (5, "tool_result", "result of str_replace_based_edit_tool summary.md", None, "edited"),
    ]
    assert suggest_task(t) == "Summarise notes.txt into summary.md"  # the image placeholder is dropped
    assert suggest_seeds(t) == [SeedSuggestion("notes.txt", "alpha\nbeta\n", "read by read_file; content from its result")]


def test_list_of_messages(tmp_path):
    req = json.loads((FIX / "anthropic_request.json").read_text())
    p = tmp_path / "messages.json"
    p.write_text(json.dumps(req["messages"]))
    t = load_transcript(p)
    assert t.format == "anthropic-messages"
    assert [c.label for c in candidates(t)][:2] == ["final answer", "file summary.md (final content)"]


def test_response_alone():
    t = load_transcript(FIX / "anthropic_response.json")
    assert (t.model, t.usage) == ("claude-haiku-4-5", Usage(input_tokens=300, output_tokens=45))
    assert t.warnings == ["tool call toolu_R1 (write_file out.txt) has no result; assumed it succeeded"]
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "Writing the file."),
        (2, "file", "file out.txt (final content)", "out.txt", "hello\n"),
    ]
    assert suggest_task(t) == ""


def test_sse_stream_joins_partial_json():
    t = load_transcript(FIX / "anthropic_stream.sse")
    assert t.format == "anthropic-stream"
    assert t.usage == Usage(input_tokens=410, output_tokens=52, cache_read_tokens=100)
    assert t.tool_calls == [ToolCall("toolu_S1", "write_file", {"path": "report.md", "content": "# Report\nall good\n"})]
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "I'll write the report."),
        (2, "file", "file report.md (final content)", "report.md", "# Report\nall good\n"),
    ]


def _events():
    return [json.loads(line[5:]) for line in (FIX / "anthropic_stream.sse").read_text().splitlines() if line.startswith("data:")]


def test_stream_saved_as_json_list_and_as_json_lines(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps(_events()))
    (tmp_path / "lines.jsonl").write_text("\n".join(json.dumps(e) for e in _events()))
    for name in ("list.json", "lines.jsonl"):
        t = load_transcript(tmp_path / name)
        assert t.format == "anthropic-stream"
        assert t.files_written[0].content == "# Report\nall good\n"


def test_stream_cut_off_mid_tool_input(tmp_path):
    events = _events()[:10]  # stops after the second partial_json piece
    (tmp_path / "cut.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    t = load_transcript(tmp_path / "cut.jsonl")
    assert t.tool_calls[0].input == {"_partial_json": '{"path": "report.md", "content": "# Rep'}
    assert t.warnings[0] == "tool call toolu_S1 input was cut off mid-stream; kept as raw text"
    assert t.files_written == []
