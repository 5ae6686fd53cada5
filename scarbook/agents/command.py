"""The `command` adapter: the agent is a program. argv with {task}, or the task on stdin."""

from __future__ import annotations

import dataclasses
import errno
import os
import shutil
import signal
import time
from pathlib import Path
from typing import BinaryIO

from scarbook.agents import shims
from scarbook.agents.failure import failure_line
from scarbook.agents.sandbox import Sandbox
from scarbook.agents.slots import AgentSlots
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.models import AgentResult
from scarbook.proc import credentials, leftovers
from scarbook.proc.common import BASE_ENV, Finished
from scarbook.proc.slot import SlotRun
from scarbook.proc.spawn import run_program

# Always passed through: what a program needs to start at all. Everything else must be allow-listed.
DEFAULT_MAX_OUTPUT = 1_000_000
MAX_STDERR = 5_000_000


class CommandAgent:
    def __init__(self, argv: list[str], *, stdin: bool | None = None, env_allow: list[str] | None = None,
                 max_output_bytes: int = DEFAULT_MAX_OUTPUT, project_root: Path | None = None,
                 label: str | None = None) -> None:
        self.argv = list(argv)
        self.uses_placeholder = any("{task}" in a for a in argv)
        self.stdin = (not self.uses_placeholder) if stdin is None else stdin
        self.env_allow = list(env_allow or [])
        self.max_output_bytes = max_output_bytes
        self.project_root = project_root
        self.label = label or "command: " + " ".join(argv)
        self.sandbox: Sandbox | None = None  # set when isolation: sandbox
        self.slots: AgentSlots | None = None  # set when isolation: slot (and slots can run here)
        self._resolved: str | None = None
        self._base_env: dict[str, str] | None = None
        self.env_values: dict[str, str] = {}  # variables set for this agent alone (a named agent's env:)

    def _executable(self) -> str | None:
        # Resolved once per agent: a PATH search on every run was a visible share of per-run cost.
        if self._resolved is None or not os.access(self._resolved, os.X_OK):
            self._resolved = self._find_executable()
        return self._resolved

    def _find_executable(self) -> str | None:
        exe = self.argv[0]
        if os.sep in exe:
            p = Path(exe)
            if not p.is_absolute() and self.project_root:
                p = self.project_root / p
            return str(p.absolute()) if p.is_file() and os.access(p, os.X_OK) else None
        return shutil.which(exe)

    def preflight(self) -> None:
        exe = self._executable()
        if exe is None:
            raise ScarbookError(
                f"agent command not found: {self.argv[0]!r} (agent.argv in scarbook.yaml) — "
                "install it, fix the path, or make the file executable")
        self._ready_for_sandbox(exe)

    def _ready_for_sandbox(self, exe: str) -> None:
        """In the sandbox a version manager's shim cannot start (its manager is in the hidden home):
        the runs start the program it leads to, or the session is refused naming the fix (shims.py)."""
        if self.sandbox is None:
            return
        why = shims.env_interpreter_shim(exe)
        if why:
            raise ScarbookError(why)
        self._resolved = shims.resolve(exe, self.argv[0], self.project_root)

    def build_env(self, extra: dict[str, str]) -> dict[str, str]:
        # The allowed part of the environment is read once per agent (one session), not per run.
        if self._base_env is None:
            environ = credentials.environ()  # (a session withholds the keys from os.environ)
            self._base_env = {k: environ[k] for k in (*BASE_ENV, *self.env_allow) if k in environ}
        return {**self._base_env, **self.env_values, **extra}

    def sandbox_for(self, network: bool | None) -> Sandbox | None:
        """This agent's sandbox with the case's network setting (None: as configured)."""
        if self.sandbox is None or network is None or network == self.sandbox.network:
            return self.sandbox
        return dataclasses.replace(self.sandbox, network=network)

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        return await self.run_with_output(_CappedOutput(self.max_output_bytes), task, cwd, env, timeout_s,
                                          log_dir, stem, network=network)

    async def run_with_output(self, out, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                              log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        """`run` with stdout going to `out` (feed(bytes), text(), truncated): the agent presets
        that read an event stream (event_stream.py) pass their own."""
        exe = self._executable()
        stderr_path = log_dir / f"{stem}.stderr.log"
        if exe is None:
            return AgentResult(crashed=f"agent command not found: {self.argv[0]!r}", stderr_path=None)
        argv = [exe] + [a.replace("{task}", task) for a in self.argv[1:]]
        start = time.monotonic()
        err = _StderrLog(stderr_path, MAX_STDERR)
        shared: tuple[str, ...] = ()
        try:
            sandbox = self.sandbox_for(network)
            stdin_data = task.encode() if self.stdin else None
            if sandbox is not None:
                _interpreter_must_exist(exe)
            if sandbox is not None and self.slots is not None:
                shared = tuple(f for f in (env.get("SCARBOOK_TRANSCRIPT"), env.get("SCARBOOK_USAGE")) if f)
                done = await self._run_in_slot(sandbox, argv, cwd, env, stdin_data, out, err, timeout_s)
            else:
                if sandbox is not None:
                    shared = _create_files(env.get("SCARBOOK_TRANSCRIPT"), env.get("SCARBOOK_USAGE"))
                    argv = sandbox.wrap(argv, cwd, shared, env)
                done = await run_program(argv, cwd=cwd, env=self.build_env(env), stdin_data=stdin_data,
                                         on_stdout=out.feed, on_stderr=err.feed, timeout_s=timeout_s,
                                         confined=sandbox is not None)
        finally:
            err.close()
            _remove_if_empty(shared)
        result = AgentResult(output=out.text(), exit_code=done.returncode, stderr_path=err.path_if_written(),
                             output_truncated=out.truncated, duration_s=time.monotonic() - start,
                             timed_out=done.timed_out, stderr_tail=err.tail.decode("utf-8", "replace"))
        code = done.returncode
        if sandbox is not None and code is not None and _signal_number(code - 128):
            # bwrap exits 128+N when the program it runs is killed by signal N (the OOM killer): read as outside
            code = result.exit_code = 128 - code
        if done.timed_out:
            result.exit_code = None
            result.crashed = f"timed out after {timeout_s:g}s"
        elif code != 0:
            result.signal = -code if code is not None and code < 0 else None
            result.crashed = (f"agent was killed by signal {-code}" if code is not None and code < 0
                              else f"agent exited with code {code}") + _last_line(err.tail)
            if sandbox is not None:
                result.crashed += f" [{sandbox.describe()}]"
        return result


    async def _run_in_slot(self, sandbox: Sandbox, argv: list[str], cwd: Path, env: dict[str, str],
                           stdin_data: bytes | None, out, err: _StderrLog, timeout_s: float) -> Finished:
        """`argv` in one of this agent's sandbox slots (agents/slots.py); SlotFailed when the slot failed."""
        assert self.slots is not None  # (asked by the caller)
        full = self.build_env(env)
        # tagged as run_program tags every program it starts: the agent sees the environment a bwrap of its own gives
        full[leftovers.TAG_VAR] = leftovers.new_tag(full.get(leftovers.PROJECT_VAR, ""))
        job = SlotRun(sandbox.program(argv, full), full, cwd, (env.get("SCARBOOK_TRANSCRIPT"), env.get("SCARBOOK_USAGE")),
                      stdin_data, out.feed, err.feed, timeout_s)
        return await self.slots.pool(sandbox, argv[0], full).run(job)


def _interpreter_must_exist(program: str) -> None:
    """In the sandbox bwrap starts and then cannot exec a script whose #! interpreter is missing (a
    failed run); unconfined the start itself fails (a run error). Said the same way in both: the
    OSError a spawn gives (scarbook.run.session_run names the #! line)."""
    try:
        with open(program, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return  # bwrap says why
    if head.startswith(b"#!"):
        interpreter = head[2:].split(b"\n", 1)[0].strip().split(b" ", 1)[0]
        if interpreter.startswith(b"/") and not os.path.exists(interpreter):
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _signal_number(n: int) -> bool:
    return 0 < n < signal.NSIG


def _create_files(*paths: str | None) -> tuple[str, ...]:
    """The sandbox binds these files writable, and a bind needs its source to exist."""
    made = []
    for path in paths:
        if path:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0), 0o644))
            made.append(path)
    return tuple(made)


