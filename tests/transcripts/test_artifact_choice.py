"""Issue 34 (corpus worklist): which artifact a draft files when the user names none. The agent's words
before a tool call the log ends with ("Let me check the weather…") were filed as its final answer; a log
holding only tool output (background jobs, a Read, scheduling calls) drafted a case whose "failed
artifact" was a tool's output; pydantic-ai's output tool (`final_result`) lost the answer it carries; a
file the harness keeps outside the project (Claude Code's memory) blocked a draft that had an answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cli import main
from scarbook.transcripts import candidates, default_artifact, load_transcript


def _messages(tmp_path: Path, messages: list[dict], name: str = "m.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"model": "claude-x", "max_tokens": 10, "system": "s", "messages": messages}))
    return path


def _import(tmp_path: Path, log: Path, *args: str):
    (tmp_path / "scarbook.yaml").write_text("")
    return CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(log), *args, "--skip-judge"])


WEATHER = [
    {"role": "user", "content": "What is the weather and the time in San Francisco?"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "I'll help you get the weather and the time."},
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"location": "San Francisco"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "Sunny, 65F"}]},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c2", "name": "get_time", "input": {"timezone": "America/Los_Angeles"}}]},
]


def test_words_before_a_tool_call_are_a_preamble_not_the_answer(tmp_path):
    t = load_transcript(_messages(tmp_path, WEATHER))
    cands = candidates(t)
    assert [(c.kind, c.preamble) for c in cands] == [("final_answer", True), ("tool_result", False)]
    assert t.preamble and t.final_answer == "I'll help you get the weather and the time."


def test_a_log_of_tool_output_only_is_refused_and_a_named_result_still_drafts(tmp_path):
    log = _messages(tmp_path, WEATHER)
    res = _import(tmp_path, log, "--id", "w")
    assert res.exit_code == 2
    assert res.stderr == (
        f"scarbook: {log}: the agent handed in nothing to file: its last words (\"I'll help you get the weather and "
        "the time.\") come before a tool call the log ends with, it wrote no file, and the rest is 1 tool result; if "
        "one of them is the failure, name it with --artifact N (`--list` numbers them), or import a log that holds "
        "the agent's answer\n")
    assert not (tmp_path / "cases" / "w").exists()
    res = _import(tmp_path, log, "--id", "w", "--artifact", "2")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cases" / "w" / "scar" / "artifact.txt").read_text() == "Sunny, 65F"


def test_an_answer_after_its_tool_calls_is_still_the_answer(tmp_path):
    t = load_transcript(_messages(tmp_path, [*WEATHER, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c2", "content": "10:04"}]},
        {"role": "assistant", "content": "Sunny and 65F; it is 10:04."}]))
    cands = candidates(t)
    assert not t.preamble and cands[default_artifact(cands) - 1].content == "Sunny and 65F; it is 10:04."


@pytest.mark.parametrize("arguments, answer", [
    ('{"city": "Mexico City", "country": "Mexico"}', '{\n  "city": "Mexico City",\n  "country": "Mexico"\n}'),
    ('{"response": "Mexico City"}', "Mexico City"),
])
def test_an_output_tool_carries_the_final_answer(tmp_path, arguments, answer):
    """pydantic-ai hands the result in as a `final_result` tool call: its input is the answer."""
    path = tmp_path / "o.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "What is the largest city in the user country?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_user_country", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Mexico"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "final_result", "arguments": arguments}}]}]}))
    t = load_transcript(path)
    cands = candidates(t)
    assert (t.final_answer, t.preamble) == (answer, False)
    assert cands[default_artifact(cands) - 1].kind == "final_answer"


def test_a_file_outside_every_folder_the_agent_worked_in_is_not_the_default(tmp_path):
    """Claude Code's memory file (~/.claude/projects/…/memory/build.md) is the harness's, not the project's:
    the draft was refused ("outside the transcript's root") though the agent answered."""
    log = Path(__file__).parent / "corpus" / "claude-code" / "memory_interactions.jsonl"
    t = load_transcript(log)
    cands = candidates(t)
    memory = next(c for c in cands if c.kind == "file")
    assert memory.astray and memory.path.startswith("/home/u/.claude/")
    assert cands[default_artifact(cands) - 1].kind == "final_answer"
