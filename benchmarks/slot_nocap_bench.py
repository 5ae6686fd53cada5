"""A capability-free sandbox slot: one bwrap per concurrency slot, no namespace and no mount per run (issue 38).
A prototype, not scarbook's.

    .venv/bin/python benchmarks/slot_nocap_bench.py                  # 300 runs a configuration, -j1 and -j16, 3 rounds
    .venv/bin/python benchmarks/slot_nocap_bench.py --runs 500 --rounds 5 --jobs 16
    .venv/bin/python benchmarks/slot_nocap_bench.py --check          # the isolation proofs; exit 1 if one fails

THE DESIGN. One bwrap per slot, started once a session with scarbook's own line (`Sandbox.wrap`) but binding the
slot's folder (workspaces/.slots/<session>/<k>/, which holds `ws/` and `io/` during a run) instead of one run's, plus
`--as-pid-1` (the launcher below is the slot's PID 1), `--mqueue /dev/mqueue`, a tmpfs on /dev/shm and /dev itself
read-only (a run could otherwise leave a file in bwrap's /dev). When root, the slot folder and its io/ are owned by
an id the slot's user namespace does not map, mode 0555: the agent (no capability) cannot add, rename or replace
anything in them, only write in ws/ and the io files. The launcher (`python -I` this file, stdlib only) sets
PR_SET_DUMPABLE 0 (no ptrace, no /proc/1/environ or /proc/1/fd) and SIGINT back to SIG_DFL (as PID 1 a signal
with no handler is dropped when it comes from inside; Python's SIGINT handler would let a run end the slot).
Per run:
- the host renames the run's prepared folder to <k>/ws and its io folder (transcript, usage) to <k>/io (a bind
  follows the dentry: the slot binds <k>, so a rename under it is seen inside; the launcher checks that the cwd it
  enters has the inode the host sent), then sends argv, env, cwd and the run's stdin/stdout/stderr (SCM_RIGHTS)
  over the unix socket bwrap inherited;
- the launcher os.posix_spawn()s the program (setsid, exactly the env sent; no fork of Python), sends back a pidfd
  of it (the host reads the agent's host pid from /proc/self/fdinfo/<pidfd>; a timeout or a cancel is
  signal.pidfd_send_signal on it), reaps until the program is gone, then kill(-1, SIGKILL) and reap in a loop until
  ECHILD (every orphan of the slot reparents to PID 1), wipes /tmp, the home tmpfs, /dev/shm and /dev/mqueue (and
  puts those folders' mode, times and extended attributes back), SysV IPC (/proc/sysvipc + IPC_RMID) and the
  session, user, user-session and persistent keyrings (per user namespace: the slot's lives across its runs),
  compares its own nice value, rlimits, scheduling and CPU affinity with the slot's start (a run of the same uid
  can lower them and nothing without a capability can raise them back: a changed launcher retires its slot), and
  reports the exit status (code, or 128+N after signal N, as bwrap does);
- the host renames ws/ and io/ back, and checks that it got the same folder back (inode) and that the slot
  folder is empty again (else the slot is retired).

Configurations, each with the same trivial agent (`sh -c 'cat README.md > out.txt'`) in a fresh folder per run
(made and checked by the host as in every configuration): bare spawn, one bwrap per run (scarbook's own line, with
the transcript and usage files bound), and the slots (started before the clock: once a session; their start is
printed apart). The slots' figure holds the host's side (renames in and out, the socket round trip, fdinfo).
CPU: a cgroup v1 cpuacct group made for this process when it can (root: every process counted, this one's own
spawning and renames too), else getrusage of this process and its reaped children, the slots' start and stop
then taken off by an empty session measured in the same round. Rounds interleave the configurations (order
reversed every other round); ratios are taken within a round and the median printed. The session-level
estimate puts the per-run CPU added over bare on top of `isolation: none`'s ~5.5 ms CPU a run (process_bench.py,
1,000 runs, -j16, CPU-bound on 2 cores), and also scales last session's measured 2.39x for one bwrap per run by
slot/bwrap added cost.

--check runs hostile agents in a slot and a probe after each, and checks (exit 1 if one that must hold fails):
a run leaves nothing the next run of the slot sees — no process (setsid + double fork; 40 fork-and-exit chains
and 20 breeders racing the kill), no file or attribute in /tmp, home, /dev, /dev/shm, /dev/mqueue or any other
writable mount, no SysV shm/msg/sem, no POSIX queue, no key in any keyring, no abstract unix or loopback socket;
the run cannot kill, stop, ptrace or read the environment or fds of the launcher, and one that renices or
lowers the launcher's limits gets its slot retired; it cannot see other runs' or slots' folders, the host's /tmp
or home, nor add, rename or replace anything in the slot folder; a timeout kills through the pidfd and the slot
goes on; a launcher killed mid-run ends its run as the slot's failure (an error, ws/ renamed back, nothing left);
and a SIGKILLed host leaves no process of its slots (--die-with-parent).

Measured (2-core shared VM, root, bwrap 0.11.0, kernel 6.18, CPU from the cgroup, 2026-12-06 09:23-09:25 UTC at a
load of 15-22 from other sessions; 300 runs a configuration, 3 rounds), CPU a run, median over rounds:
    -j1:  bare 2.60 ms; one bwrap per run 6.76 ms (2.60x, +4.16 ms); the slot 3.30 ms (1.25x bare, +0.70 ms;
          0.45x bwrap)
    -j16: bare 2.32 ms; one bwrap per run 6.87 ms (2.96x, +4.55 ms); the slot 3.20 ms (1.26x bare, +0.88 ms;
          0.49x bwrap)
Wall a run at -j16: bare 3.71 ms, bwrap 12.35, slot 2.84 (0.23x bwrap); at -j1 the slot's three hops (host,
launcher, agent) wait for a core each on this loaded machine: 17 ms against bare 4.2 and bwrap 38. A slot's start
(bwrap, the launcher's Python, its first run) is 64-86 ms of CPU, once a session per slot (1-1.4 s at -j16). At
2,000 runs a configuration (-j16, 2 rounds, load 15-31): the slot 3.05 ms CPU a run (2.91-3.19; 3.20 at 300 runs),
1.17x bare (0.97-1.36), 0.43x bwrap (7.17 ms): nothing in a slot's run grows with the runs before it. Session estimate: `isolation: none` spends ~5.5 ms of CPU a run, so +0.7-0.9 ms
puts the sandbox at 1.13-1.16x none (the same sum puts one bwrap per run at 1.76-1.83x, where last session
measured 2.39x; scaling that 2.39x by slot/bwrap added cost gives 1.23-1.27x): inside issue 38's 1.5x either way.

--check on the same machine: 15 of 16 hold. All the slot's own properties above hold (the launcher clears the
persistent keyring before the session keyring that links it: cleared after, it is no longer possessed and
KEYCTL_CLEAR is refused). The one that FAILS is not the slot's: bwrap's `--dev` binds the host's own /dev/null,
zero, full, random, urandom and tty, and when scarbook runs as root the sandbox's user namespace maps uid 0 to
root, so an agent owns them and can chmod, chown and touch the HOST's nodes (`chmod 0 /dev/null` outlives the run
and breaks every process without capabilities, later sandboxed runs included). Scarbook's one bwrap per run has the
same line and the same hole; `--remount-ro` on the nodes makes them nodev (unusable), so the fix is elsewhere (run
bwrap as an unprivileged uid when root). The check only tries changes to what the nodes already are.

What differs from one bwrap per run (printed by --check):
- the user, mount, PID, network, IPC, UTS and cgroup namespaces are the slot's, shared by its runs one after
  another: what a run leaves in them is removed by the launcher's list (files, folder attributes, SysV, queues,
  keyrings; processes by kill(-1)), not by the kernel dropping the namespace. Anything not on the list (a state
  a future kernel adds to one of them) would leak;
- counters go on across runs: a run's first pid (3 before the hostile run, 7 after it), SysV ids, tmpfs inode
  numbers; a run learns how many processes (files, objects) the runs before it made (a covert channel between
  cooperating runs; nothing a run leaves by accident);
- the agent's cwd is <workspaces>/.slots/<session>/<k>/ws (and $SCARBOOK_TRANSCRIPT/USAGE under .../<k>/io), not
  <workspaces>/<session>/<case>/<n>; its PID 1 is the launcher, and it is not pid 2;
- /dev is read-only (a run's own /dev tmpfs is writable today), /dev/shm a tmpfs, /dev/mqueue mounted;
- a run can lower its PID 1's nice value, rlimits, I/O priority, scheduling or CPU affinity (same uid; no
  capability can raise them back): the launcher notices and the slot is retired (a new one: ~70 ms of CPU);
- the exit is reported after the wipe; a run's slot serves one run at a time.
"""

