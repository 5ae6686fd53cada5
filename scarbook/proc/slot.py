"""One sandbox slot, the host's side: a bwrap started once, whose PID 1 (proc/slot_launcher.py) runs one
program at a time in the slot's folder (agents/slots.py builds the line and keeps the pool).

A run (`Slot.run`, on the event loop): the run's folder is renamed to <slot>/ws — the slot's
bwrap binds <slot>, and a bind follows the dentry, so the rename is seen inside — its io files
($SCARBOOK_TRANSCRIPT, $SCARBOOK_USAGE) linked into <slot>/io, a journal link says where ws belongs
(slot_journal.py: a SIGKILLed scarbook puts it back at its next start), argv, env and the run's
stdin/stdout/stderr go to the launcher, and the loop watches the pipes and the control socket until it
answers (slot_wait.py). A timeout or a cancel signals the agent through the pidfd the launcher sent. Then ws is renamed
back and checked (the same inode; the slot folder empty again).

A slot whose launcher died, answered something else, or could not leave the slot as it found it raises
`SlotFailed` naming why: the run is the machine's error, its folder is back, the slot is not used again.

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

from scarbook.proc import slot_journal, slot_launcher
from scarbook.proc.common import devnull_fd, fill_pipe
from scarbook.proc.slot_wait import ANSWER_WITHIN_S, SlotWait
from scarbook.proc.trips import off_loop

READY_WITHIN_S = 30.0  # a slot's start: bwrap and the launcher's Python (~0.1 s; a loaded machine takes longer)
IO_NAMES = ("transcript.jsonl", "usage.jsonl")


class SlotFailed(Exception):
    """The slot could not run or finish a run: the message says why. `by_run`: the run itself changed the slot
    (lowered its launcher's limits, left what cannot be wiped, changed its folder), else the machine failed
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
    def __init__(self, line: list[str], folder: Path, wipe: list[str]) -> None:
        """`line`: the slot's bwrap line up to (and with) its `--`; `folder` the slot's (made, owned and moded
        by the pool); `wipe` the folders the launcher empties after every run."""
        self.folder, self.ws, self.io = folder, folder / "ws", folder / "io"
        self.journal = folder.with_name(f"{folder.name}.run")
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control.set_inheritable(False)
        self.broken = ""  # why the slot serves no more
        self.broken_by_run = False  # the run did it (SlotFailed.by_run)
        self._err_r = -1
        err_r, err_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [*line, sys.executable, "-I", slot_launcher.__file__, str(theirs.fileno()), json.dumps({"wipe": wipe})],
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
        """(exit status, timed out); SlotFailed when the slot failed (the run's folder is back either way). Waited
        for on the event loop (slot_wait.py); the renames and links around it are a few system calls, made inline."""
        self._move_in(job)
        ino = os.lstat(self.ws).st_ino
        try:
            done = await self._serve(job, ino)
        except asyncio.CancelledError:
            try:
                self._take_back(job, ino)
            except SlotFailed:  # (retired, said by the slot; the cancel goes on)
                pass
            raise
        except BaseException:
            self._take_back(job, ino)
            raise
        self._take_back(job, ino)
        return done

    def _move_in(self, job: SlotRun) -> None:
        slot_journal.write(self.journal, job.run_dir)
        for real, name in zip(job.io_files, IO_NAMES, strict=True):
            if real:
                os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
                os.link(real, self.io / name, follow_symlinks=False)
        try:
            os.rename(job.run_dir, self.ws)
        except OSError:
            self._unlink_io()
            slot_journal.clear(self.journal)
            raise

    def _unlink_io(self) -> None:
        for name in IO_NAMES:
            try:
                os.unlink(self.io / name)
            except FileNotFoundError:
                pass

    def _take_back(self, job: SlotRun, ino: int) -> None:
        self._unlink_io()
        try:
            same = os.lstat(self.ws).st_ino == ino
            if same:
                os.rename(self.ws, job.run_dir)
        except OSError as exc:
            self.retire(f"the run's folder could not be taken back: {exc}")
            raise SlotFailed(self.broken) from exc
        slot_journal.clear(self.journal)
        left = sorted(os.listdir(self.folder)) + sorted(os.listdir(self.io))
        if not same or left != ["io"]:
            self.retire(f"the slot folder was changed by the run: {left}", by_run=True)
            raise SlotFailed(self.broken, by_run=self.broken_by_run)

    async def _serve(self, job: SlotRun, ino: int) -> tuple[int | None, bool]:
        wait = self._send(job, ino)
        answer = await wait.wait()
        if answer.unclean:
            self.retire(answer.unclean, by_run=True)
        if answer.gone:
            self.retire(answer.gone)
            await self._bwrap_gone()
        if self.broken:
            raise SlotFailed(self.broken, by_run=self.broken_by_run)
        return answer.code, answer.timed_out

    def _send(self, job: SlotRun, ino: int) -> SlotWait:
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
            env = {**job.env, **{k: str(self.io / n) for k, n, real in
                                 zip(("SCARBOOK_TRANSCRIPT", "SCARBOOK_USAGE"), IO_NAMES, job.io_files, strict=True)
                                 if real}, "SCARBOOK_WORKSPACE": str(self.ws)}
            request = json.dumps({"argv": job.argv, "env": env, "cwd": str(self.ws), "ino": ino}).encode()
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
        """The launcher is gone: wait for its bwrap, which reaps its namespace's last process (only then is ws
        renamed back: nothing of the run can write there after). Cancelling does not cut this short."""
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

