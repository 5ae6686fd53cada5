"""scarbook's own run transcripts, and plain terminal logs."""

import json
from pathlib import Path

from scarbook.models import Usage
from scarbook.transcripts import (
    SeedSuggestion,
    candidates,
    default_artifact,
    load_transcript,
    suggest_seeds,
    suggest_task,
)
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts"
README = "# tiny-agent\nA tiny agent.\n"


def rows(t):
    return [(c.number, c.kind, c.label, c.path, c.content) for c in candidates(t)]


def test_scarbook_run_transcript():
    t = load_transcript(FIX / "scarbook_run.jsonl")
    assert (t.format, t.model, t.warnings) == ("scarbook", "demo-1", [])
    assert t.usage == Usage(input_tokens=210, output_tokens=35)
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "Done — tmp.txt has one line."),
        (2, "file", "file tmp.txt (final content)", "tmp.txt", README),
        (3, "tool_result", "result of list_dir .", None, "README.md\n"),
        (4, "tool_result", "result of read_file README.md", None, README),
        (5, "tool_result", "result of write_file tmp.txt", None, "wrote 27 bytes"),
        (6, "tool_result", "result of read_file tmp.txt", None, README),
        (7, "tool_result", "result of read_file LICENSE (error)", None, "no such file: LICENSE"),
    ]
    assert suggest_task(t) == "Extract the first line of README.md and write it to tmp.txt"
    # tmp.txt was read after the agent wrote it, LICENSE failed: neither is a seed
    assert suggest_seeds(t) == [SeedSuggestion("README.md", README, "read by read_file; content from its result")]


def test_scarbook_run_cut_off_by_a_crash(tmp_path):
    text = (FIX / "scarbook_run.jsonl").read_text().splitlines()
    (tmp_path / "t.jsonl").write_text("\n".join(text[:7]) + "\n" + text[7][:30])
    t = load_transcript(tmp_path / "t.jsonl")
    assert t.warnings == [
        "last line truncated by a crash (line 8); it was skipped",
        "tool call c3 (write_file tmp.txt) has no result; assumed it succeeded",
    ]
    assert t.final_answer == "Writing tmp.txt."
    assert [c.label for c in candidates(t)][:2] == ["final answer", "file tmp.txt (final content)"]


def test_plain_log_strips_ansi():
    t = load_transcript(FIX / "terminal.log")
    assert t.format == "plain"
    assert rows(t) == [(1, "final_answer", "plain text (the whole log)", None, "$ agent run\nThinking…\nDone: wrote out.txt\n")]
    assert suggest_task(t) == ""
    assert suggest_seeds(t) == []


def test_recorder_model_calls_read_through_their_derived_records(tmp_path):
    """The recorder's `model_call` records (docs/transcript-format.md) are kept out of the timeline:
    the task, tool calls and usage written after each call are what a reader sees."""
    call = {"type": "model_call", "n": 1, "api": "anthropic.messages", "model": "claude-test", "stream": False,
            "request": {"method": "POST", "path": "/v1/messages", "headers": {}, "body": {"messages": []}},
            "response": {"status": 200, "headers": {}, "body": {}}, "latency_ms": 1.0,
            "usage": {"input_tokens": 12, "output_tokens": 20}, "digest": "x"}
    lines = [call,
             {"type": "task", "call": 1, "text": "Write hello to a.txt"},
             {"type": "tool_call", "call": 1, "id": "t1", "name": "write_file", "input": {"path": "a.txt", "content": "hello"}},
             {"type": "usage", "call": 1, "model": "claude-test", "input_tokens": 12, "output_tokens": 20,
              "cache_read_tokens": 5, "cache_write_tokens": 0},
             {**call, "n": 2},
             {"type": "tool_result", "call": 2, "id": "t1", "output": "ok", "is_error": False},
             {"type": "assistant", "call": 2, "text": "done"},
             {"type": "usage", "call": 2, "model": "claude-test", "input_tokens": 30, "output_tokens": 2}]
    import json
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    t = load_transcript(tmp_path / "t.jsonl")
    assert (t.format, t.model, t.warnings) == ("scarbook", "claude-test", [])
    assert t.usage == Usage(input_tokens=42, output_tokens=22, cache_read_tokens=5)
    assert [c.name for c in t.tool_calls] == ["write_file"]
    assert suggest_task(t) == "Write hello to a.txt"
    assert [c.label for c in candidates(t)][:2] == ["final answer", "file a.txt (final content)"]


