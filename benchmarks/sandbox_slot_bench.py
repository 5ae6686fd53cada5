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

Measured (2-core shared machine at a load of 21-28, 150 runs at -j16, 3 rounds, --parts, 2026-12-05): CPU a
run bare 2.5-2.8 ms, one bwrap per run 8.2-10.7 ms (3.30x bare), the slots 7.8-8.6 ms (3.16x bare; slots / bwrap
0.96x CPU, 0.99x wall); a slot costs ~0.1 s of CPU to start, once a session. Of the slots' cost, the launcher's
fork, its protocol and a PID namespace alone are 1.93x bare, the mount, IPC and UTS namespaces and /proc about
nothing more (1.86x), and the run's mounts (fresh tmpfs over /tmp, home, /dev/shm and workspaces/, the folders
cloned back) the rest. So this prototype, though it starts no bwrap per run, saves almost nothing: what a run's
sandbox costs is its mounts and a process to hold its namespaces, not bwrap's exec.
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
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID = 0x00020000, 0x04000000, 0x08000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
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


def _run_first(libc: _Libc, request: dict, fds: list[int], status: socket.socket, part: str) -> None:
    """The run's PID 1: its /proc, the program (no capability can pass to it), then its status."""
    code = 1
    try:
        if part != "pid":
            libc.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for cap in range(int(Path("/proc/sys/kernel/cap_last_cap").read_text()) + 1):
            libc.c.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        libc.c.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        header, data = struct.pack("Ii", CAP_V3, 0), ctypes.create_string_buffer(24)
        libc.check(libc.c.capget(ctypes.c_char_p(header), data), "capget")
        caps = bytearray(data.raw)
        caps[8:12] = caps[20:24] = bytes(4)  # inheritable: none
        libc.check(libc.c.capset(ctypes.c_char_p(header), ctypes.c_char_p(bytes(caps))), "capset")
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


def _start_run(libc: _Libc, own_ns: dict[int, int], config: dict, request: dict, fds: list[int],
               control: socket.socket) -> None:
    status = socket.socket(fileno=os.dup(fds[3]))
    try:
        libc.check(libc.c.setns(own_ns[CLONE_NEWPID], CLONE_NEWPID), "setns pid")  # else a 2nd unshare fails
        part = config["part"]  # how much of it (--parts): "pid", "namespaces" or all of it
        libc.check(libc.c.unshare(CLONE_NEWPID if part == "pid" else
                                  CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
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
    except OSError as exc:
        status.send(b"E" + str(exc).encode()[:4000])
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
    while True:
        fds = array.array("i")
        msg, ancdata, _flags, _addr = control.recvmsg(1 << 20, socket.CMSG_SPACE(4 * fds.itemsize))
        for _level, _kind, data in ancdata:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        if not msg:
            return
        _start_run(libc, own_ns, config, json.loads(msg), list(fds), control)
        for fd in fds:
            os.close(fd)
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
        self.slot_argv += ["--tmpfs", str(self.workspaces), "--bind", str(self.session), STAGE,
                           "--remount-ro", str(self.workspaces)]
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
                if part == "all":  # (else the run's folder is not mounted where it runs: no out.txt to see)
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
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp))
        names = ["bare", "bwrap", *(["slots:pid", "slots:namespaces"] if args.parts else []), "slots"]
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
    if group:  # back to where this process was, then the group goes
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
