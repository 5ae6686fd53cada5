"""The agent under test, typed: what scarbook.yaml's `agent:` says, read once per session.

Adding an agent type (say `claude-code`) means: a member of AgentType, its fields here (with
defaults, so the other types ignore them), and its row in registry.AGENT_KINDS (keys, capabilities,
builder). Everything is plain data, so a spec pickles to a remote worker and builds the same
agent there.

Program arguments: `{root}` in any argv element becomes the project root (the folder holding
scarbook.yaml), and an argument after the program that names an existing file relative to the
project root is made absolute, because the agent runs with the run's workspace as its working
directory: `argv: [python, agent.py, "{task}"]` runs the project's agent.py, not a file the
workspace does not have. Arguments holding `{task}`, options (`-x`) and absolute paths are kept
as written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

DEFAULT_MAX_OUTPUT = 1_000_000
ROOT = "{root}"
TASK = "{task}"


class AgentType(StrEnum):
    DEMO = "demo"
    COMMAND = "command"
    PYTHON = "python"
    CLAUDE_CODE = "claude-code"  # the Claude Code CLI, headless (agents/claude_code.py)
    CODEX = "codex"  # the OpenAI Codex CLI, headless (agents/codex.py)


@dataclass(frozen=True)
class AgentSpec:
    type: AgentType = AgentType.DEMO
    argv: tuple[str, ...] = ()  # command
    stdin: bool | None = None  # command: None = stdin when argv has no {task}
    env: tuple[str, ...] = ()  # command: variables passed through besides the base set
    max_output_bytes: int = DEFAULT_MAX_OUTPUT  # command
    transcript: bool = False  # command: the agent writes $SCARBOOK_TRANSCRIPT itself (trajectory checks may read it)
    function: str = ""  # python: module:function
    args: tuple[str, ...] = ()  # claude-code, codex: the user's extra CLI arguments (--model ...)
    seed: int | str | None = None  # demo
    profile: str | None = None  # demo
    delay: float | None = None  # demo: seconds per run, set by the caller (the TUI's make_app); None: $SCARBOOK_DEMO_DELAY
    options: Mapping[str, Any] = field(default_factory=dict)  # keys a newer type adds before it has a field

    @classmethod
    def from_config(cls, raw: Mapping[str, Any] | AgentSpec | None) -> AgentSpec:
        """From config.Config.agent (already validated by config.parse_agent)."""
        if isinstance(raw, AgentSpec):
            return raw
        raw = dict(raw or {"type": "demo"})
        kind = AgentType(raw.pop("type", "demo"))
        known = {name for name in cls.__dataclass_fields__ if name not in ("type", "options")}
        values = {k: raw.pop(k) for k in list(raw) if k in known}
        for key in ("argv", "env", "args"):
            if key in values:
                values[key] = tuple(values[key] or ())
        if values.get("max_output_bytes") is None:
            values.pop("max_output_bytes", None)
        return cls(type=kind, options=raw, **values)

    def resolved_argv(self, project_root: Path | None) -> list[str]:
        """argv with `{root}` substituted and project-relative file arguments made absolute."""
        if project_root is None:
            return list(self.argv)
        root = str(Path(project_root).absolute())
        out = [a.replace(ROOT, root) for a in self.argv]
        for i in range(1, len(out)):
            out[i] = _project_file(out[i], root)
        return out


def _project_file(arg: str, root: str) -> str:
    if not arg or TASK in arg or arg.startswith("-") or os.path.isabs(arg):
        return arg
    candidate = os.path.join(root, arg)
    return candidate if os.path.isfile(candidate) else arg
