"""A draft's title is cut at a word, with an ellipsis (found as a user): a title drafted from a long task was its
first 80 characters, cut mid-word ("...and write it to tmp.t"), and a run's draft's title its first 120."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scarbook.cases.drafts import draft_from_run
from scarbook.cases.io import load_case
from scarbook.project import Project
from tests.helpers.paths import REPO

LONG = ("Extract the first line of README.md and write it to tmp.txt, then report exactly what was written there")


def _import_with_task(root: Path, task: str) -> str:
    (root / "scarbook.yaml").write_text("agent: {type: demo}\n")
    log = root / "run.jsonl"
    log.write_text(json.dumps({"type": "scarbook.task", "text": task}) + "\n"
                   + json.dumps({"type": "item.completed", "item": {"id": "1", "type": "agent_message",
                                                                       "text": "done"}}) + "\n")
    done = subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(root), "import", str(log),
                           "--id", "t", "--skip-judge"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return load_case(root / "cases" / "t").title


@pytest.mark.parametrize(("task", "title"), [
    (LONG, "Extract the first line of README.md and write it to tmp.txt, then report…"),
    ("\n  Fix the parser  \nand more", "Fix the parser"),
    ("x" * 100, "x" * 79 + "…"),  # one word longer than a title: cut where it must be
    ("short task", "short task"),
])
def test_an_imported_drafts_title_is_the_tasks_first_line_cut_at_a_word(tmp_path, task, title):
    assert _import_with_task(tmp_path, task) == title
    assert len(title) <= 80


def test_a_runs_drafts_title_is_cut_at_a_word(project) -> None:
    cid = "c-" + "long-case-name-" * 6 + "end"
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', 'pass'])}}}\n"
                   "isolation: none\nruns: 1\n")
    project.case(cid, f"id: {cid}\ntask: t\nchecks: [{{type: file_exists, path: tmp.txt}}]\n")
    assert project.cli("eval", "-q").exit_code == 1
    folders = Project.at(project.root)
    (run,) = folders.history.runs(folders.history.sessions()[0].id)
    full = f"draft from {cid} run 1: {run.reason}"
    assert len(full) > 120
    title = draft_from_run(folders, load_case(project.cases_dir / cid), run).case.title
    assert title.endswith("…") and len(title) <= 120
    assert full.startswith(title[:-1]) and full[len(title) - 1] == " "  # the cut falls before a word
