"""Issue 15: transcripts as people actually have them (older Claude Code versions, Windows,
API transcripts with absolute paths, OTel files with several traces). One fixture each, modelled
on the log that failed; every assertion is what the user sees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scarbook.cases.transcript_draft import draft_case_data
from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task
from tests.helpers.paths import FIXTURES

REAL = FIXTURES / "transcripts" / "real"


def rows(t):
    return [(c.number, c.kind, c.label, c.content) for c in candidates(t)]


@pytest.mark.parametrize("name", ["cc_parent_null.jsonl", "cc_no_parent.jsonl"])
def test_records_without_a_parent_chain_are_read_in_file_order(name):
    """1. `parentUuid: null` on every record (older versions) or no parentUuid at all (exported
    samples): the whole conversation, not only the last record, and no 'abandoned branch'."""
    t = load_transcript(REAL / name)
    assert suggest_task(t) == "Write the release notes to NOTES.md"
    assert [(f.path, f.content) for f in t.files_written] == [("NOTES.md", "# Notes\n- v1\n")]
    assert t.final_answer == "Wrote NOTES.md."
    assert t.warnings == []


def test_default_artifact_is_the_file_written_last():
    """2. Write a.txt, Write b.txt, Edit a.txt: a.txt was written last, so it is the default."""
    t = load_transcript(REAL / "cc_write_order.jsonl")
    cands = candidates(t)
    files = [(c.number, c.path, c.content) for c in cands if c.kind == "file"]
    assert files == [(2, "b.txt", "beta\n"), (3, "a.txt", "ALPHA\n")]
    assert cands[default_artifact(cands) - 1].path == "a.txt"


def test_a_write_to_the_working_directory_is_not_a_candidate():
    """3. A written path equal to the cwd is a folder: never a candidate `.`."""
    t = load_transcript(REAL / "cc_write_cwd.jsonl")
    assert [c.path for c in candidates(t) if c.kind == "file"] == []
    assert t.warnings == ["Write /home/dev/tiny names a folder, not a file; it is not a candidate"]


def test_windows_paths_are_made_relative_to_a_windows_cwd():
    """5. `C:\\Users\\dev\\tiny` cwd; a read spelled in another case; a log with doubled backslashes."""
    t = load_transcript(REAL / "cc_windows.jsonl")
    assert t.root == "C:\\Users\\dev\\tiny"
    assert [(f.path, f.content) for f in t.files_written] == [("notes/a.txt", "win\r\n")]
    assert [(f.path, f.content) for f in t.files_read] == [("README.md", "hello\n")]
    t = load_transcript(REAL / "cc_windows_escaped.jsonl")
    assert [f.path for f in t.files_written] == ["src/b.txt"]


def test_read_with_an_empty_last_gutter_keeps_the_file_as_it_was():
    """8. `1→session-start` then an empty `2→`: the file is "session-start\\n", not "...\\n\\n",
    so the Edit that follows replays on the right text."""
    t = load_transcript(REAL / "cc_read_gutter.jsonl")
    assert [(f.path, f.content) for f in t.files_read] == [("log.txt", "session-start\n")]
    assert [(f.path, f.content, f.note) for f in t.files_written] == [
        ("log.txt", "session-start\nsession-end\n", "")]


def test_stream_json_output_is_read_with_its_snake_case_tool_use_result():
    """8. `claude -p --output-format stream-json --verbose`: `tool_use_result` (snake_case) holds
    the file read; the `result` event holds the final answer, the usage and the cost."""
    t = load_transcript(REAL / "claude_stream.jsonl")
    assert t.format == "claude-code"
    assert suggest_task(t) == "Put the first line of README.md in tmp.txt"
    assert t.cwd == "/tmp/ws"
    # the file has no final newline: only `tool_use_result.file.content` says so exactly
    assert [(f.path, f.content) for f in t.files_read] == [("README.md", "# tiny-agent\nA tiny agent.")]
    assert [(f.path, f.content) for f in t.files_written] == [("tmp.txt", "# tiny-agent\nA tiny agent.")]
    assert t.final_answer == "Done: tmp.txt holds the first line of README.md."
    assert (t.usage.input_tokens, t.usage.output_tokens, t.usage.cost_usd) == (14, 230, 0.0213)
    assert t.warnings == []


def test_task_loses_system_reminders_and_control_characters_and_date_is_the_incidents():
    """10. The task as the person wrote it; scar.date from the log's timestamps (the last one)."""
    t = load_transcript(REAL / "cc_task_noise.jsonl")
    assert suggest_task(t) == "Rename foo to bar in\tsrc/app.py"
    assert t.date == "2026-10-02"
    t = load_transcript(REAL / "cc_write_order.jsonl")
    data = draft_case_data(t, "x", candidates(t)[2], "log.jsonl")
    assert data["scar"]["date"] == "2026-10-03"


