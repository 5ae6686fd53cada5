"""Processes a run left behind: found after the run's program exits, and killed.

Killing the program's process group catches children that stayed in it. A child that called
`setsid` (a double fork, a daemon) leaves the group; on Linux scarbook becomes a child subreaper
(prctl PR_SET_CHILD_SUBREAPER), so such a process, once its parent exits, becomes a child of
scarbook instead of init. Every program scarbook starts carries a tag in its environment
(`SCARBOOK_RUN_TAG`); a child of scarbook that scarbook did not start itself and whose environment
holds a run's tag is a leftover of that run, and is killed and reaped.

If scarbook itself is killed (SIGKILL, OOM), nothing of that runs. So on Linux each program it
starts dies with it: its process group is handed to the watchdog (proc/watchdog.py), which SIGKILLs it
when scarbook's pipe to it closes (or PR_SET_PDEATHSIG: `dying_with_parent`), and a session's start
kills the processes still carrying the tag of a scarbook process that is gone (`kill_stale`): the
grandchildren that had left the group. A tag is `<pid>.<start time>.<n>`, so a reused pid is not
taken for the scarbook that ran them.

Limits (the README's threat model says them): a leftover that re-executes itself with the tag
removed from its environment is not recognised, and where there is no subreaper (macOS, Windows)
a process that left the group is not found at all; there, a program outlives a killed scarbook
(no PR_SET_PDEATHSIG: `die_with_parent` is None). The sandbox's PID namespace has neither hole.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import shutil
import signal
import sys
from collections.abc import Callable

from scarbook.proc import watchdog

TAG_VAR = "SCARBOOK_RUN_TAG"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_serial = itertools.count(1)
_subreaper: bool | None = None
_prctl: Callable[..., int] | None = None
_setpriv: str | None = None  # "" once looked up and not found
leaders: set[int] = set()  # pids of the programs scarbook is running now (never leftovers)


def _start_time(pid: int | str) -> str | None:
    """The process's start time (clock ticks after boot, /proc/PID/stat field 22), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


_STAMP = (_start_time(os.getpid()) if sys.platform == "linux" else None) or "0"


def new_tag() -> str:
    """A tag unique to one program start; the prefix names this scarbook process (pid, start time)."""
    return f"{session_prefix()}{next(_serial)}"


def session_prefix() -> str:
    if sys.platform == "linux" and _STAMP == "0":  # (a fork: its own pid, its own start)
        return f"{os.getpid()}.{_start_time(os.getpid()) or '0'}."
    return f"{os.getpid()}.{_STAMP}."


