"""Issue 34.4-34.6: the formats people have, each read by its own reader under its own --format name,
and the inputs that crashed the import (OTel string times, a line nested 50,000 deep). Fixtures in
tests/fixtures/transcripts/formats/: small, the shape of real files kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cli import main
from scarbook.errors import ScarbookError
from scarbook.transcripts import FORMATS, candidates, default_artifact, load_transcript, suggest_task

FIX = Path(__file__).parent.parent / "fixtures" / "transcripts" / "formats"


@pytest.mark.parametrize("name, fmt, task, artifact", [
    ("swe_agent.traj", "swe-agent", "TimeSeries: misleading exception when required column check fails.\n\nThe "
     "message says 'expected time but found time'.", "diff --git a/astropy/timeseries/core.py"),
    ("mini_swe_agent.traj.json", "mini-swe-agent", "add() subtracts instead of adding", "diff --git a/calc.py"),
    ("vcr_anthropic.yaml", "http-cassette", "Write the first line of README.md into tmp.txt", "# tiny-agent\n"),
    ("exchange_openai.json", "http-cassette", "Name the capital of Australia.", "Sydney."),
    ("claude_p_result.json", "claude-json", "", "Done: tmp.txt holds the first line of README.md."),
    ("loglines.json", "claude-code", "Create hello.py that prints hello", "print('hello')\n"),
    ("otel_string_times.json", "otel", "Summarise CHANGELOG.md in one line", "v2 adds streaming."),
    ("openinference_contents.json", "otel", "What is in this picture?", "Un chat."),
    ("gen_ai_attributes.json", "otel", "Write a commit message for: fix off-by-one in pager", "Fix pager off-by-one"),
    ("gen_ai_events.json", "otel", "List the largest file in /var/log", "Run: ls -S /var/log | head -1"),
])
def test_each_format_is_detected_read_and_named_as_format_takes_it(name, fmt, task, artifact):
    t = load_transcript(FIX / name)
    assert t.format == fmt and fmt in FORMATS
    assert suggest_task(t) == task
    cands = candidates(t)
    assert cands[default_artifact(cands) - 1].content.startswith(artifact)
    assert load_transcript(FIX / name, format=fmt).format == fmt


def test_a_text_protocol_agent_answers_are_tool_results_not_the_task():
    """mini-swe-agent: the harness's `<returncode>0</returncode>…` replies were taken as the task."""
    t = load_transcript(FIX / "mini_swe_agent.traj.json")
    results = [(r.text, r.is_error) for r in t.tool_results]
    assert results == [("def add(a, b): return a - b", False), ("", False), ("fatal: not a git repository", True)]
    assert [c.input["command"] for c in t.tool_calls][:2] == ["cat calc.py", "sed -i 's/a - b/a + b/' calc.py"]
    assert all("<returncode>" not in m.text for m in t.messages)


def test_a_cassette_is_the_last_calls_conversation_with_its_streamed_reply():
    t = load_transcript(FIX / "vcr_anthropic.yaml")
    assert t.final_answer == "Done: tmp.txt holds the first line."
    assert [(f.path, f.content) for f in t.files_written] == [("tmp.txt", "# tiny-agent\nA tiny agent.\n")]
    assert t.warnings == ["the cassette holds 3 model calls; the last one's conversation is imported (each call "
                          "repeats the history before it)"]


def test_otel_times_as_strings_do_not_crash(tmp_path):
    """An OTLP export whose times are ISO strings died with `ValueError: invalid literal for int()`."""
    t = load_transcript(FIX / "otel_string_times.json")
    assert t.date == "2025-03-04"
    assert (t.usage.input_tokens, t.usage.output_tokens) == (31, 7)


def test_a_line_nested_fifty_thousand_deep_is_a_bad_line_not_a_crash(tmp_path):
    """A JSONL line of 50,000 nested lists died with an uncaught RecursionError (in a reader that parsed
    the file as documents one after another): now it is a bad line, named by number, the rest imported."""
    deep = "[" * 50_000 + "]" * 50_000
    log = tmp_path / "deep.jsonl"
    log.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u1",
                               "sessionId": "s"}).replace('"hi"', deep) + "\n"
                   + json.dumps({"type": "user", "message": {"role": "user", "content": "say ok"}, "uuid": "u2",
                                 "parentUuid": None, "sessionId": "s"}) + "\n"
                   + json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "ok"},
                                 "uuid": "u3", "parentUuid": "u2", "sessionId": "s"}) + "\n")
    t = load_transcript(log)
    assert (t.format, suggest_task(t), t.final_answer) == ("claude-code", "say ok", "ok")
    assert t.warnings == ["line 1 is not JSON (nested too deeply to read); it was skipped"]


def test_a_document_nested_too_deep_is_refused_in_one_line(tmp_path):
    doc = tmp_path / "deep.json"
    doc.write_text('{"a":' * 5000 + "1" + "}" * 5000)
    with pytest.raises(ScarbookError) as exc:
        load_transcript(doc)
    assert str(exc.value) == (f"{doc}: not a transcript scarbook can read: a JSON object with keys a, nested deeper "
                              "than 200 levels; no agent log nests so deep — check that this is the file you meant")


def test_a_swe_agent_draft_through_the_cli(tmp_path):
    (tmp_path / "scarbook.yaml").write_text("")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(FIX / "swe_agent.traj"), "--id", "ts",
                                    "--skip-judge"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "ts")
    assert case.task.startswith("TimeSeries: misleading exception")
    assert (case.root / case.scar.failed_artifact).read_text().startswith("diff --git")