def test_an_aider_chat_history_is_read_as_its_conversation(tmp_path):
    """Issue 34 (corpus worklist): `.aider.chat.history.md` was one blob of text with no task; its `#### `
    lines are what the user typed, `> ` lines aider's own output, the rest the model's reply."""
    log = tmp_path / ".aider.chat.history.md"
    log.write_text("# aider chat started at 2024-08-05 19:33:32\n\n> Aider v0.47.2-dev  \n> Added utils.py to the "
                   "chat.  \n\n#### Use the Spinner instead of the inlined spinner  \n\nCertainly! Here's the change:"
                   "\n\nutils.py\n```python\n<<<<<<< SEARCH\nspin = cycle('|/-')\n=======\nspin = Spinner('Installing')"
                   "\n>>>>>>> REPLACE\n```\n\nThis uses the Spinner.\n\n> Applied edit to utils.py  \n\n#### /diff  \n\n"
                   "#### /ex  \n")
    t = load_transcript(log)
    assert (t.format, suggest_task(t)) == ("plain", "Use the Spinner instead of the inlined spinner")
    assert t.final_answer is not None and t.final_answer.startswith("Certainly! Here's the change:")
    assert ">>>>>>> REPLACE" in t.final_answer and t.final_answer.endswith("This uses the Spinner.")
    # its SEARCH/REPLACE block is an edit of utils.py, whose content aider's history never held: a part of a file,
    # so the reply stays the default artifact (tests/transcripts/test_aider_edits.py)
    cands = candidates(t)
    assert [c.label for c in cands] == ["final answer", "file utils.py (edits only, original unknown)"]
    assert default_artifact(cands) == 1


def test_a_big_logs_repeated_names_are_held_once(tmp_path):
    """Each JSON line is parsed alone, so each call's argument names and each usage record's model came as
    strings of their own: the reader keeps one of each (issue 34.7: peak memory <= 2x the file)."""
    log = tmp_path / "run.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"type": "task", "text": "Write two files"},
        {"type": "tool_call", "id": "c1", "name": "write_file", "input": {"path": "a.py", "content": "a = 1\n"}},
        {"type": "tool_result", "id": "c1", "output": "ok"},
        {"type": "usage", "model": "claude-sonnet-4-5", "input_tokens": 9, "output_tokens": 3},
        {"type": "tool_call", "id": "c2", "name": "write_file", "input": {"path": "b.py", "content": "b = 2\n"}},
        {"type": "tool_result", "id": "c2", "output": "ok"},
        {"type": "usage", "model": "claude-sonnet-4-5", "input_tokens": 9, "output_tokens": 3},
        {"type": "final", "text": "Done."}]) + "\n")
    t = load_transcript(log)
    first, second = (list(c.input) for c in t.tool_calls)
    assert first == second == ["path", "content"]
    assert all(a is b for a, b in zip(first, second, strict=True))
    (_, m1, _), (_, m2, _) = t.usage_steps
    assert m1 == m2 == "claude-sonnet-4-5" and m1 is m2
    assert [(f.path, f.content) for f in t.files_written] == [("a.py", "a = 1\n"), ("b.py", "b = 2\n")]


def test_a_stamped_logs_day_is_the_scars_date_not_the_day_it_was_imported(tmp_path):
    """A GitHub Actions log of an agent (every line opens with its time) was filed with today as scar.date: plain
    text read no timestamps. The day of its last stamped line is the incident's day now; a log with none has
    none (the draft then says today), and aider's chat history gives the day it was started."""
    from click.testing import CliRunner

    from scarbook.cli import main

    gha = tmp_path / "job.log"
    gha.write_text("2026-11-20T23:59:58.1370000Z ##[group]Run aider --yes --message \"Fix the failing test\"\n"
                   "2026-11-20T23:59:59.2740000Z \x1b[1mAider v0.62.1\x1b[0m\n"
                   "2026-11-21T00:00:01.0000000Z Applied edit to tests/test_parse.py\n"
                   "some line a tool printed on 2026-12-01 10:00\n")
    plain_log = tmp_path / "paste.txt"
    plain_log.write_text("$ agent run\nDone: wrote out.txt on 2026-01-02 10:00\n")
    aider = tmp_path / ".aider.chat.history.md"
    aider.write_text("# aider chat started at 2024-08-05 19:33:32\n\n#### fix it  \n\nDone.\n")
    assert [load_transcript(p).date for p in (gha, plain_log, aider)] == ["2026-11-21", None, "2024-08-05"]
    (tmp_path / "scarbook.yaml").write_text("")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(gha), "--id", "gha"])
    assert res.exit_code == 0, res.output
    assert "  date: '2026-11-21'\n" in (tmp_path / "cases" / "gha" / "case.yaml").read_text()
