"""Agent adapters: `command`, `python`, the offline `demo` agent, and the `claude-code` / `codex` CLI presets.

May use: transcripts, proc, fs, models, errors, text. Never checks, judge or above."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scarbook.agents.base import Agent
from scarbook.agents.command import CommandAgent
from scarbook.agents.python import PythonAgent
from scarbook.agents.spec import AgentSpec, AgentType

__all__ = ["Agent", "AgentSpec", "AgentType", "CommandAgent", "PythonAgent", "make_agent"]


def make_agent(spec: AgentSpec | Mapping[str, Any], project_root: Path | None = None, *,
               isolation: str = "none", network: bool = False) -> Agent:
    """The agent `spec` describes. isolation "sandbox" puts a program agent in bubblewrap, or raises
    SandboxUnavailable (a ScarbookError) naming why it cannot here; it never runs without."""
    agent = _make(AgentSpec.from_config(spec), project_root)
    if isolation == "sandbox":
        from scarbook.agents.sandbox import SandboxUnavailable, require_sandbox

        if not isinstance(agent, CommandAgent):
            raise SandboxUnavailable(
                "isolation: sandbox cannot hold a python agent: it runs inside scarbook's own process — "
                "run it as a command agent (agent: {type: command, argv: [python, -m, my_agent]}) "
                "or set isolation: none")
        agent.sandbox = require_sandbox(project_root or Path.cwd(), network)
    return agent


def _make(spec: AgentSpec, project_root: Path | None) -> Agent:
    if spec.type is AgentType.COMMAND:
        return CommandAgent(spec.resolved_argv(project_root), stdin=spec.stdin, env_allow=list(spec.env),
                            max_output_bytes=spec.max_output_bytes, project_root=project_root,
                            label="command: " + " ".join(spec.argv))
    if spec.type is AgentType.PYTHON:
        return PythonAgent(spec.function, project_root)
    if spec.type in (AgentType.CLAUDE_CODE, AgentType.CODEX):
        from scarbook.agents.claude_code import ClaudeCodeAgent
        from scarbook.agents.codex import CodexAgent

        preset = ClaudeCodeAgent if spec.type is AgentType.CLAUDE_CODE else CodexAgent
        return preset(list(spec.args), env=spec.env, max_output_bytes=spec.max_output_bytes, project_root=project_root)
    # The demo agent is a real subprocess too, so the quickstart exercises the same path as a real agent.
    argv = [sys.executable, "-m", "scarbook.agents.demo"]
    if spec.seed is not None:
        argv += ["--seed", str(spec.seed)]
    if spec.profile:
        argv += ["--profile", str(spec.profile)]
    label = "demo" + (f" ({spec.profile})" if spec.profile else "")
    return CommandAgent(argv, stdin=True, env_allow=["SCARBOOK_DEMO_DELAY"], label=label)
