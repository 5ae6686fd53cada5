"""Issue 34.2: the seed is the project as it stood when the chosen task began. Files earlier turns
created or changed are seeded with their content as of the task's first prompt, replayed from the log
(Write, Edit, heredocs, SWE-agent's open/edit, reads that state a file outright); what the log cannot
give is named — a suggestion without content, and a warning of the draft — never left out in silence."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.transcripts import load_transcript, suggest_seeds, suggest_task, task_start

CORPUS = Path(__file__).parent / "corpus"


def _session(tmp_path: Path, turns: list[list[tuple[str, object]]], name: str = "s.jsonl") -> Path:
    """A Claude Code session: each turn a user prompt then (role, content) records."""
    lines, parent = [], None
    for records in turns:
        for kind, content in records:
            uuid = f"u{len(lines)}"
            extra = {}
            if kind == "result":  # (call id, text, toolUseResult)
                cid, text, use = content  # type: ignore[misc]
                kind, content, extra = "user", [{"type": "tool_result", "tool_use_id": cid, "content": text}], \
                    ({"toolUseResult": use} if use else {})
            lines.append(json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s",
                                     "isSidechain": False, "cwd": "/w", "timestamp": "2026-01-02T03:04:05Z",
                                     "message": {"role": kind, "content": content}, **extra}))
            parent = uuid
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _call(cid: str, name: str, **inp: object) -> tuple[str, object]:
    return ("assistant", [{"type": "tool_use", "id": cid, "name": name, "input": inp}])


def _import(tmp_path: Path, log: Path, *args: str):
    (tmp_path / "scarbook.yaml").write_text("")
    return CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(log), *args, "--seed-suggested",
                                     "--skip-judge"])


def _two_turns(tmp_path: Path) -> Path:
    """Turn 1 writes the migration script and edits it; turn 2 asks for something new that runs it."""
    return _session(tmp_path, [
        [("user", "Write a migration script for table a"),
         _call("w1", "Write", file_path="/w/migrate.py", content="tables = ['a']\nrun(tables)\n"),
         ("result", ("w1", "File created successfully", None)),
         _call("e1", "Edit", file_path="/w/migrate.py", old_string="run(tables)", new_string="run(tables, dry=True)"),
         ("result", ("e1", "The file has been updated", None)),
         ("assistant", [{"type": "text", "text": "Written, as a dry run."}])],
        [("user", "Add a --all flag that migrates every table"),
         _call("e2", "Edit", file_path="/w/migrate.py", old_string="tables = ['a']", new_string="tables = ALL"),
         ("result", ("e2", "The file has been updated", None)),
         ("assistant", [{"type": "text", "text": "Done: --all migrates every table."}])]])


def test_a_file_an_earlier_turn_wrote_is_seeded_as_that_turn_left_it(tmp_path):
    """The task is turn 2; migrate.py, written and edited by turn 1, was not in the seed at all."""
    log = _two_turns(tmp_path)
    t = load_transcript(log)
    seeds = suggest_seeds(t, task_start(t, 2))
    assert [(s.path, s.content, s.reason) for s in seeds] == [
        ("migrate.py", "tables = ['a']\nrun(tables, dry=True)\n", "as turn 1 left it (Write, Edit), replayed from the log")]
    res = _import(tmp_path, log, "--id", "mig")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cases" / "mig" / "seed" / "migrate.py").read_text() == "tables = ['a']\nrun(tables, dry=True)\n"
    assert (tmp_path / "cases" / "mig" / "scar" / "artifact.py").read_text() == "tables = ALL\nrun(tables, dry=True)\n"


def test_a_follow_ups_task_begins_at_the_request_it_continues(tmp_path):
    """"continue" joins turn 1: the task began at turn 1, so what turn 1 made is the task's work, not its seed."""
    log = _session(tmp_path, [
        [("user", "Write a migration script for every table"),
         _call("w1", "Write", file_path="/w/migrate.py", content="tables = ['a']\n"),
         ("result", ("w1", "File created successfully", None))],
        [("user", "continue"),
         _call("w2", "Write", file_path="/w/migrate.py", content="tables = ['a', 'b']\n"),
         ("result", ("w2", "File created successfully", None)),
         ("assistant", [{"type": "text", "text": "All done."}])]])
    t = load_transcript(log)
    assert task_start(t, 2) == 0 and suggest_seeds(t, task_start(t, 2)) == []
    exactly = suggest_seeds(t, task_start(t, 2, exact=True))  # --turn 2: turn 1's file is the state before
    assert [(s.path, s.content) for s in exactly] == [("migrate.py", "tables = ['a']\n")]


