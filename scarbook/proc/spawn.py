"""Run one program to completion with the event loop watching its pipes and its exit.

Two ways, one contract (`run_program`):
- Linux (the fast path): raw pipe fds watched through one epoll set per loop (see fdwatch.py) and the
  exit through a pidfd, so a run costs a spawn, a few reads and one waitpid. A task that fits in the
  pipe is written before the spawn (no writer to watch).
- Elsewhere, or with SCARBOOK_PORTABLE_SPAWN=1 (how the tests run it on Linux): asyncio's own
  subprocess transports, see spawn_portable.py.

The program gets its own process group. When it exits, whatever is left of that group is killed at
once (a grandchild must not outlive its run, nor hold stdout open and turn an exit 0 into a timeout);
output already in the pipes is read for LEFTOVER_GRACE_S more, then the pipes are closed whoever holds
them. A timeout or a cancel terminates, then kills, the whole group. Processes that left the group
(setsid) are found through the subreaper while unconfined programs run, see reaper.py.
"""

from __future__ import annotations

import asyncio
import functools
import os
import select
import signal
import subprocess
import weakref
from dataclasses import dataclass

from scarbook.proc import leftovers, reaper
from scarbook.proc.common import KILL_GRACE_S, LEFTOVER_GRACE_S, Finished, Sink, devnull_fd, fill_pipe
from scarbook.proc.fdwatch import PipeReaders, TaskWriter, readers_for
from scarbook.proc.sandbox_init import SandboxInit
from scarbook.proc.spawn_portable import run_portable
from scarbook.proc.trips import off_loop


def fast_path_available() -> bool:
    """epoll and pidfds (Linux >= 5.3), unless SCARBOOK_PORTABLE_SPAWN forces the portable path."""
    if os.environ.get("SCARBOOK_PORTABLE_SPAWN", "") not in ("", "0"):
        return False
    global _kernel_ok
    if _kernel_ok is None:
        _kernel_ok = hasattr(select, "epoll") and hasattr(os, "pidfd_open")
        if _kernel_ok:
            try:
                os.close(os.pidfd_open(os.getpid()))
            except OSError:  # an older kernel: the call exists, the syscall does not
                _kernel_ok = False
    return _kernel_ok


_kernel_ok: bool | None = None
# fast_path_available() of each event loop, asked once: os.environ.get of a name that is not set raises and
# catches a KeyError inside, which at -j16 was a visible share of the loop's time per run
_fast_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, bool] = weakref.WeakKeyDictionary()
EXIT_READS = 16  # chunks read from a pipe at the program's exit at most (a leftover may go on writing)


async def run_program(argv: list[str], *, cwd, env: dict[str, str] | None, stdin_data: bytes | None,
                      on_stdout: Sink, on_stderr: Sink | None, timeout_s: float,
                      confined: bool = False) -> Finished:
    """Start `argv`, feed it `stdin_data` (None: /dev/null), hand every chunk it prints to the sinks
    (on_stderr None: stderr joins stdout) and return once it has exited (and its pipes closed, or
    LEFTOVER_GRACE_S passed) and what it left is killed. After `timeout_s` the whole process group is
    terminated, then killed. Cancelling kills it too. OSError from the spawn itself (program not found,
    cwd gone) propagates. `confined`: `argv` is the sandbox's bwrap line, whose PID namespace takes
    every process along (no sweep, no subreaper)."""
    tag = leftovers.new_tag(env.get(leftovers.PROJECT_VAR, "") if env is not None else "")
    env = {**(os.environ if env is None else env), leftovers.TAG_VAR: tag}
    run = reaper.Run(tag, confined=confined)
    loop = asyncio.get_running_loop()
    fast = _fast_by_loop.get(loop)
    if fast is None:
        fast = _fast_by_loop[loop] = fast_path_available()
    if not fast:
        return await run_portable(argv, cwd=cwd, env=env, stdin_data=stdin_data, on_stdout=on_stdout,
                                  on_stderr=on_stderr, timeout_s=timeout_s, run=run)
    cancelled = False
    init = SandboxInit() if confined else None  # the run is over once the sandbox's PID 1 is gone
    spawn = functools.partial(_spawn, argv, cwd, env, stdin_data, on_stderr is not None, run, init)
    if not reaper.leaders:  # nothing else runs: nothing to serve meanwhile
        spawned = spawn()
    else:  # other programs run: the loop serves them while this one starts on a trip thread (vfork waits for its exec)
        starting = off_loop(spawn)
        while True:
            try:
                spawned = await asyncio.shield(starting)
                break
            except asyncio.CancelledError:  # it starts anyway: once it has, it is stopped as below
                cancelled = True
                if starting.done():
                    if starting.exception() is not None:
                        raise
                    spawned = starting.result()
                    break
    watch = _Watch(loop, spawned, on_stdout, on_stderr, run, init)
    timer = loop.call_later(timeout_s, watch.expire)
    try:
        if cancelled:
            raise asyncio.CancelledError
        await watch.done
    except asyncio.CancelledError:
        timer.cancel()
        try:
            await watch.stop()
        finally:
            watch.close()
        await watch.swept()
        raise
    timer.cancel()
    if watch.timed_out:
        try:
            await watch.stop()
        finally:
            watch.close()
    await watch.swept()
    return Finished(watch.proc.returncode, timed_out=watch.timed_out)


@dataclass
class _Spawned:
    proc: subprocess.Popen
    out_r: int
    err_r: int | None
    stdin: tuple[int, memoryview] | None  # the task's part that did not fit in the pipe, and the pipe


