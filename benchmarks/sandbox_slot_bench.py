"""A sandbox that outlives its runs, measured against one bwrap per run (issue 38): a prototype, not scarbook's.

    .venv/bin/python benchmarks/sandbox_slot_bench.py                 # 200 runs at -j16, 2 rounds
    .venv/bin/python benchmarks/sandbox_slot_bench.py --runs 500 --jobs 1 --rounds 3

Issue 38 asks the sandbox to cost a session at most 1.5x `isolation: none` at -j16, and one bwrap per run
(its user, mount, PID, network, IPC, UTS and cgroup namespaces and its mounts) costs more than that alone.
This script measures the way out it names: one long-lived bwrap per concurrency slot (a "slot"), whose
first process (this file, run with --launcher) starts each run it is sent in namespaces of the run's own,
keeping what the sandbox promises between runs:

- per run, the launcher takes new mount, PID, IPC and UTS namespaces; there it clones the folders the
  program needs (the project, the interpreter), covers /tmp, the home folder and /dev/shm with fresh
  tmpfs, and workspaces/ with one holding only the run's folder (cloned from the session folder the slot
  has staged under its /tmp, which the run's fresh /tmp then hides), mounts the clones back, forks the
  run's PID 1 (which gets a /proc of its own), and goes back to the slot's namespaces;
- the run's PID 1 keeps its capabilities (so the program cannot trace it) but drops the bounding,
  inheritable and ambient sets, then posix_spawns the program (setsid, exactly the environment sent);
  when it exits PID 1 reports its status as bwrap does (code, or 128+N after signal N) and exits, and the
  kernel kills what is left in the namespace. The driver gets a pidfd of it to kill the run.

Each configuration runs the same trivial agent (`sh -c 'cat README.md > out.txt'`) in a fresh folder per
run: bare (no sandbox), one bwrap per run (scarbook's own line, `Sandbox.wrap`), and the slots (started, and
through one run each, before the clock starts: a session pays that once). CPU is read
from a cgroup v1 cpuacct group made for the script when it can make one (root), which counts every process
of a configuration, the slots' included; else only the wall time is printed. Rounds interleave the
configurations; ratios are taken within a round and the median printed.

A fourth configuration, "slots:reuse", tries the other way: a run takes no mount namespace of its own (only PID,
IPC, UTS and a user namespace, for its own keyrings). The launcher mounts the run's folder into the slot's own
namespace and covers the staged session folder with an empty one for the run, and after it undoes both and puts
/tmp, home and /dev/shm back as they were at the slot's start (entries removed; the folders there given back their
mode, times and no extended attribute). /dev is read-only in the slots and /dev/shm a tmpfs of its own.

Measured (2-core shared machine at a load of 19-25, 150 runs at -j16, 3 rounds, --parts, 2026-12-05), CPU a run
against bare (2.0-2.4 ms): one bwrap per run 3.51x, the slots 3.69x (slots / bwrap 1.04x CPU, 1.00x wall), the
slots reusing their mount namespace 3.77x; the launcher's fork, protocol and a PID namespace alone 1.87x, with the
mount, IPC and UTS namespaces and /proc 2.16x. A slot costs ~0.1 s of CPU to start, once a session. So neither
saves anything over bwrap: what a run's sandbox costs is the mount work that shows it its own folder and fresh
scratch space (new tmpfs or mounts swapped in the slot's namespace alike, ~1.5x bare more), and a process to hold
its namespaces, not bwrap's exec.
"""

from __future__ import annotations

import argparse
import array
import ctypes
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

AGENT = ["sh", "-c", "cat README.md > out.txt"]
STAGE = "/tmp/.scarbook-stage"