def test_what_cannot_be_reconstructed_is_named_in_the_drafts_warnings(tmp_path):
    """Turn 1 edited config.py without ever reading it whole: its content at turn 2's start is unknown."""
    log = _session(tmp_path, [
        [("user", "Turn debug off in config.py"),
         _call("e1", "Edit", file_path="/w/config.py", old_string="DEBUG = True", new_string="DEBUG = False"),
         ("result", ("e1", "The file has been updated", None)),
         ("assistant", [{"type": "text", "text": "Debug is off."}])],
        [("user", "Now write the release notes"),
         _call("w1", "Write", file_path="/w/NOTES.md", content="# 1.0\n"),
         ("result", ("w1", "File created successfully", None)),
         ("assistant", [{"type": "text", "text": "Notes written."}])]])
    res = _import(tmp_path, log, "--id", "notes")
    assert res.exit_code == 0, res.output
    assert ("warning: not seeded: config.py — changed by turn 1 (Edit) before the task, but its content then cannot "
            "be reconstructed: Edit changed a file whose earlier content is not in the transcript; add it to seed/ "
            "yourself\n") in res.stderr
    assert not (tmp_path / "cases" / "notes" / "seed").exists()


def test_a_file_the_task_overwrote_is_seeded_with_its_content_before(tmp_path):
    """Claude Code's Write of an existing file records `originalFile`: that is the file the task found."""
    log = _session(tmp_path, [[
        ("user", "Rewrite the README in one line"),
        _call("w1", "Write", file_path="/w/README.md", content="tiny\n"),
        ("result", ("w1", "The file /w/README.md has been updated", {"type": "update", "filePath": "/w/README.md",
                                                                     "originalFile": "# tiny-agent\nA tiny agent.\n"})),
        ("assistant", [{"type": "text", "text": "Done."}])]])
    t = load_transcript(log)
    assert [(s.path, s.content) for s in suggest_seeds(t)] == [("README.md", "# tiny-agent\nA tiny agent.\n")]


def test_a_heredoc_writes_and_sed_in_place_changes_a_file(tmp_path):
    """Shell commands: `cat > f <<'EOF'` is a write with its content; `sed -i` on a file never read is a file
    that existed, content unknown (named); `cat f` states a file whole."""
    log = _session(tmp_path, [[
        ("user", "Fix the version and add a changelog"),
        _call("b1", "Bash", command="cat setup.cfg"),
        ("result", ("b1", "[metadata]\nversion = 1.0\n", None)),
        _call("b2", "Bash", command="sed -i 's/1.0/1.1/' setup.cfg version.txt"),
        ("result", ("b2", "", None)),
        _call("b3", "Bash", command="cat > CHANGES.md <<'EOF'\n# 1.1\n- fixed\nEOF"),
        ("result", ("b3", "", None)),
        ("assistant", [{"type": "text", "text": "Version 1.1, changelog added."}])]])
    t = load_transcript(log)
    assert [(f.path, f.content) for f in t.files_written if f.content is not None] == [("CHANGES.md", "# 1.1\n- fixed\n")]
    assert [(s.path, s.content) for s in suggest_seeds(t)] == [
        ("setup.cfg", "[metadata]\nversion = 1.0\n"), ("version.txt", None)]