from __future__ import annotations

import argparse
import array
import ctypes
import errno
import json
import os
import resource
import select
import signal
import socket
import stat
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

AGENT = ["sh", "-c", "cat README.md > out.txt"]
SEED = "# tiny-agent\n\nA small agent that answers in one line.\n"
NOBODY = 65534  # owns the slot folder when root: an id the slot's user namespace does not map

# -- the launcher: a slot's PID 1 (stdlib only) -------------------------------------------------------------------
PR_SET_DUMPABLE = 4
SYS_KEYCTL = 250  # x86_64
KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 7, 22
KEYRINGS = (-3, -4, -5)  # session, user, user-session
IPC_RMID = 0
SYS_IOPRIO_GET = 252  # x86_64


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _attributes(libc: ctypes.CDLL) -> tuple:
    """What a run of the same uid can change in its PID 1 and nothing without a capability can change back."""
    limits = tuple(resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_"))
    return (os.getpriority(os.PRIO_PROCESS, 0), limits, os.sched_getscheduler(0), sorted(os.sched_getaffinity(0)),
            libc.syscall(SYS_IOPRIO_GET, 1, 0))  # IOPRIO_WHO_PROCESS, itself


def _remove(path: str) -> None:
    """Remove what a run left, whatever modes it set (its own files: the launcher may chmod them)."""
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
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        self.control = socket.socket(fileno=control_fd)
        self.control.set_inheritable(False)
        # what the slot's start put there (the home tmpfs holds the folders under which bwrap shows the interpreter
        # again): path -> (mode, atime, mtime) to give back, or None for a mount point, never entered
        self.skeleton: dict[str, tuple[int, int, int] | None] = {}
        for root in config["wipe"]:
            self._remember(root, os.lstat(root).st_dev)
        self.roots = config["wipe"]
        self.start = _attributes(self.libc)
        os.chdir("/")

    def serve(self) -> None:
        while True:
            fds = array.array("i")
            msg, anc, _flags, _addr = self.control.recvmsg(1 << 20, socket.CMSG_SPACE(3 * fds.itemsize),
                                                           socket.MSG_CMSG_CLOEXEC)
            for _level, _kind, data in anc:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            if not msg:
                return
            code, wiped = self.run(json.loads(msg), list(fds))
            tampered = not wiped or _attributes(self.libc) != self.start
            self.control.send(b"X" + struct.pack("i", code) + (b"T" if tampered else b""))
            if tampered:
                return

    def run(self, request: dict, fds: list[int]) -> tuple[int, bool]:
        """The program's exit status, and whether the slot is as it was at its start."""
        argv, env = request["argv"], request["env"]
        try:
            try:
                os.chdir(request["cwd"])
                if os.stat(".").st_ino != request["ino"]:
                    raise OSError(errno.ESTALE, "the slot does not see the run's folder")
                exe = argv[0] if "/" in argv[0] else next(
                    (p for d in env.get("PATH", os.defpath).split(":") if os.access(p := os.path.join(d, argv[0]), os.X_OK)),
                    argv[0])
                child = os.posix_spawn(exe, argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, fds[i], i) for i in range(3)],
                                       setsid=True)
            finally:
                os.chdir("/")
        except OSError as exc:
            os.write(fds[2], f"launcher: {argv[0]}: {exc.strerror}\n".encode())
            for fd in fds:
                os.close(fd)
            return 127, True
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
        self.kill_the_rest()
        try:
            self.wipe()
        except (OSError, RecursionError) as exc:  # (a tree too deep to remove): the slot is retired
            os.write(2, f"launcher: cannot wipe the slot: {exc}\n".encode())
            return (code if code >= 0 else 128 - code), False
        return (code if code >= 0 else 128 - code), True

    @staticmethod
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
        persistent = libc.syscall(SYS_KEYCTL, KEYCTL_GET_PERSISTENT, -1, ctypes.c_long(-3))
        for ring in (persistent, *KEYRINGS):
            if ring != -1:
                libc.syscall(SYS_KEYCTL, KEYCTL_CLEAR, ctypes.c_long(ring))


