"""A sandbox slot's PID 1: runs one program at a time for scarbook, then leaves the slot as it found it.

    python -I scarbook/proc/slot_launcher.py CONTROL_FD CONFIG_JSON

Started once per slot inside its bwrap (`--as-pid-1`, no capability: agents/slots.py), not once per run.
Per request on CONTROL_FD (a SOCK_SEQPACKET unix socket: JSON {argv, env, cwd, ino} and the run's
stdin/stdout/stderr as SCM_RIGHTS): enter `cwd` (checked to be the inode the host sent), posix_spawn the
program (setsid, exactly `env`), send back a pidfd of it ("P"; the host's timeout and cancel signal it),
reap until the program is gone, kill(-1) and reap until ECHILD (every orphan of the slot is PID 1's), wipe
what a run can leave in the slot's namespaces (CONFIG_JSON's folders, SysV IPC, keyrings), and answer
"X" + the exit status (the code, or 128+N after signal N, as bwrap reports it) + "T" and why, when the slot
cannot serve again (not wiped, or its PID 1's priority, limits or affinity lowered by the run: nothing without
a capability can raise them back); then it ends, and the host replaces the slot.

Standard library only; run with `python -I` (nothing of the project's or the user's is imported).
"""

from __future__ import annotations

import array
import ctypes
import errno
import json
import os
import resource
import signal
import socket
import stat
import struct
import sys

PR_SET_DUMPABLE = 4
KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 7, 22
KEYRINGS = (-3, -4, -5)  # session, user, user-session
IPC_RMID = 0
# The syscalls Python has no call for, by architecture (no other gets a slot: agents/slots.py asks
# `supported` first, and runs one bwrap per run there).
SYSCALLS = {
    "x86_64": {"keyctl": 250, "ioprio_get": 252},
    "aarch64": {"keyctl": 219, "ioprio_get": 31},
}


