"""Agent adapters: `command`, `python`, the offline `demo` agent, and the `claude-code` / `codex` CLI presets
(one row per type, its settings and what it can do: spec.py).

May use: transcripts, proc, fs, models, errors, text. Never checks, judge or above."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from scarbook.agents.base import Agent
from scarbook.agents.spec import AGENT_KINDS, AgentSpec, keeps_transcript, project_keeps_transcript
from scarbook.models.words import Isolation

if TYPE_CHECKING:
    from scarbook.agents.command import CommandAgent
    from scarbook.agents.python import PythonAgent

__all__ = ["AGENT_KINDS", "Agent", "AgentSpec", "CommandAgent", "PythonAgent", "keeps_transcript",
           "make_agent", "project_keeps_transcript"]


def make_agent(spec: AgentSpec | Mapping[str, Any], project_root: Path | None = None, *,
               isolation: str = "none", network: bool = False, private: tuple[str, ...] = (),
               slots: bool = False) -> Agent:
    """The agent `spec` describes. isolation "sandbox" puts a program agent in bubblewrap, or raises
    SandboxUnavailable (a ScarbookError) naming why it cannot here; it never runs without. `private`:
    folders the sandbox hides (the project's workspaces/: every run's but the run's own). `slots`: the sandbox's
    runs go through sandbox slots (agents/slots.py)."""
    spec = AgentSpec.from_config(spec)
    agent = spec.build(project_root)
    if isolation == Isolation.SANDBOX:
        from scarbook.agents.sandbox import SandboxUnavailable, require_sandbox

        if not spec.SANDBOX:
            raise SandboxUnavailable(
                "isolation: sandbox cannot hold a python agent: it runs inside scarbook's own process — "
                "run it as a command agent (agent: {type: command, argv: [python, -m, my_agent]}) "
                "or set isolation: none")
        sandbox = require_sandbox(project_root or Path.cwd(), network)
        command = cast("CommandAgent", agent)
        command.sandbox = replace(sandbox, private=tuple(os.path.realpath(p) for p in private))
        if slots and command.sandbox.private:
            from scarbook.agents.slots import AgentSlots

            command.slots = AgentSlots()
    return agent


# The adapters load with the first agent built (a row's build imports its own): scarbook.yaml's agent:
# is checked (config.py) without them.
_HOME = {"CommandAgent": "command", "PythonAgent": "python"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
