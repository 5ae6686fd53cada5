"""Every agent type scarbook can run, in one table: its scarbook.yaml keys, what it can do, and how
it is built. Adding an agent type is one row here (plus a member of AgentType and, for new keys,
fields in AgentSpec); config.py reads its AGENT_TYPES and AGENT_KEYS from this table.

Capabilities are declared, not probed:
  transcript  scarbook keeps a transcript of every run without the agent's help (the demo agent
              writes one; the CLI presets' event stream is one). Other agents may still write
              $SCARBOOK_TRANSCRIPT themselves; a command agent that always does says `transcript: true`.
              `keeps_transcript` is the one question the session's preflight asks (trajectory checks).
  usage       token usage (and cost, where the CLI says it) is recorded for every run likewise.
  sandbox     it is a program, so `isolation: sandbox` can run it in bubblewrap; an in-process
              agent (python) cannot be confined.
  network     it cannot work offline (a CLI preset calls its model's API): in the sandbox it needs
              `network: true`, else preflight refuses the session instead of failing every run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scarbook.agents.base import Agent
from scarbook.agents.command import CommandAgent
from scarbook.agents.python import PythonAgent
from scarbook.agents.spec import AgentSpec, AgentType


@dataclass(frozen=True)
class AgentKind:
    type: AgentType
    keys: tuple[str, ...]  # what scarbook.yaml's `agent:` may hold for this type (type included)
    build: Callable[[AgentSpec, Path | None], Agent]
    transcript: bool = False
    usage: bool = False
    sandbox: bool = True
    network: bool = False


def _command(spec: AgentSpec, project_root: Path | None) -> Agent:
    return CommandAgent(spec.resolved_argv(project_root), stdin=spec.stdin, env_allow=list(spec.env),
                        max_output_bytes=spec.max_output_bytes, project_root=project_root,
                        label="command: " + " ".join(spec.argv))


def _python(spec: AgentSpec, project_root: Path | None) -> Agent:
    return PythonAgent(spec.function, project_root)


def _claude_code(spec: AgentSpec, project_root: Path | None) -> Agent:
    from scarbook.agents.claude_code import ClaudeCodeAgent  # its module is loaded only when used

    return ClaudeCodeAgent(list(spec.args), env=spec.env, max_output_bytes=spec.max_output_bytes,
                           project_root=project_root)


def _codex(spec: AgentSpec, project_root: Path | None) -> Agent:
    from scarbook.agents.codex import CodexAgent  # its module is loaded only when used

    return CodexAgent(list(spec.args), env=spec.env, max_output_bytes=spec.max_output_bytes, project_root=project_root)


def _demo(spec: AgentSpec, project_root: Path | None) -> Agent:
    # The demo agent is a real subprocess too, so the quickstart exercises the same path as a real agent.
    # It needs the standard library only: run as a file, isolated and without site-packages (-I -S), it
    # starts in a quarter of the time `-m scarbook.agents.demo` takes (that imports scarbook.agents first).
    argv = [sys.executable, "-I", "-S", str(Path(__file__).with_name("demo.py"))]
    if spec.seed is not None:
        argv += ["--seed", str(spec.seed)]
    if spec.profile:
        argv += ["--profile", str(spec.profile)]
    if spec.delay is not None:
        argv += ["--delay", str(spec.delay)]
    if spec.options.get("draws"):
        argv += ["--draws", str(spec.options["draws"])]
    label = "demo" + (f" ({spec.profile})" if spec.profile else "")
    return CommandAgent(argv, stdin=True, env_allow=["SCARBOOK_DEMO_DELAY", "SCARBOOK_DEMO_DRAWS"], label=label)


_CLI_KEYS = ("type", "args", "env", "max_output_bytes")

AGENT_KINDS: dict[AgentType, AgentKind] = {k.type: k for k in (
    AgentKind(AgentType.DEMO, ("type", "seed", "profile", "draws"), _demo, transcript=True, usage=True),
    AgentKind(AgentType.COMMAND, ("type", "argv", "stdin", "env", "max_output_bytes", "transcript"), _command),
    AgentKind(AgentType.PYTHON, ("type", "function"), _python, sandbox=False),
    AgentKind(AgentType.CLAUDE_CODE, _CLI_KEYS, _claude_code, transcript=True, usage=True, network=True),
    AgentKind(AgentType.CODEX, _CLI_KEYS, _codex, transcript=True, usage=True, network=True),
)}


def agent_kind(spec: AgentSpec) -> AgentKind:
    return AGENT_KINDS[spec.type]


def keeps_transcript(spec: AgentSpec, *, recorded: bool = False) -> bool:
    """Whether every run of this agent leaves a transcript the trajectory checks can read: the session
    records its model calls (`record:`: the recorder writes one for every run), its type keeps one
    (demo, claude-code, codex), or a command agent says it writes $SCARBOOK_TRANSCRIPT (`transcript:
    true`). The session refuses trajectory checks before the first run otherwise."""
    return recorded or agent_kind(spec).transcript or spec.transcript


def project_keeps_transcript(agent: object, record: object) -> bool:
    """keeps_transcript for scarbook.yaml's `agent:` and `record:` as config.Config holds them (lint and the
    editor ask it; an agent type this version cannot build is the session's error to say: True here)."""
    try:
        spec = AgentSpec.from_config(agent)  # type: ignore[arg-type]
    except ValueError:
        return True
    return keeps_transcript(spec, recorded=record is not None)