def test_a_file_edited_with_unknown_original_is_listed_as_partial():
    """11. An Edit of a file the log never showed whole: listed, marked partial, never the default."""
    t = load_transcript(REAL / "cc_edit_unknown.jsonl")
    got = rows(t)
    assert got[:2] == [
        (1, "final_answer", "final answer", "Bumped to 2.0."),
        (2, "file", "file setup.cfg (edits only, original unknown)", "version = 2.0"),
    ]
    assert default_artifact(candidates(t)) == 1


def test_absolute_paths_without_a_cwd_are_relative_to_the_common_root():
    """4. Anthropic text-editor calls name `/repo/tmp.txt` and there is no cwd."""
    t = load_transcript(REAL / "anthropic_editor_abs.json")
    assert t.cwd is None and t.root == "/repo"
    assert [(f.path, f.content) for f in t.files_written] == [("tmp.txt", "# repo\n")]
    assert [f.path for f in t.files_read] == ["README.md", "docs/guide.md"]
    t = load_transcript(REAL / "anthropic_editor_abs.json", root="/")
    assert [f.path for f in t.files_written] == ["repo/tmp.txt"]


def test_otel_legacy_completion_whose_text_is_json_is_the_answer():
    """9. `gen_ai.completion` holding the text `{"answer": 42}`: the answer is that text."""
    t = load_transcript(REAL / "otel_completion_json.json")
    assert t.final_answer == '{"answer": 42, "unit": "ms"}'
    assert rows(t)[0] == (1, "final_answer", "final answer", '{"answer": 42, "unit": "ms"}')


def test_otel_file_with_several_traces_shows_one_and_lists_them():
    """9. Two traces (two conversations) in one file: never merged; the latest by default."""
    t = load_transcript(REAL / "otel_two_traces.jsonl")
    assert t.traces == [("aaaa0000000000000000000000000001", "2 spans, started 2026-11-10 08:00:00 UTC"),
                        ("bbbb0000000000000000000000000002", "2 spans, started 2026-11-12 17:30:00 UTC")]
    assert t.trace == "bbbb0000000000000000000000000002"
    assert (suggest_task(t), t.final_answer) == ("Summarise the incident report", "Summary: disk full at 03:12.")
    assert t.date == "2026-11-12"
    first = load_transcript(REAL / "otel_two_traces.jsonl", trace="aaaa0000000000000000000000000001")
    assert (suggest_task(first), first.final_answer) == ("Translate hello to French", "Bonjour")
    assert first.warnings == []


def test_fixture_stream_is_the_one_the_presets_replay():
    """The stream-json fixture parses line by line as the CLI writes it (one JSON object a line)."""
    lines = (REAL / "claude_stream.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["type"] == "user" and json.loads(lines[-1])["type"] == "result"


def test_stream_json_subagent_messages_are_a_sidechain(tmp_path):
    """stream-json marks a subagent's (Task) messages with `parent_tool_use_id`: kept, marked, never
    the task or the answer."""
    lines = (REAL / "claude_stream.jsonl").read_text().splitlines()
    sub = {"type": "user", "message": {"role": "user", "content": "Search src/ for TODO"}, "session_id": "s",
           "parent_tool_use_id": "toolu_task", "uuid": "sub1"}
    path = tmp_path / "stream.jsonl"
    path.write_text("\n".join(lines[:2] + [json.dumps(sub)] + lines[2:]) + "\n")
    t = load_transcript(path)
    assert [(m.text, m.sidechain) for m in t.messages if m.role == "user"] == [
        ("Put the first line of README.md in tmp.txt", False), ("Search src/ for TODO", True)]


def test_a_trace_of_one_span_is_listed_as_one_span(tmp_path):
    """The trace list counts spans in English: a trace of one span is "1 span" (it said "1 spans")."""
    lines = (REAL / "otel_two_traces.jsonl").read_text().splitlines()
    (tmp_path / "one_span.jsonl").write_text("\n".join(lines[:3]) + "\n")  # trace bbbb keeps its first span
    t = load_transcript(tmp_path / "one_span.jsonl")
    assert [said.split(",")[0] for _, said in t.traces] == ["2 spans", "1 span"]
