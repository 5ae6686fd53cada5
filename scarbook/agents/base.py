"""The agent interface: run a task in a workspace, report the final output."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from scarbook.agents.sandbox import Sandbox
    from scarbook.models import AgentResult


class Agent(Protocol):
    label: str

    @property
    def env_allow(self) -> Sequence[str]:
        """Variables passed through to it (and to the case's command checks) besides the base set."""

    def sandbox_for(self, network: bool | None) -> Sandbox | None:
        """The sandbox it runs a case in, with the case's network setting (None: not confined)."""

    def preflight(self) -> None:
        """Raise ScarbookError before any run if this agent cannot start at all."""

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        """Run once with `cwd` as working directory; write stderr to `log_dir/<stem>.stderr.log`.
        `network`: the case's say on the sandbox's network (None: the agent's default)."""