def _spawn(argv, cwd, env, stdin_data: bytes | None, separate_err: bool, run: reaper.Run,
           init: SandboxInit | None) -> _Spawned:
    """Make the pipes and start the program (on the loop's thread, or a trip thread: proc/trips.py). OSError from
    the start propagates, the pipes closed and `run` (and `init`) told."""
    child_ends: list[int] = []
    mine: list[int] = []
    try:
        out_r, out_w = os.pipe()
        mine.append(out_r)
        child_ends.append(out_w)
        err_r, err_w = None, out_w
        if separate_err:
            err_r, err_w = os.pipe()
            mine.append(err_r)
            child_ends.append(err_w)
        in_fd: int = devnull_fd()
        stdin = None
        if stdin_data is not None:
            in_fd, in_w = os.pipe()
            mine.append(in_w)
            child_ends.append(in_fd)
            os.set_blocking(in_w, False)
            rest = fill_pipe(in_w, memoryview(stdin_data))
            if rest:  # a task larger than the pipe: the rest goes as the program reads
                stdin = (in_w, rest)
            else:  # all of it is in the pipe: the program reads it, then end of file
                mine.remove(in_w)
                os.close(in_w)
        if init is not None:
            argv = init.argv(argv)
        argv, hook = leftovers.dying_with_parent(argv, cwd=cwd, env=env)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=in_fd, stdout=out_w, stderr=err_w,
                                start_new_session=True, preexec_fn=hook, pass_fds=init.pass_fds if init else ())
    except BaseException:
        for fd in mine:
            os.close(fd)
        if init is not None:
            init.close()
        run.not_started()
        raise
    finally:
        for fd in child_ends:
            os.close(fd)
        if init is not None:
            init.spawned()
    run.started(proc.pid)
    return _Spawned(proc, out_r, err_r, stdin)


class _Watch:
    def __init__(self, loop: asyncio.AbstractEventLoop, spawned: _Spawned, on_stdout: Sink,
                 on_stderr: Sink | None, run: reaper.Run, init: SandboxInit | None) -> None:
        self.loop = loop
        self.run = run
        self.proc = spawned.proc
        self.sweeping: asyncio.Future | None = None
        self._fds = readers_for(loop)
        self.timed_out = False
        self.done: asyncio.Future = loop.create_future()
        self.exited: asyncio.Future = loop.create_future()
        self._pipes = PipeReaders(loop, self._maybe_done)
        self._grace: asyncio.TimerHandle | None = None
        # The exit is watched from the start: a leftover may hold the pipes open long after it.
        self._pidfd: int | None = os.pidfd_open(self.proc.pid)
        self._fds.add(self._pidfd, self._on_exit)
        self._pipes.watch(spawned.out_r, on_stdout)
        if spawned.err_r is not None and on_stderr is not None:
            self._pipes.watch(spawned.err_r, on_stderr)
        self._stdin = TaskWriter(loop, *spawned.stdin) if spawned.stdin is not None else None
        self._init = init
        self._init_gone = init.watch(loop, self._fds.add, self._fds.remove) if init is not None else None
        if self._init_gone is not None:
            self._init_gone.add_done_callback(lambda _: self._maybe_done())

    # pipes ------------------------------------------------------------------------------------
    def _drop_pipes(self) -> None:
        """The program has exited and LEFTOVER_GRACE_S passed: whoever still holds a pipe is not
        the program, and its output is not the program's."""
        self._grace = None
        self._pipes.drop_all()
        self._close_stdin()
        self._maybe_done()

    def _close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin.close()

    # exit -------------------------------------------------------------------------------------
    def _on_exit(self) -> None:
        """The program exited. Until it is reaped its pid (so its group id) cannot be reused, so the
        group is killed first, then the program reaped, then what left the group swept (reaper.py:
        nothing for a sandboxed program, else one read, and a thread when something is left)."""
        assert self._pidfd is not None  # seen once: the watch on it ends right here
        self._fds.remove(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        _killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.run.ended()
        self.sweeping = self.run.sweep_soon(self.loop)
        self.exited.set_result(self.proc.returncode)
        self._close_stdin()
        # read to the end now what the exit left (no grace timer, no wake-up for each end of file); what a
        # leftover still holds waits for the grace
        self._pipes.read_all(EXIT_READS)
        if self._pipes and not self.done.done():
            self._grace = self.loop.call_later(LEFTOVER_GRACE_S, self._drop_pipes)
        self._maybe_done()

    def _maybe_done(self) -> None:
        if self._pipes or self.done.done() or not self.exited.done():
            return
        if self._init_gone is not None and not self._init_gone.done():
            return  # killed with the group at the exit: the kernel is emptying its namespace
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self.done.set_result(None)

    # ending early -----------------------------------------------------------------------------
    def expire(self) -> None:
        if not self.done.done():
            self.timed_out = True
            self.done.set_result(None)

    async def stop(self) -> None:
        """SIGTERM the whole group, then SIGKILL it after a short grace; _on_exit does the rest."""
        for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 5.0)):
            if self.exited.done() or not _killpg(self.proc.pid, sig):
                return
            try:
                await asyncio.wait_for(asyncio.shield(self.exited), wait)
            except TimeoutError:
                continue

    async def swept(self) -> None:
        """Wait for the sweep of what the program left (if it needed one), and for the sandbox's
        PID 1 (killed with the group) to be gone."""
        if self.sweeping is not None:
            await asyncio.shield(self.sweeping)
        if self._init is not None:
            await self._init.ended()

    def close(self) -> None:
        """Stop watching the pipes (a leftover may hold one for ever). The exit stays watched if the
        program somehow still runs, so it is reaped when it goes."""
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self._pipes.drop_all()
        self._close_stdin()


def _killpg(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True
