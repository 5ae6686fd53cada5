"""Issue 33 (20): `python3` on PATH is a pyenv shim under the home folder. In the sandbox (home hidden)
the shim starts and cannot run pyenv: exit 127, blamed on the agent. A stand-in pyenv here, laid out
as the real one (`<root>/shims/python3` execs `<root>/libexec/pyenv exec python3`; `pyenv which`
prints the real program): the session resolves the shim before the first run and the run passes; a
shim `which` cannot resolve, or a script whose #! line finds one, is a preflight error naming the fix;
and a program that starts but cannot exec what it needs is never the agent's fault."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers.recorder_upstream import sandbox_or_skip

SHIM = """#!/usr/bin/env bash
set -e
program="${{0##*/}}"
export PYENV_ROOT="{root}"
exec "{root}/libexec/pyenv" exec "$program" "$@"
"""

PYENV = """#!/usr/bin/env bash
cmd="$1"; shift
case "$cmd" in
  exec) program="$1"; shift; exec "$PYENV_ROOT/versions/3.11.7/bin/$program" "$@" ;;
  which) {which} ;;
esac
"""

CASE = "id: c\ntask: t\nchecks: [{type: contains, path: tmp.txt, text: ok}]\n"


def fake_pyenv(home: Path, monkeypatch, *, which_works: bool = True) -> Path:
    """~/.pyenv with a python3 shim first on PATH (HOME is `home`, which the sandbox hides)."""
    root = home / ".pyenv"
    for sub in ("shims", "libexec", "versions/3.11.7/bin"):
        (root / sub).mkdir(parents=True)
    (root / "versions/3.11.7/bin/python3").symlink_to(sys.executable)
    which = 'echo "$PYENV_ROOT/versions/3.11.7/bin/$1"' if which_works else \
        'echo "pyenv: python3: command not found" >&2; exit 127'
    for path, text in ((root / "shims/python3", SHIM.format(root=root)), (root / "libexec/pyenv", PYENV.format(which=which))):
        path.write_text(text)
        path.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{root / 'shims'}{os.pathsep}{os.environ['PATH']}")
    return root


def eval_json(project) -> tuple[object, list[dict]]:
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out))
    return result, json.loads(out.read_text())["runs"] if out.exists() else []


def test_a_pyenv_shim_is_resolved_before_the_sandboxed_run(project, tmp_path, monkeypatch):
    sandbox_or_skip(project.root)
    fake_pyenv(tmp_path / "home", monkeypatch)
    (project.root / "agent.py").write_text("open('tmp.txt', 'w').write('ok')\n")
    project.config("agent: {type: command, argv: [python3, agent.py]}\nruns: 1\nisolation: sandbox\nretry_infra: 0\n")
    project.case("c", CASE)
    result, runs = eval_json(project)
    assert [r["status"] for r in runs] == ["pass"], runs
    assert result.exit_code == 0, result.output


def test_a_shim_that_cannot_be_resolved_is_a_preflight_error_naming_the_fix(project, tmp_path, monkeypatch):
    sandbox_or_skip(project.root)
    root = fake_pyenv(tmp_path / "home", monkeypatch, which_works=False)
    project.config("agent: {type: command, argv: [python3, agent.py]}\nruns: 1\nisolation: sandbox\n")
    project.case("c", CASE)
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert (f"agent.argv[0] 'python3' is {root}/shims/python3, a pyenv shim: in the sandbox your home folder is "
            "hidden, so it cannot start there, and `pyenv which python3` did not name a program (pyenv: python3: "
            "command not found) — write the program it leads to in agent.argv (`pyenv which python3` prints it), "
            "or set isolation: none") in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.output


def test_a_script_whose_env_line_finds_a_shim_is_a_preflight_error(project, tmp_path, monkeypatch):
    sandbox_or_skip(project.root)
    root = fake_pyenv(tmp_path / "home", monkeypatch)
    agent = project.root / "agent.py"
    agent.write_text("#!/usr/bin/env python3\nopen('tmp.txt', 'w').write('ok')\n")
    agent.chmod(0o755)
    project.config(f"agent: {{type: command, argv: [{json.dumps(str(agent))}]}}\nruns: 1\nisolation: sandbox\n")
    project.case("c", CASE)
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert (f"{agent} starts with `#!/usr/bin/env python3`, and python3 on PATH is {root}/shims/python3, a pyenv "
            "shim: in the sandbox your home folder is hidden, so it cannot start there — put the real interpreter "
            "first in agent.argv (`pyenv which python3` prints it), then the script, or set isolation: none") \
        in result.stderr, result.stderr


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_program_that_cannot_exec_what_it_runs_is_not_the_agents_fault(project, isolation):
    """The agent's program starts and execs something that is not there (exit 127, nothing done)."""
    if isolation == "sandbox":
        sandbox_or_skip(project.root)
    agent = project.root / "agent.sh"
    agent.write_text("#!/bin/sh\nexec /nonexistent/bin/python3 \"$@\"\n")
    agent.chmod(0o755)
    project.config(f"agent: {{type: command, argv: [{json.dumps(str(agent))}]}}\nruns: 1\nisolation: {isolation}\n"
                   "retry_infra: 0\n")
    project.case("c", CASE)
    result, (run,) = eval_json(project)
    assert run["exit_code"] == 127
    assert (run["cause"]["kind"], run["cause"]["rule"]) == ("infra", "agent-could-not-exec"), run["cause"]
    assert run["cause"]["evidence"].startswith("exit code 127 with nothing done; stderr: ")
    assert "/nonexistent/bin/python3" in run["cause"]["evidence"]
    assert result.exit_code == 3, result.output