def test_a_codex_exec_stream_s_bash_lc_commands_read_and_write_files(tmp_path):
    """`codex exec --json` writes each command as one `bash -lc '…'` line (its session logs as a list): the
    command inside is what reads or writes, so `cat` states a file whole and a heredoc writes one."""
    def command(iid: str, line: str, output: str) -> str:
        return json.dumps({"type": "item.completed", "item": {"id": iid, "type": "command_execution", "command": line,
                                                               "aggregated_output": output, "exit_code": 0,
                                                               "status": "completed"}})
    log = tmp_path / "exec.jsonl"
    log.write_text("\n".join([
        json.dumps({"type": "thread.started", "thread_id": "t1"}),
        json.dumps({"type": "scarbook.task", "text": "Bump the version"}),
        command("c1", "bash -lc 'cat setup.cfg'", "[metadata]\nversion = 1.0\n"),
        command("c2", "bash -lc \"cat > CHANGES.md <<'EOF'\n# 1.1\nEOF\"", ""),
        command("c3", "bash -lc 'pytest -q'", "1 passed\n"),
        json.dumps({"type": "item.completed", "item": {"id": "m1", "type": "agent_message", "text": "Bumped."}}),
    ]) + "\n")
    t = load_transcript(log)
    assert t.format == "codex"
    assert [(f.path, f.content) for f in t.files_written] == [("CHANGES.md", "# 1.1\n")]
    assert [(s.path, s.content) for s in suggest_seeds(t)] == [("setup.cfg", "[metadata]\nversion = 1.0\n")]


def test_swe_agent_open_then_edit_seeds_the_file_as_opened():
    """SWE-agent runs: the file shown whole by `open` (numbered lines, a terminal footer, CRLF) before the
    edit is the seed; the edit replays onto it, so the edited file is a candidate too."""
    for name in ("function_calling_simple.traj", "sweagenttestrepo-1c2844.traj"):
        t = load_transcript(CORPUS / "swe-agent" / name)
        assert t.cwd == "/SWE-agent__test-repo"
        [seed] = suggest_seeds(t)
        assert (seed.path, seed.content) == ("tests/missing_colon.py", "#!/usr/bin/env python3\n\n\ndef division(a: "
                                             "float, b: float) -> float\n    return a/b\n\n\nif __name__ == "
                                             '"__main__":\n    print(division(123, 15))\n')
        [written] = t.files_written
        assert written.content is not None and "def division(a: float, b: float) -> float:\n" in written.content


def test_swe_agent_line_range_edits_replay_and_a_demonstration_is_not_the_task():
    t = load_transcript(CORPUS / "swe-agent" / "humanevalfix-python-0.traj")
    assert t.cwd == "/swe-bench__humanevalfix-python" and suggest_task(t) == ""
    [written] = t.files_written
    assert written.path == "main.py" and "                distance = abs(elem - elem2)\n" in (written.content or "")
    [seed] = suggest_seeds(t)
    assert "distance = elem - elem2" in (seed.content or "") and "abs(" not in (seed.content or "")


def test_a_read_result_without_a_line_gutter_is_the_file(tmp_path):
    """An SDK or an older Claude Code hands a Read back as the file itself, no `cat -n` gutter: the file was
    not seeded (its content was thought unknown)."""
    log = _session(tmp_path, [[
        ("user", "Say hello from main"),
        _call("r1", "Read", file_path="/w/src/main.py"),
        ("result", ("r1", "print('hello')", None)),
        _call("r2", "Read", file_path="/w/big.py"),
        ("result", ("r2", "x = 1\n... (file truncated: 4000 more lines)", None)),
        ("assistant", [{"type": "text", "text": "It prints hello."}])]])
    t = load_transcript(log)
    assert [(s.path, s.content) for s in suggest_seeds(t)] == [("src/main.py", "print('hello')"), ("big.py", None)]