# -- the launcher (runs inside a slot) -------------------------------------------------------------------
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = (
    0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
MNT_DETACH = 2
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_PIDFD_OPEN = 428, 429, 434  # the same number on every architecture
OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC, MOVE_MOUNT_F_EMPTY_PATH, AT_FDCWD = 1, 0o2000000, 4, -100
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, PR_SET_PDEATHSIG = 24, 47, 4, 1
CAP_V3 = 0x20080522


class _Libc:
    def __init__(self) -> None:
        self.c = ctypes.CDLL(None, use_errno=True)
        self.c.syscall.restype = ctypes.c_long

    def check(self, result: int, what: str) -> int:
        if result < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")
        return result

    def mount(self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        def enc(s: str | None) -> bytes | None:
            return None if s is None else s.encode()
        self.check(self.c.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
                   f"mount {target}")

    def clone_tree(self, path: str) -> int:
        return self.check(self.c.syscall(SYS_OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC),
                          f"open_tree {path}")

    def move_tree(self, fd: int, target: str) -> None:
        self.check(self.c.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH),
                   f"move_mount {target}")
        os.close(fd)


def _prepare_mounts(libc: _Libc, config: dict, request: dict) -> None:
    libc.mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the slot or another run
    visible = [(d, libc.clone_tree(d)) for d in config["visible"]]
    own = [(target, libc.clone_tree(os.path.join(STAGE, rel))) for target, rel in request["mounts"]]
    for d in [*config["hidden"], "/dev/shm"]:
        libc.mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for d, fd in visible:
        os.makedirs(d, exist_ok=True)
        libc.move_tree(fd, d)
    for d in config["private"]:  # after the visible folders: workspaces/ is inside the project
        libc.mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for target, fd in own:
        os.makedirs(target, exist_ok=True)
        libc.move_tree(fd, target)
    for d in config["private"]:
        libc.mount(None, d, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _drop_what_exec_could_gain(libc: _Libc) -> None:
    """Bounding, ambient and inheritable sets emptied: this process keeps its own capabilities (so a program it
    starts cannot trace it), but no program it execs can have one."""
    for cap in range(int(Path("/proc/sys/kernel/cap_last_cap").read_text()) + 1):
        libc.c.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.c.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = struct.pack("Ii", CAP_V3, 0), ctypes.create_string_buffer(24)
    libc.check(libc.c.capget(ctypes.c_char_p(header), data), "capget")
    caps = bytearray(data.raw)
    caps[8:12] = caps[20:24] = bytes(4)  # inheritable: none
    libc.check(libc.c.capset(ctypes.c_char_p(header), ctypes.c_char_p(bytes(caps))), "capset")


def _run_first(libc: _Libc, request: dict, fds: list[int], status: socket.socket, part: str) -> None:
    """The run's PID 1: its /proc, the program (no capability can pass to it), then its status."""
    code = 1
    try:
        if part != "pid":
            libc.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        if part == "reuse":  # a user namespace of its own (its own keyrings), whose full set exec must not pass on
            uid, gid = os.getuid(), os.getgid()
            libc.check(libc.c.unshare(CLONE_NEWUSER), "unshare user")
            for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
                Path(f"/proc/self/{name}").write_text(text)
        _drop_what_exec_could_gain(libc)
        os.chdir(request["cwd"])
        argv, env = request["argv"], request["env"]
        exe = argv[0] if "/" in argv[0] else (shutil.which(argv[0], path=env.get("PATH", os.defpath)) or argv[0])
        child = os.posix_spawn(exe, argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, fds[i], i) for i in range(3)],
                               setsid=True)
        for fd in fds[:3]:
            os.close(fd)
        while True:  # the run's orphans come here too: reaped until the program itself is
            pid, wait = os.waitpid(-1, 0)
            if pid == child:
                break
        code = os.WEXITSTATUS(wait) if os.WIFEXITED(wait) else 128 + os.WTERMSIG(wait)
    except OSError as exc:
        os.write(fds[2], f"bwrap: execvp {request['argv'][0]}: {exc.strerror}\n".encode())
    try:
        status.send(b"X" + struct.pack("i", code))
    finally:
        os._exit(0)


