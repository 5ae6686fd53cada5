"""Detection, --format override, unreadable files, big outputs, the preview helper."""

import json
from pathlib import Path

import pytest

from scarbook.errors import ScarbookError
from scarbook.transcripts import FORMATS, candidates, load_transcript, preview

FIX = Path(__file__).parent / "fixtures" / "transcripts"


@pytest.mark.parametrize("name, fmt", [
    ("claude_code_session.jsonl", "claude-code"), ("anthropic_request.json", "anthropic-messages"),
    ("anthropic_response.json", "anthropic-messages"), ("anthropic_stream.sse", "anthropic-stream"),
    ("openai_chat.json", "openai-chat"), ("openai_responses.json", "openai-responses"),
    ("otel_genai.json", "otel"), ("otel_legacy.jsonl", "otel"), ("scarbook_run.jsonl", "scarbook"),
    ("terminal.log", "plain"),
])
def test_every_fixture_is_detected(name, fmt):
    assert load_transcript(FIX / name).format == fmt


def test_unknown_json_lists_every_format_tried():
    with pytest.raises(ScarbookError) as exc:
        load_transcript(FIX / "unknown.json")
    assert str(exc.value) == "\n".join([
        f"{FIX / 'unknown.json'}: not a transcript scarbook can read. Formats tried:",
        '  scarbook: line 1 has no "type" (scarbook records are assistant, final, task, tool_call, tool_result, usage)',
        "  claude-code: a single JSON document, not JSON lines",
        "  otel: no OTLP `resourceSpans` with spans",
        "  anthropic: no `messages` list, `type: message` response or stream events",
        "  openai: no `messages`, `input`, `choices` or `output`",
        "  plain: the file is JSON, so it is not taken as plain text",
        "If you know the format, name it with --format.",
    ])


def test_binary_and_empty_files(tmp_path):
    (tmp_path / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(ScarbookError) as exc:
        load_transcript(tmp_path / "shot.png")
    assert str(exc.value).splitlines()[1:] == [
        "  scarbook: the file is not UTF-8 text",
        "  claude-code: the file is not UTF-8 text",
        "  otel: no OTLP `resourceSpans` with spans",
        "  anthropic: not a JSON document or a stream of message events",
        "  openai: not a JSON document",
        "  plain: the file is binary (not UTF-8 text)",
        "If you know the format, name it with --format.",
    ]
    (tmp_path / "empty.log").write_text("  \n")
    with pytest.raises(ScarbookError) as exc:
        load_transcript(tmp_path / "empty.log")
    assert str(exc.value).splitlines()[-2] == "  plain: the file is empty"


def test_format_override(tmp_path):
    t = load_transcript(FIX / "scarbook_run.jsonl", format="plain")
    assert t.format == "plain" and t.final_answer.startswith('{"type": "task"')
    with pytest.raises(ScarbookError) as exc:
        load_transcript(FIX / "terminal.log", format="claude-code")
    assert str(exc.value) == f"{FIX / 'terminal.log'} is not a claude-code transcript: not JSON lines"
    with pytest.raises(ScarbookError) as exc:
        load_transcript(FIX / "terminal.log", format="langchain")
    assert str(exc.value) == ("unknown transcript format 'langchain'; choose one of: "
                              "scarbook, claude-code, otel, anthropic, openai, plain")
    assert FORMATS == ("scarbook", "claude-code", "otel", "anthropic", "openai", "plain")


def test_missing_file(tmp_path):
    with pytest.raises(ScarbookError) as exc:
        load_transcript(tmp_path / "nope.jsonl")
    assert str(exc.value) == f"{tmp_path / 'nope.jsonl'}: no such transcript file"


def test_five_megabyte_tool_output_is_kept_whole(tmp_path):
    big = "".join(f"line {i:07d} of a very long build log\n" for i in range(140_000))
    assert len(big) > 5_000_000
    lines = [{"type": "task", "text": "build it"},
             {"type": "tool_call", "id": "b", "name": "bash", "input": {"command": "make"}},
             {"type": "tool_result", "id": "b", "output": big, "is_error": True},
             {"type": "final", "text": "build passed"}]
    (tmp_path / "big.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    cands = candidates(load_transcript(tmp_path / "big.jsonl"))
    assert cands[1].content == big
    assert cands[1].label == "result of bash: make (error)"
    assert preview(cands[1].content, 40) == "line 0000000 of a very long build log l…"


def test_preview():
    assert preview("a\n  b\tc", 10) == "a b c"
    assert preview("abcdefghij", 5) == "abcd…"
