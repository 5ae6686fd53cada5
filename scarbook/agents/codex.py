"""`agent: {type: codex}`: OpenAI's Codex CLI, headless.

Runs `codex exec --json --skip-git-repo-check [args...] -` in the run's workspace with the task
on stdin (a run's workspace is no git repository, and a long task does not fit every argv). The
JSONL events (`thread.started`, `turn.started`, `item.started` / `item.completed` with
agent_message, reasoning, command_execution, file_change, mcp_tool_call... items,
`turn.completed` with usage, `turn.failed`, `error`) become the run's transcript, preceded by one
`{"type": "scarbook.task"}` line holding the task. The final output is the last agent_message;
usage is the sum of the turns' usage (Codex reports no cost). A `turn.failed` or `error` event, or
a stream that never completes a turn, is a failed run.
"""

from __future__ import annotations

from typing import Any

from scarbook.agents.event_stream import EventStreamAgent, cli_env
from scarbook.models import Usage
from scarbook.transcripts.codex import turn_usage

KIND = "codex"
INSTALL = "npm install -g @openai/codex"
BASE_ARGV = ["codex", "exec", "--json", "--skip-git-repo-check"]
ENV = ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME")
TASK_EVENT = "scarbook.task"


class CodexEvents:
    def __init__(self) -> None:
        self.last_message: str | None = None
        self.total: Usage | None = None
        self.errors: list[str] = []
        self.completed = False

    def event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "item.completed" and isinstance(ev.get("item"), dict):
            item = ev["item"]
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                self.last_message = item["text"]
        elif kind == "turn.completed":
            self.completed = True
            self.total = self.total or Usage()
            self.total.add(turn_usage(ev.get("usage")))
        elif kind == "turn.failed":
            err = ev.get("error")
            self.errors.append(str(err.get("message") if isinstance(err, dict) else err or "turn failed"))
        elif kind == "error":
            self.errors.append(str(ev.get("message") or "error"))

    def answer(self) -> str | None:
        return self.last_message

    def usage(self) -> Usage | None:
        return self.total

    def failure(self) -> str | None:
        if self.errors:
            return f"codex reported an error: {self.errors[-1][:200]}"
        if not self.completed:
            return "codex ended without completing its turn (the stream was cut off)"
        return None


class CodexAgent(EventStreamAgent):
    def __init__(self, args: list[str], *, env: list[str] | tuple[str, ...] = (), max_output_bytes: int,
                 project_root=None) -> None:
        super().__init__([*BASE_ARGV, *args, "-"], kind=KIND, install=INSTALL, reader=CodexEvents,
                         env_allow=cli_env(ENV, env), stdin=True, max_output_bytes=max_output_bytes,
                         project_root=project_root)

    def first_line(self, task: str) -> dict[str, Any]:
        return {"type": TASK_EVENT, "text": task}