class _Reuse:
    """part "reuse": a run takes no mount namespace of its own. Its folder is mounted into the slot's (and the
    staged session folder covered by an empty folder) for the run; after it, that is undone and /tmp, the home
    folder and /dev/shm are put back as they were at the slot's start: what a run added removed, the folders that
    were there given back their mode, times and no extended attribute (a run could hide a byte in any)."""

    def __init__(self, libc: _Libc, config: dict) -> None:
        self.libc, self.private, self.made, self.target = libc, config["private"], "", ""
        self.roots = [*config["hidden"], "/dev/shm"]
        self.empty = "/tmp/.scarbook-empty"
        os.mkdir(self.empty, 0o555)
        _drop_what_exec_could_gain(libc)  # once: no program started from here can gain a capability
        self.skeleton: dict[str, tuple[int, int, int] | None] = {}  # path -> (mode, atime ns, mtime ns); None: a mount
        for root in self.roots:
            self._remember(root, os.lstat(root).st_dev)

    def _remember(self, path: str, dev: int) -> None:
        st = os.lstat(path)
        if st.st_dev != dev:
            self.skeleton[path] = None
            return
        self.skeleton[path] = (st.st_mode & 0o7777, st.st_atime_ns, st.st_mtime_ns)
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    self._remember(entry.path, dev)

    def bring_in(self, request: dict) -> None:
        (target, rel), = request["mounts"]
        clone = self.libc.clone_tree(os.path.join(STAGE, rel))
        self.libc.mount(self.empty, STAGE, None, MS_BIND)  # the session folder out of the run's reach
        self._private(writable=True)
        made = target
        while not os.path.isdir(os.path.dirname(made)):
            made = os.path.dirname(made)
        self.made, self.target = made, target  # the first folder made here: removed with what it holds after the run
        os.makedirs(target)
        self.libc.move_tree(clone, target)
        self._private(writable=False)

    def _private(self, *, writable: bool) -> None:
        for d in self.private:
            self.libc.mount(None, d, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (0 if writable else MS_RDONLY))

    def clean_up(self) -> None:
        for path in ("/proc", self.target):  # the run's /proc, then its folder
            if path:
                self.libc.c.umount2(path.encode(), MNT_DETACH)
        if self.made:
            self._private(writable=True)
            shutil.rmtree(self.made)
            self._private(writable=False)
            self.made = ""
        self.libc.c.umount2(STAGE.encode(), 0)
        for root in self.roots:
            self._clean(root)

    def _clean(self, path: str) -> None:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.path not in self.skeleton:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
                elif self.skeleton[entry.path] is not None:
                    self._clean(entry.path)
        mode, atime, mtime = self.skeleton[path] or (0, 0, 0)
        for name in os.listxattr(path, follow_symlinks=False):
            os.removexattr(path, name, follow_symlinks=False)
        os.chmod(path, mode, follow_symlinks=False)
        os.utime(path, ns=(atime, mtime), follow_symlinks=False)


def _start_run(libc: _Libc, own_ns: dict[int, int], config: dict, request: dict, fds: list[int],
               control: socket.socket, reuse: _Reuse | None) -> int:
    status = socket.socket(fileno=os.dup(fds[3]))
    try:
        libc.check(libc.c.setns(own_ns[CLONE_NEWPID], CLONE_NEWPID), "setns pid")  # else a 2nd unshare fails
        part = config["part"]  # how much of it (--parts): "pid", "namespaces", "reuse" or all of it
        if reuse is not None:
            reuse.bring_in(request)
        libc.check(libc.c.unshare(CLONE_NEWPID if part == "pid" else CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
                                  if part == "reuse" else CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS),
                   "unshare")
        if part == "all":
            _prepare_mounts(libc, config, request)
        first = os.fork()
        if first == 0:
            control.close()  # the run must never reach the launcher
            for fd in own_ns.values():
                os.close(fd)
            _run_first(libc, request, fds, status, part)
        pidfd = libc.check(libc.c.syscall(SYS_PIDFD_OPEN, first, 0), "pidfd_open")
        status.sendmsg([b"P"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [pidfd]))])
        os.close(pidfd)
        return first
    except OSError as exc:
        status.send(b"E" + str(exc).encode()[:4000])
        return 0
    finally:
        status.close()
        for flag in (CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS):  # back to the slot's own
            libc.check(libc.c.setns(own_ns[flag], flag), "setns")


