"""What a check sees: the workspace after the agent ran, its final output, and the diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from scarbook.models import Case, Check, CheckResult, WorkspaceDiff


class CheckGrader(Protocol):
    """What an llm_judge check asks of the judge (scarbook.judge.Grader is the whole protocol)."""

    async def grade(self, check: Check, ctx: CheckContext) -> CheckResult: ...


@dataclass
class CheckContext:
    case: Case
    workspace: Path
    output: str
    diff: WorkspaceDiff = field(default_factory=WorkspaceDiff)
    judge: CheckGrader | None = None  # None when judging is skipped
    command_timeout_s: float = 60.0
    env_allow: tuple[str, ...] = ()  # the agent's allow-listed variables; a command check gets them too
    sandbox: Any = None  # the agent's scarbook.agents.sandbox.Sandbox: a command check runs in it too
