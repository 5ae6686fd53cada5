"""The `command` adapter: the agent is a program. argv with {task}, or the task on stdin."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from pathlib import Path

from scarbook.agents.child_watch import use_pidfd_child_watcher
from scarbook.errors import ScarbookError
from scarbook.models import AgentResult

# Always passed through: what a program needs to start at all. Everything else must be allow-listed.
BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "SYSTEMROOT", "PYTHONPATH")
DEFAULT_MAX_OUTPUT = 1_000_000
MAX_STDERR = 5_000_000
KILL_GRACE_S = 2.0


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
        self._resolved: str | None = None

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
        if self._executable() is None:
            raise ScarbookError(
                f"agent command not found: {self.argv[0]!r} (agent.argv in scarbook.yaml) — "
                "install it, fix the path, or make the file executable")

    def build_env(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: os.environ[k] for k in (*BASE_ENV, *self.env_allow) if k in os.environ}
        env.update(extra)
        return env

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str) -> AgentResult:
        exe = self._executable()
        stderr_path = log_dir / f"{stem}.stderr.log"
        use_pidfd_child_watcher()
        if exe is None:
            return AgentResult(crashed=f"agent command not found: {self.argv[0]!r}", stderr_path=None)
        argv = [exe] + [a.replace("{task}", task) for a in self.argv[1:]]
        start = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=self.build_env(env),
            stdin=asyncio.subprocess.PIPE if self.stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)  # its own process group, so a timeout kills grandchildren too
        out = _CappedReader(self.max_output_bytes)
        err_file = _LazyLog(stderr_path)
        waiter = asyncio.ensure_future(_wait_all(proc, out, err_file))
        try:
            if self.stdin:
                await _feed(proc.stdin, task)
            done, _ = await asyncio.wait({waiter}, timeout=timeout_s)
            if not done:
                await _kill_group(proc)
                await _settle(waiter)
                return AgentResult(output=out.text(), timed_out=True, stderr_path=err_file.path_if_written(),
                                   output_truncated=out.truncated, duration_s=time.monotonic() - start,
                                   crashed=f"timed out after {timeout_s:g}s")
            waiter.result()
        except asyncio.CancelledError:
            await _kill_group(proc)
            await _settle(waiter)
            raise
        finally:
            err_file.close()
        code = proc.returncode
        result = AgentResult(output=out.text(), exit_code=code, stderr_path=err_file.path_if_written(),
                             output_truncated=out.truncated, duration_s=time.monotonic() - start)
        if code != 0:
            result.crashed = (f"agent was killed by signal {-code}" if code is not None and code < 0
                              else f"agent exited with code {code}") + _last_line(stderr_path)
        return result


class _LazyLog:
    """The stderr log, created on the first byte: most quiet runs then cost one file less."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = None

    def write(self, data: bytes) -> None:
        if self._fh is None:
            self._fh = open(self.path, "wb")
        self._fh.write(data)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()

    def path_if_written(self) -> str | None:
        return str(self.path) if self._fh is not None else None


async def _wait_all(proc: asyncio.subprocess.Process, out: "_CappedReader", err_file) -> None:
    await asyncio.gather(out.pump(proc.stdout), _pump_to_file(proc.stderr, err_file, MAX_STDERR))
    await proc.wait()


async def _settle(task: asyncio.Future) -> None:
    """Cancel a helper task and wait until it is really gone."""
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):
        pass


def _last_line(path: Path) -> str:
    """The last stderr line, so a crash's reason says what went wrong."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, path.stat().st_size - 4096))
            lines = [ln for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return f": {lines[-1].strip()[:200]}" if lines else ""


async def _feed(stream: asyncio.StreamWriter | None, task: str) -> None:
    if stream is None:
        return
    try:
        stream.write(task.encode())
        await stream.drain()
        stream.close()
    except (BrokenPipeError, ConnectionResetError):
        pass


class _CappedReader:
    """Keep the first `cap` bytes of a stream and drain the rest, so a flood costs no memory."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.dropped = 0

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    async def pump(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(1 << 16):
            room = self.cap - len(self.buf)
            if room > 0:
                self.buf += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return self.buf.decode("utf-8", errors="replace")


async def _pump_to_file(stream: asyncio.StreamReader | None, fh, cap: int) -> None:
    if stream is None:
        return
    written = 0
    while chunk := await stream.read(1 << 16):
        if written < cap:
            fh.write(chunk[: cap - written])
            written += len(chunk)
            if written >= cap:
                fh.write(b"\n[scarbook: stderr truncated]\n")


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a short grace."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), wait)
            # the leader is gone; make sure no child of the group outlives it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            break
        except asyncio.TimeoutError:
            continue
