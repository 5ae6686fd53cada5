"""An agent type is one row (issue 32.3): a type declared in one place — its settings with their
defaults and words, its capabilities, its build — is loaded from scarbook.yaml, checked with the one
translator's messages, listed among the types, and run by `scarbook eval`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, ClassVar

import pytest
from click.testing import CliRunner
from msgspec import Meta

from scarbook.agents import AGENT_KINDS, AgentSpec, make_agent
from scarbook.agents.command import CommandAgent
from scarbook.cli import main
from scarbook.config import load_config
from scarbook.errors import ConfigError


class EchoSpec(AgentSpec, tag="echo", frozen=True):
    """Says one word into answer.txt: the whole of a new agent type."""

    KEEPS_TRANSCRIPT: ClassVar[bool] = False

    word: Annotated[str, Meta(min_length=1, extra={"must": "must be a word, got {value!r}", "fix": "write word: hello"})] \
        = "hello"
    times: Annotated[int, Meta(ge=1, extra={"must": "must be a whole number of at least 1, got {value!r}",
                                            "fix": "write times: 2"})] = 1

    def build(self, project_root: Path | None) -> CommandAgent:
        script = f"open('answer.txt', 'w').write(' '.join([{self.word!r}] * {self.times}))"
        return CommandAgent([sys.executable, "-c", script], stdin=True, label=f"echo: {self.word}")


@pytest.fixture
def echo_type(monkeypatch) -> None:
    monkeypatch.setitem(AGENT_KINDS, "echo", EchoSpec)  # the one place the new type is registered


def test_a_new_type_loads_with_its_defaults_and_builds(echo_type, tmp_path) -> None:
    path = tmp_path / "scarbook.yaml"
    path.write_text("agent:\n  type: echo\n  times: 3\n")
    cfg = load_config(path)
    assert cfg.agent == {"type": "echo", "times": 3}  # as written: what the session's fingerprint hashes
    spec = AgentSpec.from_config(cfg.agent)
    assert spec == EchoSpec(word="hello", times=3)  # the default from the declaration
    agent = make_agent(cfg.agent, tmp_path)
    assert agent.label == "echo: hello" and "['hello'] * 3" in agent.argv[-1]


@pytest.mark.parametrize("text, message", [
    ("agent:\n  type: echo\n  colour: red\n",
     "3: unknown key 'colour' for an echo agent — an echo agent takes: type, word, times"),
    ("agent:\n  type: echo\n  word: ''\n", "3: agent.word must be a word, got '' — write word: hello"),
    ("agent: {type: echo, times: 0}\n", "1: agent.times must be a whole number of at least 1, got 0 — write times: 2"),
    ("agent: {type: shell}\n", "1: agent.type must be one of demo, command, python, claude-code, codex, echo, "
                               "got 'shell' — write e.g. agent: {type: command, argv: [./agent, \"{task}\"]}"),
])
def test_a_new_types_mistakes_are_said_by_the_one_translator(echo_type, tmp_path, text, message) -> None:
    path = tmp_path / "scarbook.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert exc.value.message == f"{path}:{message}"


def test_scarbook_eval_runs_a_new_type(echo_type, tmp_path) -> None:
    (tmp_path / "scarbook.yaml").write_text("agent: {type: echo, word: scar, times: 2}\nisolation: none\n")
    case = tmp_path / "cases" / "says-scar"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text("id: says-scar\ntask: say scar twice\nchecks:\n"
                                    "  - {type: contains, path: answer.txt, text: scar scar}\n")
    result = CliRunner().invoke(main, ["-C", str(tmp_path), "eval", "--runs", "2", "--gate", "point", "-q"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "says-scar" in result.stdout and "2 pass, 0 fail, 0 error" in result.stdout


def test_without_its_row_the_type_is_unknown(tmp_path) -> None:
    path = tmp_path / "scarbook.yaml"
    path.write_text("agent: {type: echo}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert "agent.type must be one of demo, command, python, claude-code, codex, got 'echo'" in exc.value.message


@pytest.mark.parametrize("text, message", [
    # the demo's delay is the program's to set (the TUI), never scarbook.yaml's
    ("agent: {type: demo, delay: 1}\n", "1: unknown key 'delay' for a demo agent — a demo agent takes: type, seed, "
                                        "profile, draws"),
    # a setting a type needs is said as that setting's mistake
    ("agent: {type: command}\n", "1: agent.argv must be a non-empty list of strings — write argv: "
                                 "[python, agent.py, \"{task}\"]"),
    ("agent:\n  type: python\n", "2: agent.function must be 'module:function' — write function: my_agent.main:run"),
    ("agent: {type: command, argv: []}\n", "1: agent.argv must be a non-empty list of strings — write argv: "
                                           "[python, agent.py, \"{task}\"]"),
    ("agent: {type: command, argv: [a], stdin: maybe}\n", "1: agent.stdin must be true or false, got 'maybe' — "
                                                          "write stdin: true"),
    ("agent: 7\n", "1: agent.type must be one of demo, command, python, claude-code, codex, got 7 — write e.g. "
                   "agent: {type: command, argv: [./agent, \"{task}\"]}"),
])
def test_the_built_in_rows_words(tmp_path, text, message) -> None:
    path = tmp_path / "scarbook.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert exc.value.message == f"{path}:{message}"


def test_a_string_argv_is_split_as_a_shell_would() -> None:
    cfg_agent = {"type": "command", "argv": "python 'my agent.py' {task}"}
    from scarbook.agents.spec import agent_settings

    assert agent_settings(cfg_agent, Path("scarbook.yaml"), 1) == {
        "type": "command", "argv": ["python", "my agent.py", "{task}"], "env": []}