def launcher(config: dict) -> None:
    libc = _Libc()
    libc.c.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    control = socket.socket(fileno=int(config["control_fd"]))
    control.set_inheritable(False)
    own_ns = {flag: os.open(f"/proc/self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
              for flag, name in ((CLONE_NEWNS, "mnt"), (CLONE_NEWIPC, "ipc"), (CLONE_NEWUTS, "uts"), (CLONE_NEWPID, "pid"))}
    reuse = _Reuse(libc, config) if config["part"] == "reuse" else None
    while True:
        fds = array.array("i")
        msg, ancdata, _flags, _addr = control.recvmsg(1 << 20, socket.CMSG_SPACE(4 * fds.itemsize))
        for _level, _kind, data in ancdata:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        if not msg:
            return
        first = _start_run(libc, own_ns, config, json.loads(msg), list(fds), control, reuse)
        for fd in fds:
            os.close(fd)
        if reuse is not None:  # the run's end, then the slot as it was before it, before the next request
            if first:
                os.waitpid(first, 0)
            reuse.clean_up()
        while True:  # the runs' PID 1s that ended
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


# -- the driver ------------------------------------------------------------------------------------------
class Slot:
    def __init__(self, argv_before: list[str], config: dict) -> None:
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {**config, "control_fd": theirs.fileno()}
        self.proc = subprocess.Popen([*argv_before, "--", sys.executable, "-I", __file__, "--launcher", json.dumps(config)],
                                     pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env={"PATH": os.defpath})
        theirs.close()

    def run(self, argv: list[str], ws: str, rel: str) -> int:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_r, out_w = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        request = {"argv": argv, "env": {"PATH": os.defpath}, "cwd": ws, "mounts": [[ws, rel]]}
        self.control.sendmsg([json.dumps(request).encode()],
                             [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null, out_w, out_w, theirs.fileno()]))])
        for fd in (null, out_w):
            os.close(fd)
        theirs.close()
        code, pidfd = None, None
        while pidfd is None:  # the run may be over before its pidfd is sent
            msg, anc, _flags, _addr = ours.recvmsg(4096, socket.CMSG_SPACE(4))
            if msg[:1] == b"X":
                code = struct.unpack("i", msg[1:5])[0]
            elif msg[:1] == b"P":
                pidfd = struct.unpack("i", anc[0][2][:4])[0]
            else:
                raise SystemExit(f"the slot could not start a run: {msg[1:].decode()}")
        while os.read(out_r, 65536):
            pass
        os.close(out_r)
        os.close(pidfd)
        if code is None:
            got = ours.recv(64)
            code = struct.unpack("i", got[1:5])[0] if got[:1] == b"X" else -9
        ours.close()
        return code

    def close(self) -> None:
        self.control.close()
        self.proc.wait()


class Bench:
    def __init__(self, tmp: Path) -> None:
        from scarbook.agents.sandbox import DROP_CAPABILITIES, require_sandbox

        self.project = tmp / "project"
        self.workspaces = self.project / "workspaces"
        self.session = self.workspaces / "S"
        self.session.mkdir(parents=True)
        self.box = replace(require_sandbox(self.project), private=(str(self.workspaces),))
        shown = [*self.box._visible_again(AGENT[0]), *self.box._visible_again(sys.executable)]
        self.visible = list(dict.fromkeys(d for d in [*shown, str(Path(__file__).resolve().parent)]
                                          if any(d == h or d.startswith(h + "/") for h in self.box.hidden)))
        self.slot_argv = [self.box.bwrap, "--unshare-all", "--die-with-parent",
                          *(() if DROP_CAPABILITIES else ("--cap-add", "ALL")),  # the launcher mounts per run
                          "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for d in self.box.hidden:
            self.slot_argv += ["--tmpfs", d]
        for d in self.visible:
            self.slot_argv += ["--ro-bind", d, d]
        self.slot_argv += ["--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--tmpfs", str(self.workspaces),
                           "--bind", str(self.session), STAGE, "--remount-ro", str(self.workspaces)]
        self.config = {"visible": self.visible, "hidden": list(self.box.hidden), "private": [str(self.workspaces)]}
        self.count = 0
        self.lock = threading.Lock()

    def workspace(self) -> tuple[str, str]:
        with self.lock:
            self.count += 1
            rel = f"c/{self.count}"
        ws = self.session / rel
        ws.mkdir(parents=True)
        (ws / "README.md").write_text("# tiny-agent\n")
        return str(ws), rel

    def done(self, ws: str, code: int) -> None:
        if code != 0 or not Path(ws, "out.txt").read_text().startswith("# tiny-agent"):
            raise SystemExit(f"a run failed (exit {code}) in {ws}")

    def bare(self, _: int) -> None:
        ws, _rel = self.workspace()
        self.done(ws, subprocess.run(AGENT, cwd=ws).returncode)

    def bwrap(self, _: int) -> None:
        ws, _rel = self.workspace()
        self.done(ws, subprocess.run(self.box.wrap(AGENT, Path(ws)), cwd=ws).returncode)

    def open_slots(self, jobs: int, part: str) -> list[Slot]:
        """The slots, each through one run (so its launcher has started): once a session, not per run."""
        free = [Slot(self.slot_argv, {**self.config, "part": part}) for _ in range(jobs)]
        for slot in free:
            ws, rel = self.workspace()
            slot.run(AGENT, ws, rel)
        return free

    def slots(self, free: list[Slot], n: int, jobs: int, part: str) -> None:
        lock = threading.Lock()

        def one(_: int) -> None:
            with lock:
                slot = free.pop()
            try:
                ws, rel = self.workspace()
                code = slot.run(AGENT, ws, rel)
                if part in ("all", "reuse"):  # (else the run's folder is not mounted where it runs: no out.txt)
                    self.done(ws, code)
            finally:
                with lock:
                    free.append(slot)
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, range(n)))


