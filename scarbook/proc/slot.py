"""One sandbox slot, the host's side: a bwrap started once, whose PID 1 (proc/slot_launcher.py) runs one
program at a time (agents/slots.py builds the line and keeps the pool).

A run (`Slot.run`, on the event loop): its io files ($SCARBOOK_TRANSCRIPT, $SCARBOOK_USAGE) made, the run's folder
(by its path and inode), the io files, argv, env and the run's stdin/stdout/stderr go to the launcher — which runs
the program in a mount namespace of the run's own, the run's folder at its real path, as a bwrap of its own would —
and the loop watches the pipes and the control socket until it answers (slot_wait.py). A timeout or a cancel
signals the agent through the pidfd the launcher sent. Nothing of the run's is moved: a scarbook killed mid-run
leaves the run's folder where it is.

A slot whose launcher died, answered something else, or could not leave the slot as it found it raises
`SlotFailed` naming why: the run is the machine's error, the slot is not used again.

bwrap's --die-with-parent (PR_SET_PDEATHSIG) follows the THREAD that started it: each slot is started on
a thread of its own that lives as long as the slot (slot_pool.py), never on a trip thread.
"""

from __future__ import annotations

import array
import asyncio
import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scarbook.proc import slot_launcher
from scarbook.proc.common import devnull_fd, fill_pipe
from scarbook.proc.slot_wait import ANSWER_WITHIN_S, SlotWait
from scarbook.proc.trips import off_loop

READY_WITHIN_S = 30.0  # a slot's start: bwrap and the launcher's Python (~0.1 s; a loaded machine takes longer)


class SlotFailed(Exception):
    """The slot could not run or finish a run: the message says why. `by_run`: the run itself changed the slot
    (lowered its launcher's limits, left what cannot be wiped), else the machine failed
    (the launcher died, the slot did not start)."""

    def __init__(self, why: str, *, by_run: bool = False) -> None:
        super().__init__(why)
        self.by_run = by_run


@dataclass
class SlotRun:
    """One program to run in a slot, and where its output goes."""

    argv: list[str]
    env: dict[str, str]
    run_dir: Path
    io_files: tuple[str | None, ...]  # the host's $SCARBOOK_TRANSCRIPT and $SCARBOOK_USAGE (None: not given)
    stdin_data: bytes | None
    on_stdout: Callable[[bytes], None]
    on_stderr: Callable[[bytes], None] | None
    timeout_s: float


class Slot:
    def __init__(self, line: list[str], private: list[str], wipe: list[str]) -> None:
        """`line`: the slot's bwrap line up to (and with) its `--`, which binds the `private` folders (the project's
        workspaces/, where every run's folder is) writable for the launcher; `wipe` the folders it empties after
        every run."""
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control.set_inheritable(False)
        self.broken = ""  # why the slot serves no more
        self.broken_by_run = False  # the run did it (SlotFailed.by_run)
        self._err_r = -1
        err_r, err_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [*line, sys.executable, "-I", slot_launcher.__file__, str(theirs.fileno()), json.dumps({"wipe": wipe, "private": private})],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err_w,
                env={"PATH": os.defpath}, start_new_session=True)
        finally:
            theirs.close()
            os.close(err_w)
        self._err_r = err_r
        os.set_blocking(err_r, False)
        ready = select.select([self.control], [], [], READY_WITHIN_S)[0]
        said = self.control.recv(16) if ready else b""
        if said != b"R":
            why = self._stderr() or ("no answer in " f"{READY_WITHIN_S:g} s" if not ready else "it exited")
            self.close()
            raise SlotFailed(f"the sandbox slot did not start: {why}")

    def _stderr(self) -> str:
        try:
            return os.read(self._err_r, 4096).decode(errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            return ""

    async def run(self, job: SlotRun) -> tuple[int | None, bool]:
        """(exit status, timed out); SlotFailed when the slot failed. Waited for on the event loop (slot_wait.py);
        the io files made before it are a few system calls, made inline."""
        files = [real for real in job.io_files if real]
        for real in files:  # (a bind needs its source)
            os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
        wait = self._send(job, os.lstat(job.run_dir).st_ino, files)
        answer = await wait.wait()
        if answer.unclean:
            self.retire(answer.unclean, by_run=True)
        if answer.gone:
            self.retire(answer.gone)
            await self._bwrap_gone()
        if self.broken:
            raise SlotFailed(self.broken, by_run=self.broken_by_run)
        return answer.code, answer.timed_out

    def _send(self, job: SlotRun, ino: int, files: list[str]) -> SlotWait:
        """The run sent to the launcher with its pipes (the task written into stdin's as far as it fits), watched."""
        mine: list[int] = []
        child_ends: list[int] = []
        try:
            out_r, out_w = os.pipe()
            mine.append(out_r)
            child_ends.append(out_w)
            err_r, err_w = -1, out_w
            if job.on_stderr is not None:
                err_r, err_w = os.pipe()
                mine.append(err_r)
                child_ends.append(err_w)
            in_r, stdin = devnull_fd(), None
            if job.stdin_data:
                in_r, in_w = os.pipe()
                mine.append(in_w)
                child_ends.append(in_r)
                os.set_blocking(in_w, False)
                rest = fill_pipe(in_w, memoryview(job.stdin_data))
                if rest:  # the rest goes as the program reads
                    stdin = (in_w, rest)
                else:
                    mine.remove(in_w)
                    os.close(in_w)
            request = json.dumps({"argv": job.argv, "env": job.env, "cwd": str(job.run_dir), "ino": ino,
                                  "files": files}).encode()
            try:
                self.control.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                  array.array("i", [in_r, out_w, err_w]))])
            except OSError as exc:
                self.retire(f"the slot's launcher is gone ({exc.strerror})")
                raise SlotFailed(self.broken) from exc
            readers = {out_r: job.on_stdout}
            if err_r >= 0 and job.on_stderr is not None:
                readers[err_r] = job.on_stderr
            wait = SlotWait(self.control, readers, stdin, job.timeout_s)
            mine.clear()  # the wait's from here
            return wait
        finally:
            for fd in mine + child_ends:
                os.close(fd)

    async def _bwrap_gone(self) -> None:
        """The launcher is gone: wait for its bwrap, which reaps its namespace's last process (only then is the run
        over: nothing of it can write in its folder after). Cancelling does not cut this short."""
        waiting = off_loop(self._reap_bwrap)
        cancelled = False
        while not waiting.done():
            try:
                await asyncio.shield(waiting)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    def _reap_bwrap(self) -> None:
        try:
            self.proc.wait(ANSWER_WITHIN_S)
        except subprocess.TimeoutExpired:
            pass

    def retire(self, why: str, *, by_run: bool = False) -> None:
        if not self.broken:
            self.broken, self.broken_by_run = why, by_run

    def close(self) -> None:
        """End the slot (its launcher reads the closed socket and returns; bwrap follows) and reap it."""
        self.control.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._err_r >= 0:
            os.close(self._err_r)
            self._err_r = -1

