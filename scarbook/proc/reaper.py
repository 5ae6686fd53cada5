"""What a run leaves behind, killed and reaped without a scan: scarbook is the child subreaper while
unconfined programs run.

A program's process group is killed when it exits (spawn.py), but a descendant that left the group
(setsid: a daemon) is not in it. While an unconfined program runs, scarbook is a child subreaper
(Linux, prctl PR_SET_CHILD_SUBREAPER): a descendant whose parent exits becomes scarbook's child
instead of init's. The kernel hands such an orphan to the subreaper's first living thread — the main
thread — so once a program has exited, one read of /proc/<pid>/task/<pid>/children lists every orphan
there can be. Children that are running programs (`leaders`), scarbook's own watchdog, and those
already found to be none of ours are known; when nothing else is there (the usual case) that read is
the whole cost of a run's sweep, however many runs came before. Otherwise, on a thread of its own
(never the event loop), each unknown child is looked at: one in scarbook's own session is a
library's (git, Ray) and left alone; a live one carrying the ended run's tag is killed and reaped,
then what it leaves in turn; a zombie of the run's process group is reaped, and so is any other
zombie outside scarbook's session once every program that was being started when it was seen has
its pid known (a program that exited at once is a zombie before its starter knows its pid: reaping it
would steal its exit status). A child that is exiting — its memory gone, so its tag unreadable, but
not yet a zombie — is waited for (its pidfd) and then reaped as a zombie: bwrap's namespace init is
one, orphaned while it still waits for the sandbox's last processes to die.

A sandboxed program needs none of it: its PID namespace ends with it. The subreaper is on only while
unconfined programs run (a count), so in a sandboxed session no orphan is handed to scarbook at all
(bwrap's namespace init, orphaned when bwrap's outer process exits first, used to become a zombie
child of scarbook per run). A sandboxed run that ended while the subreaper was on is swept like an
unconfined one, which reaps that init.

Where there is no subreaper (macOS, Windows) or no children list, nothing is found, and a process that
left the group outlives its run (the README's threat model says so).
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from scarbook.proc import watchdog
from scarbook.proc.leftovers import TAG_VAR, libc_prctl, owner_part, session_prefix

PR_SET_CHILD_SUBREAPER = 36
SWEEP_ROUNDS = 64  # an orphan's orphans: each round kills one more generation
WAIT_S = 5.0  # at most, for an exiting child to become a zombie, or for the programs being started to be known

leaders: dict[int, str] = {}  # pid -> run tag of the programs running now (never leftovers)
_lock = threading.Condition()  # leaders, _starting, the known children, the subreaper: the loop registers, a sweep thread reaps
_starting: set[Run] = set()  # programs being started (spawned, not yet `started`): a zombie may be one of them
_library: set[int] = set()  # children in scarbook's own session: a library's, reaped by it
_foreign: set[int] = set()  # live orphans without this scarbook's tag: looked at again by `sweep_all`
_unconfined = 0  # unconfined programs running: the subreaper is on while there are any
_on = False
_epoch = 0  # times the subreaper was turned on (a sandboxed run asks whether it was, meanwhile)
_sweeper: tuple[int, ThreadPoolExecutor] | None = None  # (owner pid, its one thread)
_NEEDLE = f"\0{TAG_VAR}=".encode()


class Run:
    """One program as the reaper follows it: made just before the spawn, `started` with its pid (or
    `not_started`), `ended` once the program is reaped, then `sweep_soon` (or `settle`), which closes
    it when the sweep is done."""

    __slots__ = ("tag", "confined", "pid", "_epoch", "_was_on", "_running", "_closed")

    def __init__(self, tag: str, *, confined: bool) -> None:
        self.tag, self.confined, self.pid = tag, confined, 0
        self._closed = self._running = False
        if not confined:
            _count_unconfined(+1)  # on before the spawn: an orphan can appear at once
        with _lock:
            _starting.add(self)
            self._epoch, self._was_on = _epoch, _on

    def started(self, pid: int) -> None:
        """The program runs: never a leftover; its group dies with scarbook (the watchdog, where it
        is the way)."""
        self.pid, self._running = pid, True
        with _lock:
            self._unpend()
            leaders[pid] = self.tag
        if watchdog.available():  # (started by dying_with_parent's question already: no second start)
            watchdog.watch(pid)

    def not_started(self) -> None:
        with _lock:
            self._unpend()
        self.close()

    def ended(self) -> None:
        """The program has exited and been reaped."""
        if not self._running:
            return
        self._running = False
        with _lock:
            leaders.pop(self.pid, None)
        watchdog.unwatch(self.pid)

    def sweep_soon(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future | None:
        """After `ended`: None when nothing can be left (a sandboxed run while the subreaper was off:
        no read at all; otherwise one read of the main thread's children list finds no unknown
        child), else the sweep running on the reaper's thread. The run is closed when it is done."""
        if self._may_have_orphans() and _unknown_children():
            done = loop.run_in_executor(_executor(), self.sweep)
            done.add_done_callback(lambda _: self.close())
            return done
        self.close()
        return None

    async def settle(self) -> None:
        """`sweep_soon`, waited for."""
        sweeping = self.sweep_soon(asyncio.get_running_loop())
        if sweeping is not None:
            await asyncio.shield(sweeping)

    def sweep(self) -> list[int]:
        """Kill and reap what this run left; returns the pids killed. Blocking: a thread's work."""
        return _sweep(self.tag.__eq__, self.pid)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if not self.confined:
                _count_unconfined(-1)

    def _may_have_orphans(self) -> bool:
        return self._was_on or _on or _epoch != self._epoch

    def _unpend(self) -> None:  # (under _lock)
        _starting.discard(self)
        _lock.notify_all()


