"""The agent interface: run a task in a workspace, report the final output."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from scarbook.models import AgentResult


class Agent(Protocol):
    label: str

    def preflight(self) -> None:
        """Raise ScarbookError before any run if this agent cannot start at all."""

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        """Run once with `cwd` as working directory; write stderr to `log_dir/<stem>.stderr.log`.
        `network`: the case's say on the sandbox's network (None: the agent's default)."""
