"""What a check sees: the workspace after the agent ran, its final output, and the diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.models import Case, WorkspaceDiff


@dataclass
class CheckContext:
    case: Case
    workspace: Path
    output: str
    diff: WorkspaceDiff = field(default_factory=WorkspaceDiff)
    judge: Any = None  # scarbook.judge.Judge, or None when judging is skipped
    command_timeout_s: float = 60.0
    env_allow: tuple[str, ...] = ()  # the agent's allow-listed variables; a command check gets them too
    sandbox: Any = None  # the agent's scarbook.agents.sandbox.Sandbox: a command check runs in it too
