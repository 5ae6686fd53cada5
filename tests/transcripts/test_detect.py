"""Detection, --format override, unreadable files, big outputs, the preview helper."""

import gzip
import json
import os
from pathlib import Path

import pytest

from scarbook.errors import ScarbookError
from scarbook.transcripts import FORMATS, candidates, load_transcript, preview
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts"


@pytest.mark.parametrize("name, fmt", [
    ("claude_code_session.jsonl", "claude-code"), ("anthropic_request.json", "anthropic-messages"),
    ("anthropic_response.json", "anthropic-messages"), ("anthropic_stream.sse", "anthropic-stream"),
    ("openai_chat.json", "openai-chat"), ("openai_responses.json", "openai-responses"),
    ("otel_genai.json", "otel"), ("otel_legacy.jsonl", "otel"), ("scarbook_run.jsonl", "scarbook"),
    ("terminal.log", "plain"), ("real/codex_exec_stream.jsonl", "codex"),
])
def test_every_fixture_is_detected(name, fmt):
    assert load_transcript(FIX / name).format == fmt


@pytest.mark.parametrize("name, data, why", [
    ("unknown.json", None, "a JSON object with keys hello; no format is close; `scarbook import {path} --format "
     "plain` keeps the whole file as the failed artifact"),
    ("shot.png", b"\x89PNG\r\n\x1a\n\x00\x00", "a binary file (not UTF-8 text); no format is close; save the log as "
     "UTF-8 text (or JSON) and import that"),
    # UTF-16 (Windows PowerShell's `>`) and a gzipped log were "a binary file": the line names them and the command
    ("ps.jsonl", b"\xff\xfe" + '{"type": "user"}\r\n'.encode("utf-16-le"), "UTF-16 text (not UTF-8); no format is "
     "close; convert it to UTF-8 and import that: `iconv -f UTF-16 -t UTF-8 {path} > {dir}/ps-utf8.jsonl` (in "
     "PowerShell, `Get-Content {path} | Set-Content -Encoding utf8 {dir}/ps-utf8.jsonl`)"),
    ("le.log", "agent: done\n".encode("utf-16-le"), "UTF-16 text (not UTF-8); no format is close; convert it to UTF-8 "
     "and import that: `iconv -f UTF-16LE -t UTF-8 {path} > {dir}/le-utf8.log`"),
    ("be.log", "agent: done\n".encode("utf-16-be"), "UTF-16 text (not UTF-8); no format is close; convert it to UTF-8 "
     "and import that: `iconv -f UTF-16BE -t UTF-8 {path} > {dir}/be-utf8.log`"),
    ("ci.jsonl.gz", gzip.compress(b'{"type": "user"}\n', mtime=0), "a gzip-compressed file; no format is close; "
     "unpack it and import the log inside: `gunzip -k {path}`"),
    ("empty.log", b"  \n", "an empty file; no format is close; the file holds nothing: import the log the agent wrote"),
    ("bom.jsonl", b"\xef\xbb\xbf", "an empty file; no format is close; the file holds nothing: import the log the "
     "agent wrote"),
    ("bom-space.log", b"\xef\xbb\xbf \r\n", "an empty file; no format is close; the file holds nothing: import the "
     "log the agent wrote"),
    ("cut.json", b'{"type": "message", "role": "assistant", "content": [{"type": "te',
     "JSON cut off or broken (Unterminated string starting at: line 1 column 63 (char 62)), a JSON object (type "
     "'message') with keys type, role, content; closest format: anthropic-messages; repair or export it again; "
     "`scarbook import {path} --format plain` keeps the whole file as the failed artifact"),
    ("deep.json", b"[" * 2000 + b"]" * 2000,
     "a JSON array, nested deeper than 200 levels; no agent log nests so deep — check that this is the file you meant"),
    ("nums.json", b"[1, 2]", "a JSON array of 2 int values; no format is close; `scarbook import {path} --format "
     "plain` keeps the whole file as the failed artifact"),
    ("keys.json", b'{"model": "m", "messages": "hi"}', "a JSON object with keys model, messages; closest format: "
     "anthropic-messages (messages is not a non-empty list of messages); if it is anthropic-messages, `scarbook import "
     "{path} --format anthropic-messages` says what does not fit; `--format plain` keeps the whole file as the failed "
     "artifact"),
])
def test_refusals_are_one_line_naming_the_shape_the_closest_format_and_what_to_do(tmp_path, name, data, why):
    path = FIX / name if data is None else tmp_path / name
    if data is not None:
        path.write_bytes(data)
    with pytest.raises(ScarbookError) as exc:
        load_transcript(path)
    assert str(exc.value) == (f"{path}: not a transcript scarbook can read: "
                              f"{why.replace('{path}', str(path)).replace('{dir}', str(path.parent))}")


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
    assert str(exc.value) == (f"{FIX / 'terminal.log'} is not a claude-code transcript: not JSON lines; seen: plain "
                              "text; import it without --format to detect its format, or with --format plain to keep "
                              "it whole as text")
    with pytest.raises(ScarbookError) as exc:
        load_transcript(FIX / "terminal.log", format="gemini")
    assert str(exc.value) == ("unknown transcript format 'gemini'; choose one of: " + ", ".join(FORMATS))
    assert FORMATS == ("inspect", "scarbook", "claude-code", "claude-json", "codex", "otel", "http-cassette",
                       "swe-agent", "mini-swe-agent", "openhands", "openhands-eval", "chatgpt", "claude-ai", "langchain", "anthropic-messages", "anthropic-stream", "openai-chat",
                       "openai-responses", "plain")