def die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the started program killed (SIGKILL) when scarbook dies, however it
    dies (Linux: prctl PR_SET_PDEATHSIG); None where there is none (macOS, Windows), and the program
    is started without it. It runs between fork and exec: prctl is looked up here, beforehand."""
    global _prctl
    if sys.platform != "linux":
        return None
    if _prctl is None:
        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return None
    prctl, parent, kill = _prctl, os.getpid(), int(signal.SIGKILL)

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:  # scarbook died before the prctl took: do not run on without it
            os._exit(1)

    return hook


def started(pid: int) -> None:
    """A program scarbook started (the leader of its own process group) is running: never a
    leftover, and its group dies with scarbook (the watchdog, where it is the way)."""
    leaders.add(pid)
    if watchdog.available():  # (started by dying_with_parent's question already: no second start)
        watchdog.watch(pid)


def ended(pid: int) -> None:
    leaders.discard(pid)
    watchdog.unwatch(pid)


def dying_with_parent(argv: list[str], *, cwd, env: dict[str, str]) -> tuple[list[str], Callable[[], None] | None]:
    """`argv` and the preexec_fn to start it with so that it dies (SIGKILL) with scarbook.

    On Linux the default is neither: the program starts plainly and `started` hands its process group
    to the watchdog (proc/watchdog.py), which kills it if scarbook dies; SCARBOOK_PDEATHSIG=setpriv or
    =preexec picks the ways below. A preexec_fn makes Python fork the whole scarbook process and run Python in the child before the
    exec: 17-20 ms a start against ~2 ms for the vfork it otherwise uses (measured with the CLI's
    modules loaded, 200 starts of `true`). So on Linux the program is started through util-linux's
    `setpriv --pdeathsig KILL` instead, which sets the same PR_SET_PDEATHSIG and execs it: no
    preexec_fn. setpriv is used only when it exists and `argv[0]` resolves (by the child's PATH, from
    its cwd) to an executable file; otherwise, or with SCARBOOK_PDEATHSIG=preexec, the preexec_fn
    (`die_with_parent`), so a program that cannot start fails exactly as it always did (Popen's
    FileNotFoundError / PermissionError, never setpriv's exit status)."""
    if argv[1:3] == ["--unshare-all", "--die-with-parent"]:
        return argv, None  # the sandbox's bwrap line (agents/sandbox.py) does it itself: no setpriv exec
    if watchdog.available():
        return argv, None  # the watchdog kills its group (`started`): no exec, no hook
    hook = die_with_parent()
    if hook is None or os.environ.get("SCARBOOK_PDEATHSIG") == "preexec":
        return argv, hook
    global _setpriv
    if _setpriv is None:
        _setpriv = shutil.which("setpriv") or ""
    program = argv[0] if argv else ""
    if os.sep in program and not os.path.isabs(program):
        program = os.path.join(os.fspath(cwd or "."), program)
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if not _setpriv or found is None or not _execs(found):
        return argv, hook
    return [_setpriv, "--pdeathsig", "KILL", "--", *argv], None


def _execs(path: str) -> bool:
    """Whether execve would run `path`: a binary, or a script whose #! interpreter is executable (a
    script without #!, or with a missing interpreter, is left to Popen and its own error)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return False
    if head.startswith(b"\x7fELF"):
        return True
    if not head.startswith(b"#!"):
        return False
    interpreter = head[2:].split(b"\n", 1)[0].strip().split(maxsplit=1)
    return bool(interpreter) and os.access(interpreter[0], os.X_OK) and os.path.isfile(interpreter[0])


def kill_stale() -> list[str]:
    """Kill (SIGKILL) every process whose environment carries the run tag of a scarbook process that
    is no longer running — the agents and grandchildren of a scarbook that was killed — and say each
    ("pid 123 (sleep)"). Linux only (/proc); elsewhere nothing is found."""
    if sys.platform != "linux":
        return []
    killed = []
    needle = f"\0{TAG_VAR}=".encode()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                environ = b"\0" + fh.read()
        except OSError:  # gone, or not ours to read (another user's): not ours to kill
            continue
        at = environ.find(needle)
        if at < 0:
            continue
        tag = environ[at + len(needle):].split(b"\0", 1)[0].decode("ascii", "replace").split(".")
        owner, stamp = tag[0], tag[1] if len(tag) > 2 else None
        if not owner.isdigit() or int(pid) == os.getpid():
            continue
        alive = _start_time(owner)
        if alive is not None and (stamp is None or stamp == alive):
            continue  # its scarbook runs (a session of its own, maybe another user's): not stale
        name = _comm(pid)
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed.append(f"pid {pid} ({name})")
    return killed


def _comm(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", "rb") as fh:
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def become_subreaper() -> bool:
    """Make this process the reaper of orphans it started (Linux); once per process."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform == "linux":
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                _subreaper = False
    return _subreaper


def kill_leftovers(tag_prefix: str) -> list[int]:
    """Kill (SIGKILL) and reap every child of this process whose environment holds a tag starting
    with `tag_prefix` (one run's tag, or `session_prefix()` for all of them). Returns their pids."""
    if not _subreaper:
        return []
    needle = f"\0{TAG_VAR}={tag_prefix}".encode()
    killed = []
    for pid in _children():
        if pid in leaders:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                environ = b"\0" + fh.read()
        except OSError:  # gone, or a zombie already: nothing runs
            continue
        if needle not in environ:
            continue  # a child of some library (git, a Ray worker): not ours to kill
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            continue
        killed.append(pid)
    return killed


def _children() -> list[int]:
    """This process's children, from every thread's /proc children list (an orphan is handed to
    one of the subreaper's threads)."""
    pids: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                pids.extend(int(p) for p in fh.read().split())
        except OSError:
            continue
    return pids
