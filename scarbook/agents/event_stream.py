"""Agents that are CLIs printing a JSON event stream (`claude -p --output-format stream-json`,
`codex exec --json`): run them as command agents, keep the stream as the run's transcript, and read
the final answer and the token usage from its events, so the agent writes neither
$SCARBOOK_TRANSCRIPT nor $SCARBOOK_USAGE itself.

The stream is untrusted output of the agent: it is written to the transcript file as it arrives
(capped), parsed a line at a time (a line longer than the cap is dropped, not buffered), and
nothing in it is executed or trusted beyond "this is what the CLI said its answer was".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from scarbook.agents.command import CommandAgent
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.models import AgentResult, Usage

MAX_TRANSCRIPT = 50_000_000
MAX_LINE = 20_000_000
OWN_FILES = ("SCARBOOK_TRANSCRIPT", "SCARBOOK_USAGE")  # written by scarbook from the stream


class EventReader(Protocol):
    """What one CLI's events mean: fed every JSON object of the stream, in order."""

    def event(self, ev: dict[str, Any]) -> None: ...

    def answer(self) -> str | None:
        """The final answer, or None when the stream never gave one."""

    def usage(self) -> Usage | None: ...

    def failure(self) -> str | None:
        """Why the run failed although the CLI exited 0 (an error event, no final event), or None."""


class StreamOutput:
    """The stdout sink of a stream agent: bytes to the transcript file, lines to the reader."""

    def __init__(self, transcript: Path, reader: EventReader, first_line: dict[str, Any] | None,
                 max_answer: int) -> None:
        self.reader = reader
        self.max_answer = max_answer
        self.written = 0
        self._line = bytearray()
        self._skipping = False  # inside a line longer than MAX_LINE
        # created fresh: the agent knows the name and may have planted a link or a pipe there.
        # No `with`: the sink outlives __init__ (fed chunk by chunk while the agent runs; close() ends it).
        self._fh = open(safefs.create_file(transcript.parent, transcript.name), "wb")  # noqa: SIM115
        if first_line is not None:
            self._write(json.dumps(first_line, ensure_ascii=False).encode() + b"\n")

    def _write(self, data: bytes) -> None:
        room = MAX_TRANSCRIPT - self.written
        if room <= 0:
            return
        self._fh.write(data[:room])
        self.written += min(len(data), room)
        if len(data) > room:
            self._fh.write(b"\n")

    def feed(self, chunk: bytes) -> None:
        self._write(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not self._skipping:
                    self._line += chunk[start:]
                    if len(self._line) > MAX_LINE:
                        self._line.clear()
                        self._skipping = True
                return
            if not self._skipping:
                self._line += chunk[start:end]
                self._parse(bytes(self._line))
            self._line.clear()
            self._skipping = False
            start = end + 1

    def _parse(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            ev = json.loads(line)
        except (ValueError, RecursionError):
            return  # a progress line or garbage: kept in the transcript, not an event
        if isinstance(ev, dict):
            self.reader.event(ev)

    def close(self) -> None:
        if self._line and not self._skipping:
            self._parse(bytes(self._line))  # a last line without its newline
            self._line.clear()
        self._fh.close()

    def text(self) -> str:
        return (self.reader.answer() or "")[: self.max_answer]

    @property
    def truncated(self) -> bool:
        return len(self.reader.answer() or "") > self.max_answer


class EventStreamAgent(CommandAgent):
    """A command agent whose stdout is a JSON event stream. `kind` is its scarbook.yaml type,
    `install` the command that installs the CLI (said when it is missing)."""

    def __init__(self, argv: list[str], *, kind: str, install: str, reader: type, env_allow: list[str],
                 stdin: bool, max_output_bytes: int, project_root: Path | None) -> None:
        super().__init__(argv, stdin=stdin, env_allow=env_allow, max_output_bytes=max_output_bytes,
                         project_root=project_root, label=f"{kind}: " + " ".join(argv))
        self.kind = kind
        self.install = install
        self.reader = reader

    def preflight(self) -> None:
        exe = self._executable()
        if exe is None:
            raise ScarbookError(
                f"agent type {self.kind} runs the `{self.argv[0]}` CLI, which is not on PATH: "
                f"install it with `{self.install}` (or put it on PATH), then run again")
        self._ready_for_sandbox(exe)

    def first_line(self, task: str) -> dict[str, Any] | None:
        """A line written before the stream so the transcript also holds the task (the CLIs do not
        echo it)."""
        return None

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        transcript = Path(env.get("SCARBOOK_TRANSCRIPT") or log_dir / f"{stem}.transcript.jsonl")
        usage_file = env.get("SCARBOOK_USAGE")
        child_env = {k: v for k, v in env.items() if k not in OWN_FILES}
        reader = self.reader()
        out = StreamOutput(transcript, reader, self.first_line(task), self.max_output_bytes)
        try:
            result = await self.run_with_output(out, task, cwd, child_env, timeout_s, log_dir, stem,
                                                 network=network)
        finally:
            out.close()
        usage = reader.usage()
        if usage is not None and usage_file:
            record = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                      "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens}
            if usage.cost_usd:
                record["cost_usd"] = usage.cost_usd
            usage_path = Path(usage_file)
            with open(safefs.create_file(usage_path.parent, usage_path.name), "w", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        if result.crashed is None:
            result.crashed = reader.failure()
        return result


def cli_env(names: tuple[str, ...], extra: tuple[str, ...] | list[str]) -> list[str]:
    """The variables a CLI needs (its key, base URL, config dir) plus the user's `env:`."""
    return list(dict.fromkeys([*names, *extra]))
