"""run_program on asyncio's own subprocess transports: the path for macOS, Windows, and Linux
kernels without pidfds (SCARBOOK_PORTABLE_SPAWN=1 forces it, which is how the tests run it).

It keeps spawn.py's contract: the program's exit ends the run even while a leftover holds its
pipes (the protocol's process_exited fires at the exit; asyncio's `wait()` would wait for the pipes
too), whatever is left of its process group is killed then, output is read for LEFTOVER_GRACE_S
more, and a timeout or a cancel terminates, then kills, the group.

What it cannot do: on POSIX the group is killed after asyncio has reaped the program, so in theory a
new process could have taken that group id in between (the Linux path kills before reaping). On
Windows there are no process groups to kill: the program itself is terminated, its children are not
(a job object would be needed; not done), and there is no isolation.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from typing import Any

from scarbook.proc import leftovers, reaper
from scarbook.proc.common import KILL_GRACE_S, LEFTOVER_GRACE_S, Finished, Sink
from scarbook.proc.sandbox_init import SandboxInit


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, on_stdout: Sink, on_stderr: Sink | None, loop: asyncio.AbstractEventLoop) -> None:
        self.sinks = {1: on_stdout, 2: on_stderr or on_stdout}
        self.open_pipes = {1, 2} if on_stderr is not None else {1}
        self.exited = loop.create_future()
        self.pipes_closed = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.sinks[fd](data)

    def pipe_connection_lost(self, fd: int, exc) -> None:
        self.open_pipes.discard(fd)
        if not self.open_pipes and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


async def run_portable(argv: list[str], *, cwd, env: dict[str, str], stdin_data: bytes | None,
                       on_stdout: Sink, on_stderr: Sink | None, timeout_s: float, run: reaper.Run) -> Finished:
    loop = asyncio.get_running_loop()
    group: dict[str, Any]
    init = None
    if sys.platform == "win32":  # spelled out: mypy checks each platform's branch on it
        group = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    else:
        if run.confined and hasattr(os, "pidfd_open"):  # the run is over once the sandbox's PID 1 is gone
            init = SandboxInit()
            argv = init.argv(argv)
        argv, hook = leftovers.dying_with_parent(argv, cwd=cwd, env=env)
        group = {"start_new_session": True, "preexec_fn": hook, "pass_fds": init.pass_fds if init else ()}
    try:
        transport, proto = await loop.subprocess_exec(
            lambda: _Protocol(on_stdout, on_stderr, loop), *argv, cwd=cwd, env=env,
            stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if on_stderr is None else subprocess.PIPE, **group)
    except BaseException:
        if init is not None:
            init.close()
        run.not_started()
        raise
    if init is not None:
        init.spawned()
        init.watch(loop, loop.add_reader, loop.remove_reader)
    pid = transport.get_pid()
    run.started(pid)  # a running program is never someone's leftover
    if stdin_data is not None:
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)  # stdin=PIPE: the child's stdin, which we write
        stdin.write(stdin_data)  # buffered by the transport, written as the program reads
        stdin.close()  # after the buffer is flushed; a program that never reads loses nothing of ours
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(proto.exited), timeout_s)
        except TimeoutError:
            timed_out = True
            await _stop(transport, pid, proto)
        _kill_group(pid, transport)  # leftovers of the program: nothing outlives its run
        run.ended()
        await run.settle()
        try:  # the program's last output, unless a leftover holds the pipes
            await asyncio.wait_for(asyncio.shield(proto.pipes_closed), LEFTOVER_GRACE_S)
        except TimeoutError:
            pass
        if init is not None:
            await init.ended()
    except asyncio.CancelledError:
        await _stop(transport, pid, proto)
        _kill_group(pid, transport)
        run.ended()
        await run.settle()
        if init is not None:
            await init.ended()
        raise
    finally:
        if init is not None:
            init.close()
        run.ended()
        run.close()
        transport.close()
    return Finished(transport.get_returncode(), timed_out=timed_out)


async def _stop(transport: asyncio.SubprocessTransport, pid: int, proto: _Protocol) -> None:
    """Terminate the group, then kill it if it has not exited after KILL_GRACE_S."""
    for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        if proto.exited.done():
            return
        _signal_group(pid, sig, transport)
        try:
            await asyncio.wait_for(asyncio.shield(proto.exited), KILL_GRACE_S)
        except TimeoutError:
            continue


def _kill_group(pid: int, transport: asyncio.SubprocessTransport) -> None:
    _signal_group(pid, getattr(signal, "SIGKILL", signal.SIGTERM), transport)


def _signal_group(pid: int, sig: int, transport: asyncio.SubprocessTransport) -> None:
    if hasattr(os, "killpg"):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        return
    if transport.get_returncode() is None:  # Windows: the program only (TerminateProcess)
        try:
            transport.kill()
        except ProcessLookupError:
            pass
