"""`agent: {type: claude-code}`: Anthropic's Claude Code CLI, headless.

Runs `claude -p TASK --output-format stream-json --verbose [args...]` in the run's workspace. The
stream (one JSON event a line: `system` init, `assistant` and `user` messages, a final `result`)
becomes the run's transcript, preceded by one `user` record holding the task so that `scarbook
import` and the run review's "new scar from this run" find it. The final output is the `result`
event's text; usage and cost are its `usage` and `total_cost_usd`. A `result` that is an error
(`is_error`, `error_max_turns`, ...) or a stream without one is a failed run.
"""

from __future__ import annotations

from typing import Any

from scarbook.agents.event_stream import EventStreamAgent, cli_env
from scarbook.agents.usage import usage_from_dict
from scarbook.models import Usage

KIND = "claude-code"
INSTALL = "npm install -g @anthropic-ai/claude-code"
BASE_ARGV = ["claude", "-p", "{task}", "--output-format", "stream-json", "--verbose"]
# What the CLI needs to authenticate and find its settings; the user's `env:` adds more.
ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
       "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")


class ClaudeCodeEvents:
    def __init__(self) -> None:
        self.result: dict[str, Any] | None = None
        self.error: str | None = None

    def event(self, ev: dict[str, Any]) -> None:
        if ev.get("type") == "result":
            self.result = ev

    def answer(self) -> str | None:
        r = self.result
        return r["result"] if r is not None and isinstance(r.get("result"), str) else None

    def usage(self) -> Usage | None:
        r = self.result
        if r is None or not isinstance(r.get("usage"), dict):
            return None
        u = usage_from_dict(r["usage"])
        cost = r.get("total_cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            u.cost_usd = float(cost)
        return u

    def failure(self) -> str | None:
        r = self.result
        if r is None:
            return "claude ended without a result event (the stream was cut off)"
        if r.get("is_error") or str(r.get("subtype", "success")) != "success":
            detail = r.get("result") if isinstance(r.get("result"), str) else ""
            return f"claude reported {r.get('subtype') or 'an error'}" + (f": {detail[:200]}" if detail else "")
        return None


class ClaudeCodeAgent(EventStreamAgent):
    def __init__(self, args: list[str], *, env: list[str] | tuple[str, ...] = (), max_output_bytes: int,
                 project_root=None) -> None:
        super().__init__([*BASE_ARGV, *args], kind=KIND, install=INSTALL, reader=ClaudeCodeEvents,
                         env_allow=cli_env(ENV, env), stdin=False, max_output_bytes=max_output_bytes,
                         project_root=project_root)

    def first_line(self, task: str) -> dict[str, Any]:
        return {"type": "user", "message": {"role": "user", "content": task}, "session_id": None,
                "scarbook": "the task, given to the CLI with -p"}
