"""`codex exec --json` streams without the preset's task line (found as a newcomer): Codex never writes the prompt
into the stream (codex-rs/exec/src/exec_events.rs has no user item), so the draft's task was a bare TODO and import
said nothing of why or how to give it. Now the reader says where the prompt is kept (Codex's session log of the
stream's thread), import takes `--task TEXT`, and the draft's TODO task carries the same words. A stream with the
newer event types (item.plan.delta, request_user_input, plan items) was refused as not codex; it is read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from scarbook.cases.io import load_case
from scarbook.cases.lint import lint_case
from scarbook.transcripts import load_transcript, suggest_task
from scarbook.transcripts.model import Message
from tests.helpers.paths import REPO, TRANSCRIPTS

LOG = TRANSCRIPTS / "codex_exec" / "no_prompt.jsonl"
THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53"
HINT = (f"codex exec --json does not log the prompt; Codex's session log of thread {THREAD} "
        f"(~/.codex/sessions/YYYY/MM/DD/rollout-*-{THREAD}.jsonl) holds it")


def scarbook(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not (root / "scarbook.yaml").exists():
        (root / "scarbook.yaml").write_text("agent: {type: demo}\n")
    return subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(root), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_the_stream_says_where_its_prompt_is_and_its_newer_events_are_read():
    t = load_transcript(LOG)
    assert (t.format, suggest_task(t), t.task_hint) == ("codex", "", HINT)
    assert [m.text for m in t.entries if isinstance(m, Message) and m.kind != "thinking"] == [
        "1. read README\n2. write tmp.txt", "Done: tmp.txt holds the first line."]
    assert t.warnings == []


def test_a_stream_with_the_presets_task_line_needs_no_hint(tmp_path):
    log = tmp_path / "run.jsonl"
    log.write_text('{"type": "scarbook.task", "text": "Write tmp.txt"}\n' + LOG.read_text())
    t = load_transcript(log)
    assert (suggest_task(t), t.task_hint) == ("Write tmp.txt", None)


def test_list_says_how_to_give_the_task(tmp_path):
    done = scarbook(tmp_path, "import", str(LOG), "--list")
    assert done.returncode == 0, done.stderr
    assert f"task: (none found)\nno prompt in the transcript ({HINT}): give the task with --task TEXT\n" in done.stdout
    done = scarbook(tmp_path, "import", str(LOG), "--list", "--task", "Put README's first line in tmp.txt")
    assert "task (--task): Put README's first line in tmp.txt\ncandidates:" in done.stdout


def test_import_without_a_task_says_why_in_the_draft_and_on_stderr(tmp_path):
    done = scarbook(tmp_path, "import", str(LOG), "--id", "cx", "--skip-judge")
    assert done.returncode == 0, done.stderr
    yaml_path = tmp_path / "cases" / "cx" / "case.yaml"
    assert (f"warning: no prompt in the transcript ({HINT}): the draft's task is a TODO: write it as task: in "
            f"{yaml_path}\n") in done.stderr
    data = yaml.safe_load(yaml_path.read_text())
    assert data["task"] == f"TODO: write the instruction the agent was given ({HINT})"
    hints = lint_case(load_case(yaml_path.parent))
    assert [h.message for h in hints if h.rule == "placeholder"][0].startswith("the task is still the import's TODO")


def test_import_with_task_drafts_it_and_its_title(tmp_path):
    done = scarbook(tmp_path, "import", str(LOG), "--id", "cx", "--skip-judge", "--task",
                    "Put the first line of README.md in tmp.txt")
    assert done.returncode == 0, done.stderr
    assert "no prompt in the transcript" not in done.stderr
    case = load_case(tmp_path / "cases" / "cx")
    assert (case.task, case.title) == ("Put the first line of README.md in tmp.txt",) * 2


def test_an_empty_task_is_refused_and_nothing_is_written(tmp_path):
    done = scarbook(tmp_path, "import", str(LOG), "--id", "cx", "--task", "  ")
    assert done.returncode == 2
    assert done.stderr == ("scarbook: --task is empty: give the instruction the agent was given, or leave --task out "
                           "to take the transcript's prompt\n")
    assert not (tmp_path / "cases" / "cx").exists()


TODO_ITEMS = ('{"type":"item.completed","item":{"id":"item_9","type":"todo_list","items":[{"text":"read README",'
              '"completed":true},{"text":"write tmp.txt","completed":false}]}}\n')


def test_the_to_do_list_is_a_candidate_beside_the_answer_never_the_default(tmp_path):
    """codex's `todo_list` item was read and dropped: a run that said "Done" with a step unchecked showed nothing of
    it. It is a candidate as Claude Code's plan is (--list, the draft's --artifact N), its last state, checked or
    not; the answer stays the default artifact (a to-do list is the agent's account of its work, not the work)."""
    log = tmp_path / "run.jsonl"
    lines = LOG.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-2]) + TODO_ITEMS + "".join(lines[-2:]))
    listed = scarbook(tmp_path, "import", str(log), "--list")
    assert listed.returncode == 0, listed.stderr
    assert ("candidates:\n"
            "  1  answer       final answer  [35 B]\n"
            "     Done: tmp.txt holds the first line.\n"
            "  2  to-do list   to-do list (1 of 1 done)  [17 B]\n"
            "     [x] write tmp.txt\n"
            "  3  to-do list   to-do list (1 of 2 done)  [33 B]\n"
            "     [x] read README [ ] write tmp.txt\n") in listed.stdout
    done = scarbook(tmp_path, "import", str(log), "--id", "said-done", "--skip-judge", "--task", "Write tmp.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cases" / "said-done" / "scar" / "artifact.txt").read_text() == \
        "Done: tmp.txt holds the first line."
    done = scarbook(tmp_path, "import", str(log), "--id", "todo", "--artifact", "3", "--skip-judge", "--task", "W")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cases" / "todo" / "scar" / "artifact.txt").read_text() == "[x] read README\n[ ] write tmp.txt"


def test_a_stream_whose_agent_never_answered_names_its_to_do_list_among_the_rest(tmp_path):
    log = tmp_path / "run.jsonl"
    log.write_text("".join(LOG.read_text().splitlines(keepends=True)[:-2]) + TODO_ITEMS)
    done = scarbook(tmp_path, "import", str(log), "--id", "cx", "--task", "Write tmp.txt")
    assert done.returncode == 2
    assert done.stderr == (f"scarbook: {log}: the agent handed in nothing to file: its last words (\"1. read README 2. "
                           "write tmp.txt\") come before a tool call the log ends with, it wrote no file, and the rest are 2 tool results and 2 to-do lists; if one of them is the failure, "
                           "name it with --artifact N (`--list` numbers them), or import a log that holds the agent's "
                           "answer\n")
