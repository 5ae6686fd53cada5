"""Agent adapters: `command`, `python`, and the offline `demo` agent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from scarbook.agents.base import Agent
from scarbook.agents.command import CommandAgent
from scarbook.agents.python import PythonAgent

__all__ = ["Agent", "CommandAgent", "PythonAgent", "make_agent"]


def make_agent(spec: dict[str, Any], project_root: Path | None = None) -> Agent:
    kind = spec.get("type", "demo")
    if kind == "command":
        return CommandAgent(spec["argv"], stdin=spec.get("stdin"), env_allow=spec.get("env"),
                            max_output_bytes=spec.get("max_output_bytes", 1_000_000), project_root=project_root)
    if kind == "python":
        return PythonAgent(spec["function"], project_root)
    # The demo agent is a real subprocess too, so the quickstart exercises the same path as a real agent.
    argv = [sys.executable, "-m", "scarbook.demo_agent"]
    if spec.get("seed") is not None:
        argv += ["--seed", str(spec["seed"])]
    if spec.get("profile"):
        argv += ["--profile", str(spec["profile"])]
    label = "demo" + (f" ({spec['profile']})" if spec.get("profile") else "")
    return CommandAgent(argv, stdin=True, env_allow=["SCARBOOK_DEMO_DELAY"], label=label)
