"""Tags that tie a process to the run (and the project) that started it, the stale sweep, and the
ways a program dies with scarbook.

Every program scarbook starts carries `SCARBOOK_RUN_TAG=<project>:<pid>.<start time>.<n>` in its
environment: the project's tag (a digest of its folder, handed in as `$SCARBOOK_PROJECT` by the run;
empty outside a session), then the pid and start time of this scarbook process (so a reused pid is not
taken for the scarbook that ran it). What a run leaves behind while scarbook lives is reaped by
proc/reaper.py.

If scarbook itself is killed (SIGKILL, OOM), nothing of that runs. So on Linux each program it
starts dies with it: its process group is handed to the watchdog (proc/watchdog.py), which SIGKILLs it
when scarbook's pipe to it closes (or PR_SET_PDEATHSIG: `dying_with_parent`), and a session's start
kills the processes still carrying the tag of a scarbook process that is gone *and this project's
tag* (`kill_stale`): the grandchildren that had left the group. Another project's leftovers are that
project's to sweep (its next session does), never this one's.

Limits (the README's threat model says them): a leftover that re-executes itself with the tag
removed from its environment is not recognised; where there is no subreaper (macOS, Windows) a
process that left the group is not found at all, and a program outlives a killed scarbook (no
PR_SET_PDEATHSIG: `die_with_parent` is None). The sandbox's PID namespace has neither hole.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import os
import shutil
import signal
import sys
from collections.abc import Callable

from scarbook.proc import watchdog

TAG_VAR = "SCARBOOK_RUN_TAG"
PROJECT_VAR = "SCARBOOK_PROJECT"
PR_SET_PDEATHSIG = 1

_serial = itertools.count(1)
_prctl: Callable[..., int] | None = None
_setpriv: str | None = None  # "" once looked up and not found


def _start_time(pid: int | str) -> str | None:
    """The process's start time (clock ticks after boot, /proc/PID/stat field 22), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


_STAMP = (_start_time(os.getpid()) if sys.platform == "linux" else None) or "0"


def new_tag(project: str = "") -> str:
    """A tag unique to one program start: `project`'s tag, then this scarbook process (pid, start time)."""
    return f"{project}:{session_prefix()}{next(_serial)}"


def owner_part(tag: str) -> str:
    """The part of a run tag after its project: `<pid>.<start time>.<n>`."""
    return tag.rpartition(":")[2]


def project_tag(root: os.PathLike | str) -> str:
    """The tag of the project at `root` (its resolved folder, digested): what `kill_stale` sweeps."""
    return hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:16]


def session_prefix() -> str:
    if sys.platform == "linux" and _STAMP == "0":  # (a fork: its own pid, its own start)
        return f"{os.getpid()}.{_start_time(os.getpid()) or '0'}."
    return f"{os.getpid()}.{_STAMP}."


def libc_prctl() -> Callable[..., int] | None:
    """Linux's prctl(2) through ctypes (looked up once); None elsewhere."""
    global _prctl
    if sys.platform != "linux":
        return None
    if _prctl is None:
        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return None
    return _prctl


def die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn that has the started program killed (SIGKILL) when scarbook dies, however it
    dies (Linux: prctl PR_SET_PDEATHSIG); None where there is none (macOS, Windows), and the program
    is started without it. It runs between fork and exec: prctl is looked up here, beforehand."""
    prctl = libc_prctl()
    if prctl is None:
        return None
    parent, kill = os.getpid(), int(signal.SIGKILL)

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:  # scarbook died before the prctl took: do not run on without it
            os._exit(1)

    return hook


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


def kill_stale(project: str) -> list[str]:
    """Kill (SIGKILL) every process whose run tag names `project` (`project_tag`) and a scarbook
    process that is no longer running — the agents and grandchildren of a scarbook that was killed
    while it ran this project — and say each ("pid 123 (sleep)"). What another project's scarbook
    left is not touched. Linux only (/proc); elsewhere nothing is found. It reads every process's
    environment: call it off the event loop, once per session."""
    if sys.platform != "linux" or not project:
        return []
    killed = []
    needle = f"\0{TAG_VAR}={project}:".encode()
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
