"""An imported draft's TODO task and TODO rubric item (cases/placeholders.py), found as a newcomer importing a
plain text log: `scarbook lint` said nothing of them, and `scarbook eval` sent the TODO to the agent and had the
judge grade the TODO item, without a word. Lint names each one, and a session says so before its runs. Real
subprocesses, the bundled demo agent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCARBOOK = str(Path(sys.executable).parent / "scarbook")


def scarbook(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCARBOOK, "-C", str(root), *args], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(root)})


def test_lint_and_eval_name_the_imports_todo_task_and_item(tmp_path):
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\nisolation: none\n")
    (tmp_path / "paste.txt").write_text("$ agent fix-tests\nDone: every test passes now.\n")
    assert scarbook(tmp_path, "import", str(tmp_path / "paste.txt"), "--id", "pasted").returncode == 0
    yaml_path = tmp_path / "cases" / "pasted" / "case.yaml"
    lint = scarbook(tmp_path, "lint", "pasted")
    assert lint.returncode == 0, lint.stderr
    assert lint.stdout.splitlines()[:4] == [
        "pasted [placeholder] the task is still the import's TODO: each run would send it to the agent as written",
        f"    -> write the instruction the agent was given as task: in {yaml_path}",
        "pasted check 1 item 1 [placeholder] this item is still the import's TODO: the judge would grade it as "
        "written, which says nothing of the incident, and it can certify nothing",
        f"    -> write it in {yaml_path}, or draft the rubric from the incident with `scarbook rubric draft pasted`"]
    run = scarbook(tmp_path, "eval", "pasted", "--runs", "1", "--skip-judge")
    assert run.returncode == 3, run.stderr  # unjudged: no verdict
    assert (f"warning: pasted: its task is still the import's TODO: the agent is sent it as written — write it in "
            f"{yaml_path}\n") in run.stderr
    yaml_path.write_text(yaml_path.read_text().replace("'TODO: write the instruction the agent was given'",
                                                       "Fix the failing tests"))
    assert "import's TODO" not in scarbook(tmp_path, "eval", "pasted", "--runs", "1", "--skip-judge").stderr
