"""Issue 34.3: a Claude Code subagent's own file. Its task is the prompt its parent gave it (the parent's
Agent / Task call input when the parent session sits beside it, else its first user message), its
artifact its answer or the last file it wrote; the parent beside it is named (a warning, and `--list`).
A compaction file (auto-compact, `agent-acompact-*`) re-emits the conversation it summarises: its task
is the summary request and its summary the artifact, not a file the re-emitted conversation wrote."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task

SID = "5f1c0000-0000-4000-8000-000000000001"


def _records(path: Path, records: list[tuple[str, object, dict]], *, side: bool, agent: str | None = None) -> Path:
    lines, parent = [], None
    for n, (kind, content, extra) in enumerate(records):
        uuid = f"{agent or 'main'}-{n}"
        lines.append(json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SID,
                                 "isSidechain": side, "cwd": "/w", "timestamp": "2026-01-02T03:04:05Z",
                                 **({"agentId": agent} if agent else {}),
                                 "message": {"role": kind, "content": content}, **extra}))
        parent = uuid
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _parent(project: Path, agent: str = "a1") -> Path:
    return _records(project / f"{SID}.jsonl", [
        ("user", "Survey the repository", {}),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {
            "description": "Survey src/web", "subagent_type": "general-purpose",
            "prompt": "Survey src/web and report its layout."}}], {}),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "web: two modules"}],
         {"toolUseResult": {"agentId": agent, "status": "completed"}}),
        ("assistant", [{"type": "text", "text": "Surveyed."}], {})], side=False)


def _subagent(path: Path, first_prompt: str | None = "Survey src/web and report its layout.") -> Path:
    records: list[tuple[str, object, dict]] = [("user", first_prompt, {})] if first_prompt else []
    records += [
        ("assistant", [{"type": "tool_use", "id": "w1", "name": "Write",
                        "input": {"file_path": "/w/notes/web.md", "content": "# web\n"}}], {}),
        ("user", [{"type": "tool_result", "tool_use_id": "w1", "content": "File created successfully"}], {}),
        ("assistant", [{"type": "text", "text": "## The web module\nTwo modules."}], {})]
    return _records(path, records, side=True, agent="a1")


def test_a_subagent_beside_its_parent_takes_the_parents_prompt_and_names_the_parent(tmp_path):
    """The subagent's file holds no prompt of its own (its first record is the reply): the task was TODO."""
    project = tmp_path / "-home-me-app"
    parent = _parent(project)
    log = _subagent(project / SID / "subagents" / "agent-a1.jsonl", first_prompt=None)
    t = load_transcript(log)
    assert suggest_task(t) == "Survey src/web and report its layout."
    assert t.parent == parent
    assert t.warnings[-1] == (f"its parent session sits beside it: {parent} (import that to file the session's own "
                              "incident)")
    cands = candidates(t)
    assert cands[default_artifact(cands) - 1].path == "notes/web.md"  # the last file it wrote
    (tmp_path / "scarbook.yaml").write_text("")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(log), "--list"])
    assert res.exit_code == 0, res.output
    assert f"parent session: {parent} (this is one of its subagents; import it to file the session)\n" in res.stdout


def test_the_older_layout_finds_the_parent_by_its_session_id(tmp_path):
    parent = _parent(tmp_path)
    t = load_transcript(_subagent(tmp_path / "agent-a1.jsonl"))
    assert t.parent == parent and suggest_task(t) == "Survey src/web and report its layout."


def test_a_subagent_alone_keeps_its_first_message_and_says_nothing_of_a_parent(tmp_path):
    t = load_transcript(_subagent(tmp_path / "agent-a1.jsonl", "Survey the web module"))
    assert t.parent is None and suggest_task(t) == "Survey the web module"
    assert not any("parent" in w for w in t.warnings)


COMPACT = ("Your task is to create a detailed summary of the conversation so far, paying close attention to the "
           "user's explicit requests and your previous actions.")


def test_a_compaction_file_is_its_summary_request_and_its_summary(tmp_path):
    log = _records(tmp_path / SID / "subagents" / "agent-acompact-7f3a.jsonl", [
        ("user", "Refactor the parser", {}),
        ("assistant", [{"type": "tool_use", "id": "w1", "name": "Write",
                        "input": {"file_path": "/w/parser.py", "content": "def parse(): ...\n"}}], {}),
        ("user", [{"type": "tool_result", "tool_use_id": "w1", "content": "File created successfully"}], {}),
        ("assistant", [{"type": "text", "text": "Parser refactored."}], {}),
        ("user", COMPACT, {}),
        ("assistant", [{"type": "text", "text": "<analysis>The user asked…</analysis>\n\n<summary>\n1. Primary "
                                                "Request: refactor the parser.\n2. Files: parser.py\n</summary>"}], {})],
        side=True, agent="acompact-7f3a")
    t = load_transcript(log)
    assert t.compaction and t.warnings[0].startswith("a compaction file (Claude Code's auto-compact)")
    cands = candidates(t)
    chosen = cands[default_artifact(cands) - 1]
    assert (chosen.kind, chosen.content) == ("final_answer", "1. Primary Request: refactor the parser.\n2. Files: "
                                                             "parser.py")
    (tmp_path / "scarbook.yaml").write_text("")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(log), "--id", "compact", "--skip-judge"])
    assert res.exit_code == 0, res.output
    case = (tmp_path / "cases" / "compact" / "case.yaml").read_text()
    assert "Your task is to create a detailed summary" in case and "artifact_at: output" in case
