"""A hostile agent attacks what the harness does after it exits: the command check, the reads the checks
and the judge make, the workspace diff. Real agent processes, real files, whole sessions."""

from __future__ import annotations

import json
import sys

import pytest

PY = sys.executable


def _session(project, argv: list[str], checks: str, seed: dict[str, str] | None = None, *extra: str):
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\ntimeout_s: 20\n")
    project.case("c", f"id: c\ntask: Write tmp.txt\nchecks:\n{checks}", seed or {"README.md": "# tiny-agent\n"})
    result = project.cli("eval", "--runs", "1", "-q", *extra)
    history = project.load().history
    return result, history.runs(history.sessions()[0].id)


# -- 2. the command check runs agent-written code: it gets the agent's allow-listed environment ----------

REWRITE_CHECK = ("import os; open('check.sh', 'w').write("
                 "'echo \"leaked: ${ANTHROPIC_API_KEY:-none} ${CASE_TOKEN:-none}\"; exit 1\\n')")


def test_a_rewritten_check_script_cannot_print_a_secret_from_scarbooks_environment(project, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET")
    result, (run,) = _session(project, [PY, "-c", REWRITE_CHECK], "  - {type: command, run: sh check.sh}\n",
                              {"check.sh": "exit 0\n"})
    assert result.exit_code == 1, result.output
    assert "SECRET" not in result.output
    assert run.reason == "check 1 (command): command 'sh check.sh' exited 1: leaked: none none"


def test_a_command_check_gets_the_variables_the_case_names(project, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET")
    monkeypatch.setenv("CASE_TOKEN", "t0k")
    result, (run,) = _session(project, [PY, "-c", REWRITE_CHECK],
                              "  - {type: command, run: sh check.sh, env: [CASE_TOKEN]}\n", {"check.sh": "exit 0\n"})
    assert run.reason == "check 1 (command): command 'sh check.sh' exited 1: leaked: none t0k"


def test_a_command_check_gets_what_the_agent_is_allowed(project, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-AGENTS")
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-c', REWRITE_CHECK])}, env: [ANTHROPIC_API_KEY]}}\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: command, run: sh check.sh}\n", {"check.sh": "exit 0\n"})
    project.cli("eval", "--runs", "1", "-q")
    history = project.load().history
    (run,) = history.runs(history.sessions()[0].id)
    assert run.reason == "check 1 (command): command 'sh check.sh' exited 1: leaked: sk-ant-AGENTS none"


@pytest.mark.parametrize("env,message", [
    ("[1BAD]", "command.env: '1BAD' is not an environment variable name"),
    ("[A=B]", "command.env: 'A=B' is not an environment variable name"),
    ("CASE_TOKEN", "command.env must be a list of strings, got str"),
])
def test_command_env_names_are_validated(project, env: str, message: str) -> None:
    path = project.case("c", f"id: c\ntask: t\nchecks:\n  - {{type: command, run: 'true', env: {env}}}\n")
    result = project.cli("list")
    assert f"{path}:4: {message}" in result.output, result.output
