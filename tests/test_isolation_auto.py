"""`isolation: auto` (issue 25, 1): the sandbox where bubblewrap starts here, checked once before the
runs; else the session runs unconfined and one line says what the agent can then reach."""

from __future__ import annotations

import json
import sys

import pytest

from scarbook.agents.sandbox import require_sandbox
from scarbook.errors import ScarbookError

WRITE_OUTSIDE = "import sys; open(sys.argv[1], 'w').write('out'); open('tmp.txt', 'w').write('x')"
REACH = ("the agent can read, write and delete anything your user can and reach the network (README: Threat "
         "model)")


def _setup(project, tmp_path):
    outside = tmp_path / "outside.txt"
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', WRITE_OUTSIDE, str(outside)])}}}\n"
                   "isolation: auto\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    return outside


def test_auto_sandboxes_where_bubblewrap_starts(project, tmp_path) -> None:
    try:
        require_sandbox(project.root)
    except ScarbookError as exc:
        pytest.skip(f"bubblewrap cannot start here: {exc.message}")
    outside = _setup(project, tmp_path)
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 0, result.output
    assert not outside.exists()  # /tmp is private in the sandbox: the write went nowhere
    assert "unconfined" not in result.stderr


def test_auto_without_bubblewrap_runs_unconfined_and_says_so_once(project, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SCARBOOK_BWRAP", str(tmp_path / "no-bwrap"))
    outside = _setup(project, tmp_path)
    result = project.cli("eval", "--runs", "2", "-q")
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "out"
    assert result.stderr.count("isolation: auto") == 1
    assert (f"warning: isolation: auto runs this session unconfined (SCARBOOK_BWRAP={tmp_path / 'no-bwrap'} is not "
            f"an executable file): {REACH}") in result.stderr


def test_auto_runs_an_in_process_agent_unconfined_and_says_why(project) -> None:
    (project.root / "my_agent.py").write_text("def run(task, cwd):\n    return 'x'\n")
    project.config("agent: {type: python, function: my_agent:run}\nisolation: auto\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 0, result.output
    assert ("warning: isolation: auto runs this session unconfined (cannot hold a python agent: it runs inside "
            f"scarbook's own process): {REACH}") in result.stderr, result.stderr
