"""A sandbox slot's PID 1: runs one program at a time for scarbook, then leaves the slot as it found it.

    python -I scarbook/proc/slot_launcher.py CONTROL_FD CONFIG_JSON

Started once per slot inside its bwrap (`--as-pid-1`, in a user namespace of its own, with CAP_SYS_ADMIN and
CAP_SYS_CHROOT there and nothing else: agents/slots.py), not once per run. The slot's line binds the project's
workspaces/ (CONFIG_JSON's `private`) writable; no run ever sees it so. Per request on CONTROL_FD (a SOCK_SEQPACKET
unix socket: JSON {argv, env, cwd, ino, files} and the run's stdin/stdout/stderr as SCM_RIGHTS) the launcher
enters a mount namespace of the run's own (`_enter_the_run_s_view`): each `private` folder covered by an empty tmpfs, `cwd`
(checked to be the inode the host sent) and `files` ($SCARBOOK_TRANSCRIPT, $SCARBOOK_USAGE) bound back at their
real paths, the tmpfs then read-only — the view a bwrap of the run's own gives (agents/sandbox.py). There it
posix_spawns the program (setsid, exactly `env`; with no capability: the launcher emptied its bounding, inheritable
and ambient sets at its start, so nothing comes back at execve, as uid 0 either), goes back to its own namespace,
sends a pidfd of the program ("P"; the host's timeout and cancel signal it), reaps until the program is gone,
kill(-1) and reap until ECHILD (every orphan of the slot is PID 1's; the run's namespace goes with them), wipe
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

PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 4, 24, 47, 4
CAP_SYS_CHROOT, CAP_SYS_ADMIN = 18, 21
CAPABILITY_V3 = 0x20080522
CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
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


def _checked(what: str, result: int) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _keep_only_the_launcher_s_capabilities(libc: ctypes.CDLL) -> None:
    """Every capability out of the bounding set (what uid 0 gets back at execve), the ambient and inheritable sets
    emptied (what any uid keeps across it); the launcher keeps CAP_SYS_ADMIN and CAP_SYS_CHROOT, in its permitted
    set only. Its programs start with none."""
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        _checked(f"dropping capability {cap} from the bounding set", libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
    _checked("clearing the ambient capabilities", libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
    keep = (1 << CAP_SYS_ADMIN) | (1 << CAP_SYS_CHROOT)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_V3, 0)
    data = (ctypes.c_uint32 * 6)(keep, keep, 0, 0, 0, 0)  # (effective, permitted, inheritable) x 2 words
    _checked("setting the launcher's capabilities", libc.capset(header, data))


def _mount(libc: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    _checked(f"mount {target}", libc.mount(source.encode() if source else None, target.encode(),
                                           fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                                           data.encode() if data else None))


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
        _keep_only_the_launcher_s_capabilities(self.libc)
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no ptrace, no /proc/1/environ, fd, root or ns by the runs
        # A mount namespace of the launcher's own to come back to after each run's. bwrap's is not: run by anyone but
        # root, bwrap mounts /dev/pts as uid 0 of a first user namespace and runs the launcher in a second, and the
        # launcher's capabilities hold in that second one only (no setns back, no mount, in bwrap's).
        _checked("unshare", self.libc.unshare(CLONE_NEWNS))
        _mount(self.libc, None, "/", None, MS_REC | MS_PRIVATE)  # a run's mounts stay in its namespace (copied so)
        self.own_ns = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        self.private = config["private"]
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
                self._enter_the_run_s_view(request["cwd"], request["ino"], request["files"])
                child = os.posix_spawn(_find(argv[0], env), argv, env, setsid=True,
                                       file_actions=[(os.POSIX_SPAWN_DUP2, fds[i], i) for i in range(3)])
            finally:
                stuck = self._leave_the_run_s_view()
        except OSError as exc:
            os.write(fds[2], f"scarbook slot: {argv[0]}: {exc.strerror}\n".encode())
            for fd in fds:
                os.close(fd)
            return 127, stuck
        for fd in fds:
            os.close(fd)
        if stuck:  # (never seen): the program is killed with the rest, and the slot retired
            os.kill(child, signal.SIGKILL)
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
        return code, stuck

    def _enter_the_run_s_view(self, cwd: str, ino: int, files: list[str]) -> None:
        """A mount namespace of the run's own, entered: each private folder an empty read-only tmpfs but for `cwd`
        and `files`, bound back writable at their real paths; `cwd` the working directory."""
        _checked("unshare", self.libc.unshare(CLONE_NEWNS))
        held = []
        try:
            for path in (cwd, *files):  # opened before the tmpfs covers them; bound from the fd
                if not any(path.startswith(d.rstrip("/") + "/") for d in self.private):
                    raise OSError(errno.EINVAL, f"{path} is not in a private folder")
                held.append(os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC))
            if os.fstat(held[0]).st_ino != ino:
                raise OSError(errno.ESTALE, "the slot does not see the run's folder")
            for d in self.private:
                _mount(self.libc, "tmpfs", d, "tmpfs", 0, "mode=0755")
            for path, fd in zip((cwd, *files), held, strict=True):
                if path == cwd:
                    os.makedirs(path)
                else:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
                _mount(self.libc, f"/proc/self/fd/{fd}", path, None, MS_BIND)
            for d in self.private:
                _mount(self.libc, None, d, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
        finally:
            for fd in held:
                os.close(fd)
        os.chdir(cwd)

    def _leave_the_run_s_view(self) -> str:
        """Back in the launcher's own mount namespace (the run's lives as long as its processes); why not ("")."""
        if self.libc.setns(self.own_ns, CLONE_NEWNS) != 0:
            return f"the launcher could not leave a run's mount namespace ({os.strerror(ctypes.get_errno())})"
        os.chdir("/")
        return ""

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