def sweep_all() -> list[int]:
    """Kill and reap whatever this scarbook's finished runs left (a session's end, a Ray task's): any
    orphan carrying one of its tags but a running program's. Returns the pids killed."""
    if _epoch == 0:
        return []  # the subreaper was never on: no orphan was ever handed to this process
    prefix = session_prefix()
    with _lock:
        running = set(leaders.values())
        _foreign.clear()  # (one may have died since: a zombie to reap)
    return _sweep(lambda tag: owner_part(tag).startswith(prefix) and tag not in running, None)


def subreaper_on() -> bool:
    return _on


def _count_unconfined(delta: int) -> None:
    global _unconfined, _on, _epoch
    with _lock:
        _unconfined += delta
        want = _unconfined > 0
        if want != _on and _set_subreaper(want):
            _on = want
            _epoch += want


def _set_subreaper(on: bool) -> bool:
    prctl = libc_prctl() if sys.platform == "linux" else None
    return prctl is not None and prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


def _unknown_children() -> set[int]:
    """Children of this process that are not running programs, the watchdog, or known to be a
    library's: orphans handed to the subreaper (or a library's child not looked at yet)."""
    kids = _main_children()
    if not kids:
        return kids
    with _lock:
        _library.intersection_update(kids)  # (a pid that went may come back as someone else)
        _foreign.intersection_update(kids)
        unknown = kids - leaders.keys() - _library - _foreign
    unknown.discard(watchdog.pid() or 0)
    return unknown


def _main_children() -> set[int]:
    """The children of this process's main thread, where the kernel hands every orphan."""
    pid = os.getpid()
    try:
        fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY)
    except OSError:  # not Linux, or a kernel without the list: nothing can be found
        return set()
    try:
        data = b""
        while chunk := os.read(fd, 1 << 16):
            data += chunk
    except OSError:
        return set()
    finally:
        os.close(fd)
    return {int(p) for p in data.split()}


def _sweep(ours: Callable[[str], bool], group: int | None) -> list[int]:
    own_session = os.getsid(0)
    killed: list[int] = []
    for _ in range(SWEEP_ROUNDS):
        dying: list[int] = []
        reaped = exiting = False
        for pid in _unknown_children():
            stat = _stat(pid)
            if stat is None:
                continue  # gone meanwhile
            state, pgid, sid, has_memory = stat
            if sid == own_session:  # a library's child (started without a session of its own)
                _known(_library, pid)
            elif state in ("Z", "X"):
                reaped |= _reap_zombie(pid, group in (pgid, sid))
            elif not has_memory:  # exiting: a zombie soon, reaped in the next round
                exiting |= _wait_exit(pid)
            else:
                tag = _tag_of(pid)
                if tag is None:  # not ours to read, or exiting since its stat was read
                    if _exiting(pid):
                        exiting |= _wait_exit(pid)
                elif ours(tag):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    dying.append(pid)
                elif not owner_part(tag).startswith(session_prefix()):
                    _known(_foreign, pid)  # none of this scarbook's (another's, or none at all: "")
        for pid in dying:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        killed += dying
        if not dying and not reaped and not exiting:
            break
    return killed


def _reap_zombie(pid: int, of_the_run: bool) -> bool:
    """Reap a zombie orphan: one of the run's group for sure; any other once every program being
    started now is known (a program that exited at once is a zombie before its starter knows its
    pid): not one of them, it is an orphan. Left for a later sweep if that takes over WAIT_S."""
    with _lock:
        starting = set(_starting)
        if not of_the_run and not _lock.wait_for(lambda: pid in leaders or starting.isdisjoint(_starting), WAIT_S):
            return False
        if pid in leaders:
            return False
        try:
            return os.waitpid(pid, os.WNOHANG)[0] == pid
        except ChildProcessError:
            return False


def _exiting(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and (stat[0] in ("Z", "X") or not stat[3])


def _wait_exit(pid: int) -> bool:
    """Wait (WAIT_S at most) until an exiting child is a zombie; False if it could not be waited for."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # gone already, or a kernel without pidfds: a later sweep's
        return False
    try:
        return bool(select.select([fd], [], [], WAIT_S)[0])
    finally:
        os.close(fd)


def _known(kind: set[int], pid: int) -> None:
    with _lock:
        kind.add(pid)


def _stat(pid: int) -> tuple[str, int, int, bool] | None:
    """(state, process group, session, whether it still has its memory) of `pid`: a process without
    memory (vsize 0) that is no zombie yet is exiting."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[2]), int(fields[3]), fields[20] != b"0"
    except (OSError, IndexError, ValueError):
        return None


def _tag_of(pid: int) -> str | None:
    """The run tag in `pid`'s environment: "" for none; None when it cannot be read (exiting, or not
    ours to read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = b"\0" + fh.read()
    except OSError:
        return None
    if environ == b"\0":
        return None  # exiting: its memory is gone already
    at = environ.find(_NEEDLE)
    if at < 0:
        return ""
    return environ[at + len(_NEEDLE):].split(b"\0", 1)[0].decode("ascii", "replace")


def _executor() -> ThreadPoolExecutor:
    """The reaper's one thread (one per process: a forked child makes its own)."""
    global _sweeper
    if _sweeper is None or _sweeper[0] != os.getpid():
        _sweeper = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="scarbook-reaper"))
    return _sweeper[1]