@pytest.mark.parametrize("name", [
    "claude_code_session.jsonl", "anthropic_request.json", "anthropic_stream.sse", "openai_chat.json",
    "openai_responses.json", "otel_genai.json", "scarbook_run.jsonl", "terminal.log", "real/codex_exec_stream.jsonl",
])
def test_the_format_a_transcript_is_read_as_is_a_name_format_takes(name):
    """Issue 34.5: `--list` prints `format: anthropic-messages`; `--format anthropic-messages` was refused as an
    unknown format. Every name detection gives is one --format takes, and gives the same transcript."""
    detected = load_transcript(FIX / name)
    assert detected.format in FORMATS
    forced = load_transcript(FIX / name, format=detected.format)
    assert (forced.format, forced.entries, forced.final_answer) == (detected.format, detected.entries,
                                                                    detected.final_answer)


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


def test_the_cycle_collector_is_paused_while_a_log_is_read_and_resumed_after(tmp_path, monkeypatch):
    """Reading a big log makes hundreds of thousands of objects and no cycles: the cycle collector is off
    while the timeline, the candidates and the seeds are built (issue 34.7), on again after — and left off
    when the caller had turned it off."""
    import gc

    from scarbook.transcripts import files, suggest_seeds

    seen: list[bool] = []
    derive = files.derive_files
    monkeypatch.setattr(files, "derive_files", lambda t, **kw: (seen.append(gc.isenabled()), derive(t, **kw))[1])
    log = tmp_path / "s.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"type": "task", "text": "Write a.py"},
        {"type": "tool_call", "id": "c1", "name": "write_file", "input": {"path": "a.py", "content": "x = 1\n"}},
        {"type": "tool_result", "id": "c1", "output": "ok"},
        {"type": "final", "text": "Done."}]) + "\n")
    assert gc.isenabled()
    t = load_transcript(log)
    assert seen == [False] and gc.isenabled()
    assert candidates(t) and gc.isenabled()
    suggest_seeds(t)
    assert gc.isenabled()
    gc.disable()
    try:
        load_transcript(log)
        assert not gc.isenabled()
    finally:
        gc.enable()