def _remove_if_empty(paths: tuple[str, ...]) -> None:
    """An agent that wrote nothing leaves no file, as outside the sandbox."""
    for path in paths:
        try:
            if os.stat(path).st_size == 0:
                os.unlink(path)
        except OSError:
            pass


class _StderrLog:
    """The stderr log, created on the first byte (most quiet runs then cost one file less), capped."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self.cap = cap
        self.written = 0
        self.tail = b""  # the last bytes fed, for the crash's last line
        self._fh: BinaryIO | None = None

    def feed(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-4096:]
        if self.written >= self.cap:
            return
        if self._fh is None:  # created fresh: the agent may have planted a pipe or a link at this name
            try:  # unbuffered: a full disk fails in write, once, not again in close() after the agent ran
                # no `with`: the log stays open across feed() calls for the whole run; close() ends it
                self._fh = open(safefs.create_file(self.path.parent, self.path.name), "wb", buffering=0)  # noqa: SIM115
            except (safefs.Refused, OSError):
                self.written = self.cap  # nowhere to keep it: drop the rest
                return
        try:
            self._fh.write(data[: self.cap - self.written])
            self.written += len(data)
            if self.written >= self.cap:
                self._fh.write(b"\n[scarbook: stderr truncated]\n")
        except OSError:  # the log is lost from here on (disk full); the run is not
            self.written = self.cap

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass

    def path_if_written(self) -> str | None:
        return str(self.path) if self._fh is not None else None


def _last_line(tail: bytes) -> str:
    """The most informative stderr line (the error line, not Node's "Node.js v20" sign-off), so a
    crash's reason says what went wrong. Kept in memory as it was fed, not read back from the log:
    the agent can replace the log with a pipe before scarbook reads it."""
    line = failure_line(tail.decode("utf-8", "replace"))
    return f": {line}" if line else ""


class _CappedOutput:
    """Keep the first `cap` bytes of stdout and drop the rest, so a flood costs no memory."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.dropped = 0

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.buf)
        if room > 0:
            self.buf += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return self.buf.decode("utf-8", errors="replace")