def _cpu_group() -> Path | None:
    """A cgroup v1 cpuacct group holding this process (and so every process it starts), if one can be made."""
    group = Path("/sys/fs/cgroup/cpuacct") / f"scarbook-slot-bench-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--launcher":
        launcher(json.loads(sys.argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--parts", action="store_true",
                    help="also slots that do part of a run's sandbox: its PID namespace only (the launcher's fork and "
                         "protocol), then its mount, IPC and UTS namespaces and /proc too (not its mounts)")
    args = ap.parse_args()
    group = _cpu_group()
    results: dict[str, list[tuple[float, float | None]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            bench = Bench(Path(tmp))
            names = ["bare", "bwrap", *(["slots:pid", "slots:namespaces"] if args.parts else []), "slots", "slots:reuse"]
            for r in range(args.rounds):
                for name in names if r % 2 == 0 else names[::-1]:
                    part = name.partition(":")[2] or "all"
                    free = bench.open_slots(args.jobs, part) if name.startswith("slots") else []
                    cpu0 = int((group / "cpuacct.usage").read_text()) if group else 0
                    start = time.perf_counter()
                    if name.startswith("slots"):
                        bench.slots(free, args.runs, args.jobs, part)
                    else:
                        with ThreadPoolExecutor(args.jobs) as pool:
                            list(pool.map(getattr(bench, name), range(args.runs)))
                    wall = (time.perf_counter() - start) * 1000 / args.runs
                    cpu = (int((group / "cpuacct.usage").read_text()) - cpu0) / 1e6 / args.runs if group else None
                    results.setdefault(name, []).append((wall, cpu))
                    for slot in free:
                        slot.close()
                    print(f"  {name:<16} -j{args.jobs}: {wall:7.2f} ms a run wall" + (f", {cpu:6.2f} ms CPU" if cpu else "")
                          + f"  (load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        if group:  # back to where this process was, then the group goes (also when a run failed)
            (group.parent / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()

    def ratio(a: str, b: str, i: int) -> str:
        pairs = [x[i] / y[i] for x, y in zip(results[a], results[b], strict=True) if x[i] and y[i]]
        return f"{statistics.median(pairs):.2f} ({min(pairs):.2f}-{max(pairs):.2f})" if pairs else "-"
    print(f"\n{args.runs} runs at -j{args.jobs}, {args.rounds} rounds (median of the rounds' ratios; min-max):")
    for what, i in (("wall", 0), ("CPU", 1)):
        print(f"  {what}: bwrap / bare {ratio('bwrap', 'bare', i)}; slots / bare {ratio('slots', 'bare', i)}; "
              f"slots / bwrap {ratio('slots', 'bwrap', i)}" + "".join(
                  f"; {n} / bare {ratio(n, 'bare', i)}" for n in results if n.startswith("slots:")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