def supported(machine: str) -> bool:
    return machine in SYSCALLS


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _remove(path: str) -> None:
    """Remove what a run left, whatever modes it set."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    os.chmod(path, 0o700)
    with os.scandir(path) as entries:
        names = [e.path for e in entries]
    for name in names:
        _remove(name)
    os.rmdir(path)


class Launcher:
    def __init__(self, control_fd: int, config: dict) -> None:
        self.libc = _libc()
        self.calls = SYSCALLS[os.uname().machine]
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no ptrace, no /proc/1/environ or fd by the runs
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as PID 1 a signal without a handler is dropped
        self.control = socket.socket(fileno=control_fd)
        self.control.set_inheritable(False)
        # path -> (mode, atime, mtime) as the slot's start left it, or None for a mount point (never entered)
        self.skeleton: dict[str, tuple[int, int, int] | None] = {}
        self.roots = [r for r in config["wipe"] if os.path.isdir(r)]
        for root in self.roots:
            self._remember(root, os.lstat(root).st_dev)
        self.start = self._attributes()
        os.chdir("/")

    def _attributes(self) -> tuple:
        """What a run of the same uid can lower in its PID 1 and nothing without a capability can raise back."""
        limits = tuple(resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_"))
        return (os.getpriority(os.PRIO_PROCESS, 0), limits, os.sched_getscheduler(0), sorted(os.sched_getaffinity(0)),
                self.libc.syscall(self.calls["ioprio_get"], 1, 0))  # IOPRIO_WHO_PROCESS, itself

    def serve(self) -> None:
        self.control.send(b"R")  # ready: the host's first run waits for this, not for a timeout
        while True:
            fds = array.array("i")
            msg, anc, _flags, _addr = self.control.recvmsg(1 << 20, socket.CMSG_SPACE(3 * fds.itemsize),
                                                           socket.MSG_CMSG_CLOEXEC)
            for _level, _kind, data in anc:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            if not msg:
                return
            code, unclean = self.run(json.loads(msg), list(fds))
            if not unclean and self._attributes() != self.start:
                unclean = "the run lowered the launcher's priority, limits, scheduling or CPU affinity"
            self.control.send(b"X" + struct.pack("i", code) + (b"T" + unclean.encode() if unclean else b""))
            if unclean:
                return

    def run(self, request: dict, fds: list[int]) -> tuple[int, str]:
        """The program's exit status, and why the slot is not as it was at its start ("": it is)."""
        argv, env = request["argv"], request["env"]
        try:
            try:
                os.chdir(request["cwd"])
                if os.stat(".").st_ino != request["ino"]:
                    raise OSError(errno.ESTALE, "the slot does not see the run's folder")
                child = os.posix_spawn(_find(argv[0], env), argv, env, setsid=True,
                                       file_actions=[(os.POSIX_SPAWN_DUP2, fds[i], i) for i in range(3)])
            finally:
                os.chdir("/")
        except OSError as exc:
            os.write(fds[2], f"scarbook slot: {argv[0]}: {exc.strerror}\n".encode())
            for fd in fds:
                os.close(fd)
            return 127, ""
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(child)
        self.control.sendmsg([b"P"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [pidfd]))])
        os.close(pidfd)
        while True:  # the run's orphans come here too: reaped until the program itself is
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                break
        code = os.waitstatus_to_exitcode(status)
        code = code if code >= 0 else 128 - code
        kill_the_rest()
        try:
            self.wipe()
        except (OSError, RecursionError) as exc:  # (a tree too deep to remove): the slot is retired
            return code, f"the run left what the launcher could not wipe ({exc})"
        return code, ""

    def _remember(self, path: str, dev: int) -> None:
        st = os.lstat(path)
        if st.st_dev != dev:
            self.skeleton[path] = None
            return
        self.skeleton[path] = (stat.S_IMODE(st.st_mode), st.st_atime_ns, st.st_mtime_ns)
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(path) as entries:
                for entry in entries:
                    self._remember(entry.path, dev)

    def _clean(self, path: str) -> None:
        """`path` back as the slot's start left it: what a run added removed; its mode, times and no xattr."""
        mode, atime, mtime = self.skeleton[path] or (0, 0, 0)
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, mode | 0o700)
            with os.scandir(path) as entries:
                found = [e.path for e in entries]
            for name in found:
                if name not in self.skeleton:
                    _remove(name)
                elif self.skeleton[name] is not None:
                    self._clean(name)
        try:
            attrs = os.listxattr(path)
        except OSError:  # (a file system without them)
            attrs = []
        for attr in attrs:
            os.removexattr(path, attr)
        os.chmod(path, mode)
        os.utime(path, ns=(atime, mtime))

    def wipe(self) -> None:
        for root in self.roots:
            self._clean(root)
        libc = self.libc
        for kind, remove in (("shm", lambda i: libc.shmctl(i, IPC_RMID, None)),
                             ("msg", lambda i: libc.msgctl(i, IPC_RMID, None)),
                             ("sem", lambda i: libc.semctl(i, 0, IPC_RMID))):
            with open(f"/proc/sysvipc/{kind}") as fh:
                for line in fh.readlines()[1:]:
                    remove(int(line.split()[1]))
        # the persistent keyring first: cleared while linked from the session keyring (possessed), then that
        keyctl = self.calls["keyctl"]
        persistent = libc.syscall(keyctl, KEYCTL_GET_PERSISTENT, -1, ctypes.c_long(-3))
        for ring in (persistent, *KEYRINGS):
            if ring != -1:
                libc.syscall(keyctl, KEYCTL_CLEAR, ctypes.c_long(ring))


def _find(program: str, env: dict) -> str:
    if "/" in program:
        return program
    for folder in env.get("PATH", os.defpath).split(":"):
        path = os.path.join(folder, program)
        if os.access(path, os.X_OK):
            return path
    return program


def kill_the_rest() -> None:
    while True:  # a process forked while kill(-1) walked the list is killed by the next one
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


if __name__ == "__main__":
    Launcher(int(sys.argv[1]), json.loads(sys.argv[2])).serve()
