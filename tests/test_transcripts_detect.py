"""Detection, --format override, unreadable files, big outputs, the preview helper."""

import json
import os
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
    ("terminal.log", "plain"), ("real/codex_exec_stream.jsonl", "codex"),
])
def test_every_fixture_is_detected(name, fmt):
    assert load_transcript(FIX / name).format == fmt


TRIED = "(tried inspect, scarbook, claude-code, codex, otel, anthropic, openai, plain; name one with --format to see why it does not fit)"


@pytest.mark.parametrize("name, data, why", [
    ("unknown.json", None, "JSON, but in none of the shapes scarbook reads"),
    ("shot.png", b"\x89PNG\r\n\x1a\n\x00\x00", "the file is binary (not UTF-8 text)"),
    ("empty.log", b"  \n", "the file is empty"),
    ("bom.jsonl", b"\xef\xbb\xbf", "the file is empty"),
    ("bom-space.log", b"\xef\xbb\xbf \r\n", "the file is empty"),
    ("cut.json", b'{"type": "message", "role": "assistant", "content": [{"type": "te',
     "the file looks like JSON but is cut off or broken: Unterminated string starting at: line 1 column 63 "
     "(char 62)"),
    ("deep.json", b"[" * 2000 + b"]" * 2000,
     "the file looks like JSON but is cut off or broken: nested too deeply to read"),
])
def test_refusals_are_one_line_saying_why(tmp_path, name, data, why):
    path = FIX / name if data is None else tmp_path / name
    if data is not None:
        path.write_bytes(data)
    with pytest.raises(ScarbookError) as exc:
        load_transcript(path)
    assert str(exc.value) == f"{path}: not a transcript scarbook can read: {why} {TRIED}"


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ScarbookError) as exc:
        load_transcript(fifo)
    assert str(exc.value) == (f"{fifo}: not a regular file (a FIFO, socket or device); "
                              "save the transcript to a file first")


def test_format_override(tmp_path):
    t = load_transcript(FIX / "scarbook_run.jsonl", format="plain")
    assert t.format == "plain" and t.final_answer.startswith('{"type": "task"')
    with pytest.raises(ScarbookError) as exc:
        load_transcript(FIX / "terminal.log", format="claude-code")
    assert str(exc.value) == f"{FIX / 'terminal.log'} is not a claude-code transcript: not JSON lines"
    with pytest.raises(ScarbookError) as exc:
        load_transcript(FIX / "terminal.log", format="langchain")
    assert str(exc.value) == ("unknown transcript format 'langchain'; choose one of: "
                              "inspect, scarbook, claude-code, codex, otel, anthropic, openai, plain")
    assert FORMATS == ("inspect", "scarbook", "claude-code", "codex", "otel", "anthropic", "openai", "plain")


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