# -- the host's side --------------------------------------------------------------------------------------------
class SlotDied(Exception):
    """The launcher is gone (its run cannot be judged: the machine's failure, not the agent's)."""


class Retired(Exception):
    """The launcher or the slot folder was changed by a run: the slot must not serve another."""


def host_pid(pidfd: int) -> int:
    with open(f"/proc/self/fdinfo/{pidfd}") as fh:
        for line in fh:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return -1


class Slot:
    def __init__(self, argv: list[str], folder: Path, wipe: list[str]) -> None:
        """`argv` is the slot's bwrap line up to its program; `wipe` the folders emptied after every run. Start it
        from the main thread (bwrap's --die-with-parent follows the thread that started it)."""
        self.folder, self.ws, self.io = folder, folder / "ws", folder / "io"
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {"wipe": wipe}
        self.proc = subprocess.Popen([*argv, sys.executable, "-I", __file__, "--launcher", str(theirs.fileno()),
                                      json.dumps(config)], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                     env={"PATH": os.defpath})
        theirs.close()
        self.agent_pid = -1  # the last run's program, as the host sees it

    def launcher_pid(self) -> int:
        kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return int(kids[0]) if kids else -1

    def run(self, argv: list[str], env: dict[str, str], run_dir: Path, io_dir: Path,
            timeout_s: float | None = None) -> tuple[int, bytes]:
        os.rename(run_dir, self.ws)
        os.rename(io_dir, self.io)
        ino = os.lstat(self.ws).st_ino
        out_r, out_w = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            self.control.sendmsg([json.dumps({"argv": argv, "env": env, "cwd": str(self.ws), "ino": ino}).encode()],
                                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null, out_w, out_w]))])
        finally:
            os.close(null)
            os.close(out_w)
        try:
            code, out = self._wait(out_r, timeout_s)
        finally:
            os.close(out_r)
            self._take_back(run_dir, io_dir, ino)
        return code, out

    def _take_back(self, run_dir: Path, io_dir: Path, ino: int) -> None:
        try:
            os.rename(self.ws, run_dir)
            os.rename(self.io, io_dir)
            same = os.lstat(run_dir).st_ino == ino
        except OSError as exc:
            raise Retired(f"the run's folder could not be taken back: {exc}") from exc
        if not same or os.listdir(self.folder):
            raise Retired(f"the slot folder was changed by the run: {os.listdir(self.folder)}")

    def _wait(self, out_r: int, timeout_s: float | None) -> tuple[int, bytes]:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        poll = select.poll()
        poll.register(self.control, select.POLLIN)
        poll.register(out_r, select.POLLIN)
        out, pidfd, code = bytearray(), -1, None
        try:
            while code is None:
                wait = None if deadline is None else max(0, deadline - time.monotonic()) * 1000
                ready = dict(poll.poll(wait))
                if not ready and pidfd >= 0:  # the timeout: the program goes, the launcher does the rest
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    deadline = None
                if ready.get(out_r):
                    data = os.read(out_r, 65536)
                    out += data
                    if not data:
                        poll.unregister(out_r)
                if ready.get(self.control.fileno()):
                    msg, anc, _flags, _addr = self.control.recvmsg(64, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
                    if not msg:
                        raise SlotDied("the slot's launcher is gone")
                    if msg[:1] == b"P":
                        pidfd = struct.unpack("i", anc[0][2][:4])[0]
                        self.agent_pid = host_pid(pidfd)
                    else:
                        code = struct.unpack("i", msg[1:5])[0]
                        if msg[5:6] == b"T":
                            raise Retired("a run changed the launcher's priority, limits or affinity")
        finally:
            if pidfd >= 0:
                os.close(pidfd)
        return code, bytes(out)

    def close(self) -> None:
        self.control.close()
        self.proc.wait()


class Project:
    """A project folder with workspaces/, runs' folders made as scarbook makes them, and the three ways to run."""

    def __init__(self, root: Path, session: str = "S") -> None:
        from dataclasses import replace

        from scarbook.agents.sandbox import require_sandbox

        self.root, self.workspaces = root, root / "workspaces"
        self.session = self.workspaces / session
        self.slots_dir = self.workspaces / ".slots" / session
        self.slots_dir.mkdir(parents=True)
        self.session.mkdir()
        self.box = replace(require_sandbox(root), private=(str(self.workspaces),))
        self.count = self.slots = 0
        self.lock = threading.Lock()
        self.env = {"PATH": os.defpath, "HOME": self.box.hidden[-1]}

    def new_run(self) -> tuple[Path, Path]:
        with self.lock:
            self.count += 1
            n = self.count
        run_dir, io_dir = self.session / "c" / str(n), self.session / "c" / f"{n}.io"
        run_dir.mkdir(parents=True)
        (run_dir / "README.md").write_text(SEED)
        io_dir.mkdir()
        for name in ("transcript.jsonl", "usage.jsonl"):
            (io_dir / name).touch()
        return run_dir, io_dir

    @staticmethod
    def done(run_dir: Path, code: int) -> None:
        if code != 0 or not (run_dir / "out.txt").read_text().startswith("# tiny-agent"):
            raise SystemExit(f"a run failed (exit {code}) in {run_dir}")

    def bare(self, _: int) -> None:
        run_dir, _io = self.new_run()
        self.done(run_dir, subprocess.run(AGENT, cwd=run_dir, env=self.env, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode)

    def bwrap(self, _: int) -> None:
        run_dir, io_dir = self.new_run()
        argv = self.box.wrap(AGENT, run_dir, tuple(str(io_dir / n) for n in ("transcript.jsonl", "usage.jsonl")))
        self.done(run_dir, subprocess.run(argv, cwd=run_dir, env=self.env, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode)

    def slot_line(self, folder: Path) -> list[str]:
        """scarbook's own bwrap line for the slot folder, the launcher its PID 1, /dev read-only but /dev/shm and
        a POSIX message queue mount; up to (and with) the `--` before the program."""
        line = self.box.wrap([sys.executable], folder)
        line = line[:line.index("--") + 1]
        at = line.index("--proc") + 2
        return [line[0], "--as-pid-1", *line[1:at], "--tmpfs", "/dev/shm", "--mqueue", "/dev/mqueue",
                "--remount-ro", "/dev", *line[at:]]

    def open_slot(self) -> Slot:
        self.slots += 1
        folder = self.slots_dir / str(self.slots)
        folder.mkdir()
        if os.geteuid() == 0:
            os.chown(folder, NOBODY, NOBODY)
            folder.chmod(0o555)
        return Slot(self.slot_line(folder), folder, [*self.box.hidden, "/dev/shm", "/dev/mqueue", "/dev/pts"])

    def slot_run(self, slot: Slot) -> None:
        run_dir, io_dir = self.new_run()
        if os.geteuid() == 0:  # io/: the agent may write its files, not replace them (a link would lead the host out)
            os.chown(io_dir, NOBODY, NOBODY)
            io_dir.chmod(0o555)
        code, _out = slot.run(AGENT, self.env, run_dir, io_dir)
        self.done(run_dir, code)


# -- the benchmark ----------------------------------------------------------------------------------------------
def cpu_now(group: Path | None) -> float:
    """Seconds of CPU so far: the cgroup's (bwrap_cost_bench.cpu_group), else this process's and its reaped children's."""
    if group:
        from bwrap_cost_bench import group_cpu

        return group_cpu(group)
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(project: Project, name: str, runs: int, jobs: int, group: Path | None) -> tuple[float, float, float]:
    """(wall, CPU) ms a run, and for the slots the CPU of starting one (ms)."""
    slots: list[Slot] = []
    cpu0 = cpu_now(group)
    if name == "slot":
        slots = [project.open_slot() for _ in range(jobs)]
        for slot in slots:  # through one run each: its launcher has started
            project.slot_run(slot)
    start_cpu = cpu_now(group) - cpu0
    free = list(slots)
    lock = threading.Lock()

    def one(_: int) -> None:
        with lock:
            slot = free.pop()
        try:
            project.slot_run(slot)
        finally:
            with lock:
                free.append(slot)

    work = one if name == "slot" else getattr(project, name)
    cpu1, t0 = cpu_now(group), time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(work, range(runs)))
    wall, cpu = time.perf_counter() - t0, cpu_now(group) - cpu1
    for slot in slots:
        slot.close()
    if group is None and slots:  # getrusage counts the slots' CPU only once they are reaped
        cpu = cpu_now(group) - cpu1 - start_cpu
    return wall * 1000 / runs, cpu * 1000 / runs, start_cpu * 1000 / max(1, len(slots))


def bench(opts: argparse.Namespace) -> int:
    from bwrap_cost_bench import cpu_group

    group = cpu_group()
    names = ["bare", "bwrap", "slot"]
    got: dict[tuple[str, int], list[tuple[float, float]]] = {}
    starts: list[float] = []
    work = Path(tempfile.mkdtemp(prefix="slot-nocap-", dir="/var/tmp"))
    loads = []
    try:
        project = Project(work)
        for r in range(opts.rounds):
            for jobs in opts.jobs:
                for name in names if r % 2 == 0 else names[::-1]:
                    wall, cpu, start = measure(project, name, opts.runs, jobs, group)
                    got.setdefault((name, jobs), []).append((wall, cpu))
                    if name == "slot":
                        starts.append(start)
                    loads.append(os.getloadavg()[0])
                    print(f"  round {r + 1} -j{jobs:<2} {name:<5} {wall:7.2f} ms wall, {cpu:6.2f} ms CPU a run"
                          f"  (load {loads[-1]:.1f})", flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
        if group:
            (group.parent / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()
    print(f"\n{opts.runs} runs a configuration, {opts.rounds} rounds, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load {min(loads):.1f}-{max(loads):.1f}, {os.cpu_count()} cores, uid {os.geteuid()}, CPU from "
          + ("a cpuacct cgroup" if group else "getrusage") + f"; a slot's start {statistics.median(starts):.0f} ms CPU")

    def med(name: str, jobs: int, i: int) -> float:
        return statistics.median(x[i] for x in got[(name, jobs)])

    def ratio(a: str, b: str, jobs: int, i: int) -> str:
        pairs = [x[i] / y[i] for x, y in zip(got[(a, jobs)], got[(b, jobs)], strict=True)]
        return f"{statistics.median(pairs):5.2f}x ({min(pairs):.2f}-{max(pairs):.2f})"

    for jobs in opts.jobs:
        print(f"-j{jobs}: ms a run (median)   bare {med('bare', jobs, 1):.2f} CPU / {med('bare', jobs, 0):.2f} wall;"
              f" bwrap {med('bwrap', jobs, 1):.2f} / {med('bwrap', jobs, 0):.2f}; slot {med('slot', jobs, 1):.2f} /"
              f" {med('slot', jobs, 0):.2f}")
        for what, i in (("CPU ", 1), ("wall", 0)):
            print(f"  {what}: bwrap/bare {ratio('bwrap', 'bare', jobs, i)}  slot/bare {ratio('slot', 'bare', jobs, i)}"
                  f"  slot/bwrap {ratio('slot', 'bwrap', jobs, i)}")
        added_slot = med("slot", jobs, 1) - med("bare", jobs, 1)
        added_bwrap = med("bwrap", jobs, 1) - med("bare", jobs, 1)
        none = opts.none_ms
        print(f"  added CPU a run: bwrap +{added_bwrap:.2f} ms, slot +{added_slot:.2f} ms; session estimate "
              f"(none = {none} ms CPU a run): bwrap {(none + added_bwrap) / none:.2f}x none, slot "
              f"{(none + added_slot) / none:.2f}x none; scaled from the measured 2.39x: slot "
              f"{1 + 1.39 * added_slot / added_bwrap:.2f}x none")
    return 0


# -- the isolation proofs ---------------------------------------------------------------------------------------
HOSTILE = r"""
import ctypes, json, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
rt = ctypes.CDLL("librt.so.1", use_errno=True)
done = {}
done["mq"] = rt.mq_open(b"/scar", os.O_CREAT | os.O_RDWR, ctypes.c_uint(0o600), None) >= 0 or ctypes.get_errno()
roots = ["/tmp", os.environ["HOME"], "/dev", "/dev/shm", "/dev/mqueue", os.path.dirname(os.getcwd()),
         os.path.dirname(os.getcwd()) + "/io"]
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if "rw" in f[5].split(",") and not f[4].startswith(("/proc", "/sys")) and f[4] != os.getcwd():
        roots.append(f[4])
for r in dict.fromkeys(roots):
    st = os.lstat(r)
    if not os.path.isdir(r):  # the host's own device nodes (bwrap's --dev binds them): changed to what they are
        for what, act in (("chmod", lambda: os.chmod(r, st.st_mode & 0o7777)),
                          ("utime", lambda: os.utime(r, ns=(st.st_atime_ns, st.st_mtime_ns))),
                          ("chown", lambda: os.chown(r, st.st_uid, st.st_gid))):
            try:
                act(); done.setdefault("host-nodes", {}).setdefault(r, []).append(what)
            except OSError:
                pass
        continue
    for what, act in (("file", lambda: open(r + "/scar-left", "w").write("x")),
                      ("dir", lambda: os.mkdir(r + "/scar-dir", 0)),
                      ("xattr", lambda: os.setxattr(r, "user.scar", b"1")),
                      ("utime", lambda: os.utime(r, (12345, 12345))),
                      ("chmod", lambda: os.chmod(r, 0o555))):
        try:
            act(); done.setdefault(r, []).append(what)
        except OSError:
            pass
done["shm"] = libc.shmget(0x5ca4, 4096, 0o1600)
done["msg"] = libc.msgget(0x5ca4, 0o1600)
done["sem"] = libc.semget(0x5ca4, 1, 0o1600)
for ring in (-3, -4, -5):
    done[f"key{ring}"] = libc.syscall(248, b"user", b"scar", b"x", 1, ctypes.c_long(ring))
p = libc.syscall(250, 22, -1, ctypes.c_long(-3))
done["persistent"] = p >= 0 and libc.syscall(248, b"user", b"scar-p", b"x", 1, ctypes.c_long(p))
if os.fork() == 0:  # a daemon: setsid and a double fork, holding sockets and the shm segment
    os.setsid()
    if os.fork() == 0:
        a = socket.socket(socket.AF_UNIX); a.bind("\0scar-abstract"); a.listen()
        t = socket.socket(); t.bind(("127.0.0.1", 47311)); t.listen()
        libc.shmat(done["shm"], None, 0)
        time.sleep(300)
    os._exit(0)
time.sleep(0.2)
print(json.dumps(done))
"""

PROBE = r"""
import ctypes, json, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
k = os.path.dirname(os.getcwd())
seen = {"procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())),
        "pid": os.getpid(), "cwd": os.getcwd(), "roots": {}}
roots = ["/tmp", os.environ["HOME"], "/dev", "/dev/shm", "/dev/mqueue", k, k + "/io"]
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if "rw" in f[5].split(",") and not f[4].startswith(("/proc", "/sys")) and f[4] != os.getcwd():
        roots.append(f[4])
for r in dict.fromkeys(roots):  # (the slot folder and io/ change with every run's renames: their entries only)
    st = os.lstat(r)
    if not os.path.isdir(r):
        seen["roots"][r] = [oct(st.st_mode)]
        continue
    names = sorted(n for n in os.listdir(r) if n != "ws" or r != k)
    try:
        attrs = sorted(os.listxattr(r))
    except OSError:
        attrs = []
    seen["roots"][r] = names if r in (k, k + "/io") else [oct(st.st_mode), st.st_mtime_ns, attrs, names]
seen["sysv"] = {k2: open(f"/proc/sysvipc/{k2}").read().splitlines()[1:] for k2 in ("shm", "msg", "sem")}
seen["keys"] = [libc.syscall(250, 10, ctypes.c_long(r), b"user", n, 0) > 0
                for r in (-3, -4, -5) for n in (b"scar", b"scar-p")]
p = libc.syscall(250, 22, -1, ctypes.c_long(-3))
seen["persistent"] = p >= 0 and libc.syscall(250, 10, ctypes.c_long(p), b"user", b"scar-p", 0) > 0
for name, addr, fam in (("abstract", "\0scar-abstract", socket.AF_UNIX), ("tcp", ("127.0.0.1", 47311), socket.AF_INET)):
    s = socket.socket(fam)
    seen[name] = s.connect_ex(addr)
seen["unix-names"] = [l.split()[-1] for l in open("/proc/net/unix").read().splitlines()[1:] if "scar" in l]
seen["ns"] = {n: os.readlink(f"/proc/self/ns/{n}") for n in ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup")}
seen["nice1"] = open("/proc/1/stat").read().rsplit(")", 1)[1].split()[16]
print(json.dumps(seen))
"""

AT_LAUNCHER = r"""
import ctypes, json, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
got = {}
for s in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGSEGV", "SIGABRT", "SIGKILL", "SIGSTOP"):
    try:
        os.kill(1, getattr(signal, s)); got[s] = "sent"
    except OSError as e:
        got[s] = e.strerror
time.sleep(0.2)
got["state"] = [l for l in open("/proc/1/status") if l.startswith("State")][0].split()[1]
for name, req in (("ptrace-attach", 16), ("ptrace-seize", 0x4206)):
    got[name] = libc.ptrace(req, 1, None, None) == 0 or os.strerror(ctypes.get_errno())
for path, read in (("/proc/1/environ", lambda p: open(p, "rb").read(1)), ("/proc/1/mem", lambda p: open(p, "rb")),
                   ("/proc/1/fd/0", os.readlink), ("/proc/1/fdinfo/0", lambda p: open(p).read()),
                   ("/proc/1/cwd", os.readlink), ("/proc/1/root", os.readlink)):
    try:
        read(path)
        got[path] = "read"
    except OSError as e:
        got[path] = e.strerror
try:
    import socket; socket.sethostname("scar"); got["hostname"] = "changed"
except OSError as e:
    got["hostname"] = e.strerror
print(json.dumps(got))
"""

RETUNE = r"""
import os
try:
    os.setpriority(os.PRIO_PROCESS, 1, 7)
    print("reniced")
except OSError as e:
    print(e.strerror)
"""

FORK_RACE = r"""
import os, time
def chain():  # fork and exit: a new pid every moment
    while True:
        try:
            if os.fork():
                os._exit(0)
        except OSError:
            time.sleep(0.001)
def breeder(n):  # keeps forking children that breed too, up to a bound
    for _ in range(n):
        try:
            if os.fork() == 0:
                return breeder(n - 1)
        except OSError:
            pass
    time.sleep(300)
for i in range(60):
    if os.fork() == 0:
        os.setsid()
        chain() if i < 40 else breeder(3)
        os._exit(0)
time.sleep(0.3)
"""

PEEK = r"""
import json, os, sys
k = os.path.dirname(os.getcwd())
ws_root = k.rsplit("/.slots/", 1)[0]
got = {"workspaces": sorted(os.listdir(ws_root)), "slots": sorted(os.listdir(os.path.dirname(k))),
       "host-tmp": os.path.exists(sys.argv[1]), "host-home": os.path.exists(sys.argv[2]),
       "other-slot": os.path.exists(sys.argv[3]), "other-run": os.path.exists(sys.argv[4])}
for what, act in (("write-slot-folder", lambda: open(k + "/x", "w")), ("rename-ws", lambda: os.rename(k + "/ws", k + "/w2")),
                  ("replace-io-file", lambda: os.unlink(k + "/io/transcript.jsonl")),
                  ("link-in-io", lambda: os.symlink("/etc/shadow", k + "/io/l"))):
    try:
        act(); got[what] = "done"
    except OSError as e:
        got[what] = e.strerror
print(json.dumps(got))
"""


def _ns_members(ns: str) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/ns/pid") == ns:
                    out.append(int(pid))
            except OSError:
                pass
    return out


class Checks:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.results: list[tuple[str, bool, str]] = []
        self.differs: list[str] = []

    def check(self, name: str, ok: bool, detail: object = "") -> None:
        self.results.append((name, ok, str(detail)))
        print(f"  {'holds ' if ok else 'FAILS '} {name}" + (f": {detail}" if detail != "" else ""), flush=True)

    def py(self, slot: Slot, src: str, *args: str, timeout_s: float | None = 30) -> tuple[int, str]:
        run_dir, io_dir = self.project.new_run()
        if os.geteuid() == 0:
            os.chown(io_dir, NOBODY, NOBODY)
            io_dir.chmod(0o555)
        code, out = slot.run([sys.executable, "-c", src, *args], self.project.env, run_dir, io_dir, timeout_s)
        return code, out.decode(errors="replace")

    def probe(self, slot: Slot) -> dict:
        code, out = self.py(slot, PROBE)
        if code != 0:
            raise SystemExit(f"the probe failed ({code}): {out}")
        return json.loads(out)

    def run_all(self) -> None:
        p = self.project
        slot = p.open_slot()
        before = self.probe(slot)
        again = self.probe(slot)
        self.check("two probes in a row see the same slot", self._same(before, again), self._diff(before, again))
        launcher_ns = os.readlink(f"/proc/{slot.launcher_pid()}/ns/pid")

        code, out = self.py(slot, HOSTILE)
        left = json.loads(out) if code == 0 else out
        stay = [pid for pid in _ns_members(launcher_ns) if pid != slot.launcher_pid()]
        self.check("the hostile run could leave all this (it ran)", code == 0,
                   {k: v for k, v in left.items() if k != "host-nodes"} if code == 0 else left)
        nodes = left.get("host-nodes", {}) if code == 0 else {}
        self.check("the run cannot chmod, chown or touch the host's device nodes bound into /dev (tried as no-ops; "
                   "scarbook's one bwrap per run has the same line)", not nodes, nodes)
        self.check("no process of the run is left (host's view of the slot's PID namespace)", not stay, stay)
        after = self.probe(slot)
        self.check("the next run sees what the first probe saw (files, attributes of /tmp, home, /dev, /dev/shm, "
                   "/dev/mqueue and every rw mount; SysV; keyrings; sockets; processes)",
                   self._same(before, after), self._diff(before, after))
        self.differs.append(f"pid counter: the probe before the hostile run was pid {again['pid']}, after it "
                            f"{after['pid']} (a run learns how many processes the runs before it made)")
        self.differs.append(f"cwd the agent sees: {after['cwd']} (the slot's), not the run's folder")
        shared = [n for n in after["ns"] if after["ns"][n] == before["ns"][n]]
        self.differs.append(f"namespaces shared by successive runs of a slot: {', '.join(shared)}")

        code, out = self.py(slot, FORK_RACE, timeout_s=30)
        stay = [pid for pid in _ns_members(launcher_ns) if pid != slot.launcher_pid()]
        self.check("a fork race (40 fork-and-exit chains, 20 breeders) leaves no process", code == 0 and not stay,
                   f"exit {code}, left {stay}")

        code, out = self.py(slot, AT_LAUNCHER)
        got = json.loads(out)
        alive = self.probe(slot)
        denied = all(got[k] != "read" for k in ("/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/fdinfo/0",
                                                   "/proc/1/cwd", "/proc/1/root")) and got["ptrace-attach"] is not True \
            and got["ptrace-seize"] is not True
        self.check("signals to the launcher (TERM INT HUP QUIT USR1 SEGV ABRT KILL STOP) leave it serving",
                   got["state"] != "T" and bool(alive), {k: got[k] for k in ("SIGKILL", "SIGSTOP", "state")})
        self.check("the run cannot ptrace the launcher nor read its environ, mem, fds, fdinfo, cwd or root", denied,
                   {k: v for k, v in got.items() if k.startswith(("ptrace", "/proc"))})
        self.check("the run cannot change the hostname (UTS shared by the slot's runs)", got["hostname"] != "changed",
                   got["hostname"])

        try:
            code, out = self.py(slot, RETUNE)
            self.check("a run that renices the launcher retires its slot", out.strip() != "reniced",
                       f"the slot served on ({out.strip()})")
        except Retired as exc:
            self.check("a run that renices the launcher retires its slot", True, exc)
            slot.close()
            slot = p.open_slot()
            self.check("the new slot's launcher is not reniced", self.probe(slot)["nice1"] == "0")

        other = p.open_slot()
        other_run, _ = p.new_run()
        marker_tmp = Path(tempfile.gettempdir()) / f"scar-host-{os.getpid()}"
        marker_home = Path.home() / f".scar-host-{os.getpid()}"
        marker_tmp.touch()
        marker_home.touch()
        try:
            code, out = self.py(slot, PEEK, str(marker_tmp), str(marker_home), str(other.folder), str(other_run))
        except Retired as exc:
            code, out = -1, str(exc)
        finally:
            marker_tmp.unlink()
            marker_home.unlink()
        got = json.loads(out) if code == 0 else {"error": out}
        self.check("the run sees no other run's folder, no other slot, not the host's /tmp or home",
                   got.get("workspaces") == [".slots"] and got.get("slots") == [slot.folder.name]
                   and not any(got.get(k) for k in ("host-tmp", "host-home", "other-slot", "other-run")), got)
        tamper = {k: got.get(k) for k in ("write-slot-folder", "rename-ws", "replace-io-file", "link-in-io")}
        self.check("the run cannot add, rename or replace anything in the slot folder or io/",
                   "done" not in tamper.values(), tamper)
        other.close()

        t0 = time.monotonic()
        code, _out = self.py(slot, "import os, time\nif os.fork() == 0: os.setsid(); time.sleep(60)\ntime.sleep(60)",
                             timeout_s=0.5)
        took = time.monotonic() - t0
        stay = [pid for pid in _ns_members(launcher_ns) if pid != slot.launcher_pid()]
        self.check("a timeout kills through the pidfd (137), the run's other processes go, the slot serves on",
                   code == 137 and took < 5 and not stay and bool(self.probe(slot)), f"exit {code} after {took:.2f} s")

        self._launcher_dies(slot)
        self._host_dies()

    def _launcher_dies(self, slot: Slot) -> None:
        run_dir, io_dir = self.project.new_run()
        ns = os.readlink(f"/proc/{slot.launcher_pid()}/ns/pid")
        killer = threading.Timer(0.5, lambda: os.kill(slot.launcher_pid(), signal.SIGKILL))
        killer.start()
        try:
            slot.run(["sh", "-c", "echo kept > kept.txt; setsid sleep 60 & sleep 60"], self.project.env, run_dir,
                     io_dir, timeout_s=20)
            outcome = "the run ended as if nothing happened"
        except SlotDied as exc:
            outcome = f"SlotDied: {exc}"
        killer.join()
        slot.proc.wait(10)
        time.sleep(0.2)
        self.check("a launcher killed mid-run: the run is the slot's error, ws/ renamed back, nothing left",
                   outcome.startswith("SlotDied") and (run_dir / "kept.txt").exists() and not _ns_members(ns),
                   f"{outcome}; kept.txt back: {(run_dir / 'kept.txt').exists()}; left {_ns_members(ns)}")

    def _host_dies(self) -> None:
        holder = subprocess.Popen([sys.executable, __file__, "--hold", str(self.project.root)], stdout=subprocess.PIPE,
                                  text=True)
        line = holder.stdout.readline() if holder.stdout else ""
        try:
            pids = json.loads(line)
        except ValueError:
            holder.kill()
            self.check("a SIGKILLed host leaves no process of its slots", False, f"the holder said {line!r}")
            return
        holder.kill()
        holder.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (_ns_members(pids["ns"]) or os.path.exists(f"/proc/{pids['bwrap']}")):
            time.sleep(0.05)
        left = _ns_members(pids["ns"]) + ([pids["bwrap"]] if os.path.exists(f"/proc/{pids['bwrap']}") else [])
        self.check("a SIGKILLed host leaves no process of its slots (bwrap, launcher, a setsid daemon)", not left,
                   f"left {left} (they were {pids})")

    @staticmethod
    def _same(a: dict, b: dict) -> bool:
        keys = ("procs", "roots", "sysv", "keys", "persistent", "abstract", "tcp", "unix-names", "nice1")
        return all(a[k] == b[k] for k in keys)

    @staticmethod
    def _diff(a: dict, b: dict) -> str:
        return "; ".join(f"{k}: {a[k]} -> {b[k]}" for k in a if k not in ("pid", "ns") and a[k] != b[k])


def hold(root: str) -> None:
    """--hold: a host that opens a slot, starts a run with a setsid daemon, says the pids, and waits to be killed."""
    project = Project(Path(root) / "held")
    slot = project.open_slot()
    run_dir, io_dir = project.new_run()
    threading.Thread(target=slot.run, args=(["sh", "-c", "setsid sleep 300 & sleep 300"], project.env, run_dir,
                                            io_dir), daemon=True).start()
    while slot.agent_pid < 0:
        time.sleep(0.01)
    print(json.dumps({"bwrap": slot.proc.pid, "launcher": slot.launcher_pid(), "agent": slot.agent_pid,
                      "ns": os.readlink(f"/proc/{slot.launcher_pid()}/ns/pid")}), flush=True)
    time.sleep(300)


def check(_opts: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="slot-nocap-check-", dir="/var/tmp"))
    try:
        checks = Checks(Project(work))
        checks.run_all()
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    print("\nwhat differs from one bwrap per run:")
    for line in checks.differs:
        print(f"  - {line}")
    failed = [name for name, ok, _ in checks.results if not ok]
    print(f"\n{len(checks.results) - len(failed)} of {len(checks.results)} hold" + (f"; FAILED: {failed}" if failed else ""))
    return 1 if failed else 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--launcher":
        Launcher(int(sys.argv[2]), json.loads(sys.argv[3])).serve()
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if len(sys.argv) == 3 and sys.argv[1] == "--hold":
        hold(sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--none-ms", type=float, default=5.5, help="isolation: none's CPU a run (process_bench.py)")
    parser.add_argument("--check", action="store_true", help="prove the isolation instead; exit 1 if a property fails")
    opts = parser.parse_args()
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        print("needs Linux on x86_64 (bwrap; the keyctl syscall numbers)")
        return 2
    return check(opts) if opts.check else bench(opts)


if __name__ == "__main__":
    sys.exit(main())
