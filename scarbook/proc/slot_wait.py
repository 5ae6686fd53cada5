"""A sandbox slot's run waited for on the event loop: proc/slot.py sends the run to the slot's launcher, this
watches it end.

The launcher's answers on the slot's control socket, the program's stdout and stderr pipes and the rest of its
task on stdin are watched through the loop's epoll set (fdwatch.py), as a plain program's are (spawn.py); the
timeout and a cancel signal the program through the pidfd the launcher sends. No thread and no poll loop of its
own: a slot run used to take a trip thread blocked in poll(), and those hand-offs (and the GIL they fought for)
were most of what a slot run cost scarbook beyond `isolation: none`.

The launcher answers once the program and everything of the run is dead (its PID namespace emptied): what the
pipes hold then is read to its end at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import struct
from dataclasses import dataclass

from scarbook.proc.common import KILL_GRACE_S, Sink
from scarbook.proc.fdwatch import PipeReaders, TaskWriter, readers_for

ANSWER_WITHIN_S = 30.0  # the pipes' end once the launcher has answered (it has killed everything of the run)


@dataclass
class Answer:
    """How a slot run ended: the program's exit status (None when the launcher failed), whether its timeout
    killed it, why the launcher cannot serve again ("T" + why: it ended itself), and what it said instead of
    an answer (`gone`: "" when it answered)."""

    code: int | None
    timed_out: bool = False
    unclean: str = ""
    gone: str = ""


class SlotWait:
    """One slot run's traffic on the event loop, from the request sent to the launcher's answer."""

    def __init__(self, control: socket.socket, readers: dict[int, Sink], stdin: tuple[int, memoryview] | None,
                 timeout_s: float) -> None:
        """`readers`: the run's stdout (and stderr) pipes' read ends and their sinks (owned from here); `stdin`:
        the task's part that did not fit in its pipe, and the pipe's write end (non-blocking, owned from here)."""
        self.loop = asyncio.get_running_loop()
        self.control = control
        self.done: asyncio.Future[Answer] = self.loop.create_future()
        self._fds = readers_for(self.loop)
        self._pipes = PipeReaders(self.loop, self._maybe_done)
        self._stdin = TaskWriter(self.loop, *stdin) if stdin is not None else None
        self._pidfd = -1
        self._pending: int | None = None  # a signal due before the pidfd arrived
        self._answer: Answer | None = None
        self._timed_out = False
        self._fds.add(control.fileno(), self._on_control)
        self._watching_control = True
        for fd, sink in readers.items():
            self._pipes.watch(fd, sink)
        self._timers = [self.loop.call_later(timeout_s, self._expire)]

    async def wait(self) -> Answer:
        """The launcher's answer. Cancelled: the program is killed through its pidfd and its answer awaited (the
        run's folder must not be taken back while anything of the run lives), then CancelledError goes on."""
        cancelled = False
        try:
            while not self.done.done():
                try:
                    await asyncio.shield(self.done)
                except asyncio.CancelledError:
                    cancelled = True
                    self._kill_now()
        finally:
            self._close()
        if cancelled:
            raise asyncio.CancelledError
        return self.done.result()

    # the launcher -------------------------------------------------------------------------------
    def _on_control(self) -> None:
        try:
            msg, anc, _flags, _addr = self.control.recvmsg(4096, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
        except BlockingIOError:
            return
        except OSError:
            msg, anc = b"", []
        if msg[:1] == b"P" and anc:
            self._pidfd = struct.unpack("i", anc[0][2][:4])[0]
            if self._pending is not None:
                self._signal(signal.SIGKILL)  # the timeout or a cancel came first
            return
        self._stop_watching_control()
        if msg[:1] == b"X" and len(msg) >= 5:
            unclean = msg[6:].decode(errors="replace") if msg[5:6] == b"T" else ""
            self._answer = Answer(struct.unpack("i", msg[1:5])[0], self._timed_out, unclean)
            self._pipes.read_all()  # everything of the run is dead: the pipes hold all there will be
            if self._pipes:  # (someone else holds a pipe: not the run's output)
                self._timers.append(self.loop.call_later(ANSWER_WITHIN_S, self._drop_pipes))
            self._maybe_done()
            return
        gone = "the slot's launcher is gone" if not msg else f"the slot's launcher answered {msg[:16]!r}"
        self._settle(Answer(None, self._timed_out, gone=gone))

    def _stop_watching_control(self) -> None:
        if self._watching_control:
            self._watching_control = False
            self._fds.remove(self.control.fileno())

    # the program ----------------------------------------------------------------------------------
    def _drop_pipes(self) -> None:
        self._pipes.drop_all()
        self._maybe_done()

    # ending early ---------------------------------------------------------------------------------
    def _expire(self) -> None:
        if self._answer is None:
            self._timed_out = True
            self._signal(signal.SIGTERM)
            self._timers.append(self.loop.call_later(KILL_GRACE_S, self._signal, signal.SIGKILL))

    def _kill_now(self) -> None:
        """Cancelled: the program killed; once answered, the pipes are not waited for."""
        if self._answer is None:
            self._signal(signal.SIGKILL)
        else:
            self._drop_pipes()

    def _signal(self, sig: int) -> None:
        if self._answer is not None:
            return
        if self._pidfd < 0:  # not started yet: killed as soon as its pidfd arrives
            self._pending = sig
            return
        try:
            signal.pidfd_send_signal(self._pidfd, sig)
        except ProcessLookupError:
            pass

    # the end ----------------------------------------------------------------------------------------
    def _maybe_done(self) -> None:
        if self._answer is not None and not self._pipes:
            self._settle(self._answer)

    def _settle(self, answer: Answer) -> None:
        if not self.done.done():
            self.done.set_result(answer)

    def _close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._stop_watching_control()
        self._pipes.drop_all()
        if self._stdin is not None:
            self._stdin.close()
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1

