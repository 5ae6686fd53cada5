"""One sandbox slot, the host's side: a bwrap started once, whose PID 1 (proc/slot_launcher.py) runs one
program at a time in the slot's folder (agents/slots.py builds the line and keeps the pool).

A run (`Slot.run`, blocking: on a trip thread): the run's folder is renamed to <slot>/ws — the slot's
bwrap binds <slot>, and a bind follows the dentry, so the rename is seen inside — its io files
($SCARBOOK_TRANSCRIPT, $SCARBOOK_USAGE) linked into <slot>/io, a journal link says where ws belongs
(slot_journal.py: a SIGKILLed scarbook puts it back at its next start), argv, env and the run's
stdin/stdout/stderr go to the launcher, and the pipes and the control socket are polled until it
answers. A timeout or a cancel signals the agent through the pidfd the launcher sent. Then ws is renamed
back and checked (the same inode; the slot folder empty again).

A slot whose launcher died, answered something else, or could not leave the slot as it found it raises
`SlotFailed` naming why: the run is the machine's error, its folder is back, the slot is not used again.

bwrap's --die-with-parent (PR_SET_PDEATHSIG) follows the THREAD that started it: each slot is started on
a thread of its own that lives as long as the slot (slot_pool.py), never on a trip thread.
"""

from __future__ import annotations

import array
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scarbook.proc import slot_journal, slot_launcher
from scarbook.proc.common import KILL_GRACE_S, READ_CHUNK, Sink

READY_WITHIN_S = 30.0  # a slot's start: bwrap and the launcher's Python (~0.1 s; a loaded machine takes longer)
ANSWER_WITHIN_S = 30.0  # the launcher's answer once its program is gone (a kill and a wipe)
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

    def run(self, job: SlotRun, wake: int) -> tuple[int | None, bool]:
        """(exit status, timed out); SlotFailed when the slot failed (the run's folder is back either way)."""
        self._move_in(job)
        ino = os.lstat(self.ws).st_ino
        try:
            return self._serve(job, ino, wake)
        finally:
            self._take_back(job, ino)

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

    def _serve(self, job: SlotRun, ino: int, wake: int) -> tuple[int | None, bool]:
        mine: list[int] = []
        try:
            out_r, out_w = os.pipe()
            mine += [out_r, out_w]
            err_r, err_w = (os.pipe() if job.on_stderr is not None else (-1, out_w))
            if err_r >= 0:
                mine += [err_r, err_w]
            in_r, in_w = os.pipe() if job.stdin_data else (os.open(os.devnull, os.O_RDONLY), -1)
            mine += [fd for fd in (in_r, in_w) if fd >= 0]
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
            for fd in {in_r, out_w, err_w}:
                os.close(fd)
                mine.remove(fd)
            readers = {out_r: job.on_stdout, **({err_r: job.on_stderr} if err_r >= 0 and job.on_stderr else {})}
            if in_w >= 0:
                mine.remove(in_w)  # the exchange's from here: it closes it once the task is written
            return _Exchange(self, readers, in_w, job.stdin_data or b"", job.timeout_s, wake).wait()
        finally:
            for fd in mine:
                os.close(fd)

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


class _Exchange:
    """One run's traffic: the launcher's answers, the program's pipes, the task on stdin, the deadline."""

    def __init__(self, slot: Slot, readers: dict[int, Sink], in_w: int, task: bytes, timeout_s: float,
                 wake: int) -> None:
        self.slot, self.readers, self.wake = slot, readers, wake
        self.in_w, self.task = in_w, memoryview(task)
        self.deadline = time.monotonic() + timeout_s
        self.pidfd = -1
        self.timed_out = False
        self.kill_at: float | None = None  # SIGTERM sent: SIGKILL then
        self.code: int | None = None

    def wait(self) -> tuple[int | None, bool]:
        poll = select.poll()
        control = self.slot.control.fileno()
        poll.register(control, select.POLLIN)
        poll.register(self.wake, select.POLLIN)
        for fd in self.readers:
            poll.register(fd, select.POLLIN)
        if self.in_w >= 0:
            os.set_blocking(self.in_w, False)
            poll.register(self.in_w, select.POLLOUT)
        try:
            while self.code is None or self.readers:
                if self.code is not None:  # answered: everything of the run is dead, the pipes end now
                    wait = ANSWER_WITHIN_S * 1000
                else:
                    wait = max(0.0, min(self.deadline, self.kill_at or self.deadline) - time.monotonic()) * 1000
                ready = dict(poll.poll(wait))
                if not ready and self.code is not None:
                    break
                self._stop_if_due()
                if ready.get(self.wake):
                    poll.unregister(self.wake)
                    self._signal(signal.SIGKILL)
                for fd in [fd for fd in ready if fd in self.readers]:
                    self._read(fd, poll)
                if self.in_w >= 0 and ready.get(self.in_w):
                    self._write(poll)
                if ready.get(control):
                    self._answer(poll, control)
        finally:
            if self.pidfd >= 0:
                os.close(self.pidfd)
            if self.in_w >= 0:
                os.close(self.in_w)
        if self.slot.broken:
            raise SlotFailed(self.slot.broken, by_run=self.slot.broken_by_run)
        return self.code, self.timed_out

    def _stop_if_due(self) -> None:
        now = time.monotonic()
        if self.code is None and not self.timed_out and now >= self.deadline:
            self.timed_out = True
            self._signal(signal.SIGTERM)
            self.kill_at = now + KILL_GRACE_S
        elif self.kill_at is not None and now >= self.kill_at:
            self._signal(signal.SIGKILL)
            self.kill_at = None

    def _signal(self, sig: int) -> None:
        if self.pidfd >= 0:
            try:
                signal.pidfd_send_signal(self.pidfd, sig)
            except ProcessLookupError:
                pass
        elif sig == signal.SIGKILL:  # not started yet: killed as soon as its pidfd arrives
            self.kill_at = 0.0

    def _read(self, fd: int, poll: select.poll) -> None:
        data = os.read(fd, READ_CHUNK)
        if data:
            self.readers[fd](data)
            return
        poll.unregister(fd)
        del self.readers[fd]

    def _write(self, poll: select.poll) -> None:
        try:
            self.task = self.task[os.write(self.in_w, self.task):]
        except BlockingIOError:
            return
        except OSError:  # the program closed its stdin before reading all of the task
            self.task = memoryview(b"")
        if not self.task:
            poll.unregister(self.in_w)
            os.close(self.in_w)
            self.in_w = -1

    def _answer(self, poll: select.poll, control: int) -> None:
        msg, anc, _flags, _addr = self.slot.control.recvmsg(4096, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
        if msg[:1] == b"P" and anc:
            self.pidfd = struct.unpack("i", anc[0][2][:4])[0]
            if self.kill_at == 0.0 or self.timed_out:
                self._signal(signal.SIGKILL)
            return
        if msg[:1] == b"X" and len(msg) >= 5:
            self.code = struct.unpack("i", msg[1:5])[0]
            poll.unregister(control)
            if msg[5:6] == b"T":
                self.slot.retire(msg[6:].decode(errors="replace"), by_run=True)
            return
        why = "the slot's launcher is gone" if not msg else f"the slot's launcher answered {msg[:16]!r}"
        self.slot.retire(why)
        try:  # its namespace's last process is gone once bwrap has reaped it: only then is ws renamed back
            self.slot.proc.wait(ANSWER_WITHIN_S)
        except subprocess.TimeoutExpired:
            pass
        raise SlotFailed(why)
