"""Where one sandboxed run's bwrap cost goes, flag by flag (issue 38): N spawns of a trivial program per
configuration, each against the bare spawn of the same program, as ratios.

    .venv/bin/python benchmarks/bwrap_cost_bench.py                     # 500 spawns a configuration, -j16, 2 rounds
    .venv/bin/python benchmarks/bwrap_cost_bench.py --spawns 200 --threads 1 --rounds 3

Two series, each one flag at a time:
- "+ flag": `bwrap --ro-bind / / PROG` (a mount namespace and one bind: the least bwrap does) with one
  flag added — each namespace, `--dev`, `--proc`, a tmpfs, binds, `--die-with-parent`, `--new-session`,
  the capability drop;
- "full - flag": scarbook's own line (`Sandbox.wrap`, for a workspace with the transcript and usage
  files and the recorder's socket bound) with one part taken out or replaced by a cheaper equivalent
  (e.g. /dev built from a few device binds instead of bwrap's `--dev`).

Per configuration: the wall time of the N spawns on `--threads` threads (the -j of a session), the CPU used
(from a cgroup v1 cpuacct group made for this process where it can make one — root —: exact, and it holds
this process's spawning too, the same in every configuration; else the spawned processes' own, from
getrusage, the sandbox's PID 1 included: this process is their subreaper and reaps them), and the CPU of the kernel's worker threads meanwhile and for a second after (`kworker`:
a network namespace is torn down there, in `cleanup_net`, after its last process is gone; a machine
loaded by others adds its own share to this column). Rounds take the configurations in turn (reversed
every other round); each ratio is taken within a round and the median printed. --only REGEX picks some.

Measured (2-core shared VM at a load of 19-29, root, bwrap 0.11.0, 20 host mounts, 300-400 spawns a
configuration on 16 threads, 3-4 rounds, 2026-12-05), CPU a spawn from the cgroup (this process's spawning
included) plus kworker: bare 0.7-0.8 ms; `bwrap --ro-bind / /` +1.6 ms (bwrap's exec, its two extra
processes, a mount namespace, the recursive bind and pivot_root); each namespace alone on that line: user
+0.3, pid +0.6, net +0.9 (+0.4 of it in kworker: cleanup_net), ipc +0.4, uts +0.3, cgroup +0.2; --dev +0.9,
--proc +0.8, a tmpfs +0.3, four binds +0.8, --die-with-parent/--new-session/--cap-drop +0.1-0.2 each.
scarbook's full line: 6.5-7.0 ms, +5.8-6.3 over bare (8.2-9.5x). Taken out of the full line: the network
namespace (--share-net, or one empty netns made once and joined by every spawn) 0.0-0.3 ms, the UTS or the
user namespace 0.0, --dev 0.8-1.3, --proc 0.2-0.8, the tmpfs mounts ~0.2; --die-with-parent,
--new-session, --cap-drop nothing measurable. A `perf record -a -g` of the full line's spawns: 88% of
bwrap's CPU in the kernel — 47% reading /proc/self/mountinfo (bwrap reads it whole after every bind, 12
times a spawn here, 15 with a run's transcript, usage and recorder binds), 16% mount(2) (49 calls, 19 of
them re-making the host's submounts read-only), 12% pivot_root (chroot_fs_refs walks every task on the
machine), 7% readlink; user space 12%. So a spawn's cost is bwrap's mount work, per bind, not its
namespaces: the namespaces that could be shared or dropped save nothing measurable.
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import os
import re
import resource
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarbook.agents.sandbox import DROP_CAPABILITIES, Sandbox, find_bwrap  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 1
_libc = ctypes.CDLL(None, use_errno=True)
TICK = os.sysconf("SC_CLK_TCK")


def kworker_cpu() -> float:
    """Seconds of CPU every kernel worker thread has used so far."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if comm.startswith("kworker"):
            total += int(rest[11]) + int(rest[12])
    return total / TICK


def reap_orphans() -> None:
    """The sandboxes' PID 1s outlive their bwrap (issue 38.3): as subreaper this process gets them."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)


def empty_netns() -> int | None:
    """An fd of a new network namespace holding only a loopback that is up, made on a thread that then
    goes back to this process's own (root only: joining one needs CAP_SYS_ADMIN where this process is)."""
    if os.geteuid() != 0:
        return None
    got: list[int] = []

    def make() -> None:
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        if _libc.unshare(CLONE_NEWNET) != 0:
            return
        with socket.socket() as sock:  # lo up, as bwrap does in the one it makes
            flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack("16sH", b"lo", 0)))[1]
            fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))
        got.append(os.open("/proc/thread-self/ns/net", os.O_RDONLY))
        _libc.setns(own, CLONE_NEWNET)
        os.close(own)

    thread = threading.Thread(target=make)
    thread.start()
    thread.join()
    return got[0] if got else None


def cpu_group() -> Path | None:
    """A cgroup v1 cpuacct group holding this process (so every process it starts), if one can be made:
    its count is exact, where getrusage's is sampled at each tick (and split between user and system
    time by that sample on this machine)."""
    group = Path("/sys/fs/cgroup/cpuacct") / f"bwrap-cost-bench-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def group_cpu(group: Path | None) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9 if group else 0.0


def measure(argv: list[str], spawns: int, threads: int, cwd: str, netns: int | None = None,
            group: Path | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    kw, in_group = kworker_cpu(), group_cpu(group)
    start = time.perf_counter()
    join = (lambda: _libc.setns(netns, CLONE_NEWNET)) if netns is not None else None
    with ThreadPoolExecutor(threads, initializer=join) as pool:
        codes = list(pool.map(lambda _: subprocess.call(argv, cwd=cwd, stdin=subprocess.DEVNULL), range(spawns)))
    wall = time.perf_counter() - start
    reap_orphans()
    time.sleep(1.0)  # a torn-down network namespace's cleanup runs after its last process is gone
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if any(codes):
        sys.exit(f"{' '.join(argv)} failed: exit codes {sorted(set(codes))}")
    children = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "children": children, "sys": after.ru_stime - before.ru_stime,
            "group": group_cpu(group) - in_group, "kworker": kworker_cpu() - kw}


REUSED = "full, one empty netns for all (--share-net)"


def configurations(bwrap: str, work: Path, prog: list[str]) -> list[tuple[str, list[str]]]:
    ws = work / "workspaces" / "s" / "c" / "0"
    ws.mkdir(parents=True)
    files = [str(work / "workspaces" / "s" / "c" / name) for name in ("0.transcript.jsonl", "0.usage.jsonl")]
    for f in files:
        Path(f).touch()
    sandbox = Sandbox(bwrap, work, private=(str(work / "workspaces"),))
    full = sandbox.wrap(prog, ws, tuple(files))
    base = [bwrap, "--ro-bind", "/", "/"]
    binds = [a for d in ("/usr", "/etc", "/var", str(ws)) for a in ("--bind", d, d)]
    plus = [("bwrap --ro-bind / /", []), ("+ --unshare-user", ["--unshare-user"]), ("+ --unshare-pid", ["--unshare-pid"]),
            ("+ --unshare-net", ["--unshare-net"]), ("+ --unshare-ipc", ["--unshare-ipc"]),
            ("+ --unshare-uts", ["--unshare-uts"]), ("+ --unshare-cgroup", ["--unshare-cgroup"]),
            ("+ --unshare-all", ["--unshare-all"]), ("+ --dev /dev", ["--dev", "/dev"]),
            ("+ --proc /proc", ["--unshare-pid", "--proc", "/proc"]), ("+ --tmpfs /tmp", ["--tmpfs", "/tmp"]),
            ("+ 4 --bind", binds), ("+ --die-with-parent", ["--die-with-parent"]),
            ("+ --new-session", ["--new-session"]), ("+ --cap-drop ALL", ["--cap-drop", "ALL"])]
    out = [("bare spawn (no bwrap)", prog)]
    out += [(name, base[:1] + extra + base[1:] + prog) for name, extra in plus]
    out.append(("scarbook's full line", full))
    cut = full.index("--")

    def without(*flags: str, replace: list[str] | None = None) -> list[str]:
        args, i = [], 0
        while i < cut:
            arity = {"--unshare-all": 1, "--die-with-parent": 1, "--new-session": 1, "--share-net": 1}.get(full[i], 0)
            if full[i] in ("--dev", "--proc", "--tmpfs", "--remount-ro", "--chdir"):
                arity = 2
            elif full[i] in ("--ro-bind", "--bind", "--dev-bind", "--cap-drop"):
                arity = 3 if full[i] != "--cap-drop" else 2
            arity = arity or 1
            if full[i] in flags:
                if replace is not None and full[i] == flags[0]:
                    args += replace
                    replace = None
            else:
                args += full[i:i + arity]
            i += arity
        return args + full[cut:]

    small_dev = ["--tmpfs", "/dev"] + [a for d in ("null", "zero", "full", "random", "urandom", "tty")
                                       for a in ("--dev-bind", f"/dev/{d}", f"/dev/{d}")]
    share_net = full[:1] + ["--share-net"] + full[1:]
    out += [("full - the network namespace (--share-net)", share_net),
            (REUSED, share_net),
            ("full - the UTS namespace", without("--unshare-all", replace=[
                "--unshare-user-try", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-cgroup-try"])),
            ("full - the user namespace", without("--unshare-all", replace=[
                "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"])),
            ("full - --dev (a tmpfs + 6 device binds)", without("--dev", replace=small_dev)),
            ("full - --dev", without("--dev")),
            ("full - --proc", without("--proc")),
            ("full - --die-with-parent", without("--die-with-parent")),
            ("full - --new-session", without("--new-session")),
            ("full - the tmpfs mounts", without("--tmpfs", "--remount-ro"))]
    if DROP_CAPABILITIES:
        out.append(("full - --cap-drop", without("--cap-drop")))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawns", type=int, default=500)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default="", help="run only the configurations whose name this regular expression finds")
    opts = parser.parse_args()
    bwrap = find_bwrap()
    if sys.platform != "linux" or bwrap is None:
        print("needs Linux and bwrap")
        return 2
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    netns = empty_netns()
    group = cpu_group()
    work = Path(tempfile.mkdtemp(prefix="bwrap-cost-"))
    try:
        prog = [shutil.which("true") or "/bin/true"]
        configs = configurations(bwrap, work, prog)
        if opts.only:
            configs = [configs[0]] + [c for c in configs[1:] if re.search(opts.only, c[0])]
        measure(configs[-1][1], 20, 4, str(work))  # warm up
        rounds: list[dict[str, dict]] = []
        for r in range(opts.rounds):
            got: dict[str, dict] = {}
            for name, argv in (configs if r % 2 == 0 else configs[::-1]):
                reuse = name.startswith(REUSED)
                if reuse and netns is None:
                    continue
                got[name] = measure(argv, opts.spawns, opts.threads, str(work), netns if reuse else None, group)
            rounds.append(got)
        one, five, _ = os.getloadavg()
        print(f"{opts.spawns} spawns of {prog[0]} a configuration on {opts.threads} threads, {opts.rounds} rounds "
              f"(load {one:.1f}, 5 min {five:.1f}, {os.cpu_count()} cores; uid {os.geteuid()}; {bwrap})")
        cpu = "group" if group else "children"
        print(f"{'configuration':<46} {'wall':>8} {'CPU':>8} {'kworker':>8}   ratios to the bare spawn: wall, CPU + kworker")
        print(f"{'':<46} {'':>8} {'(' + cpu + ')':>8}")
        bare = configs[0][0]
        for name, _ in configs:
            if name not in rounds[0]:
                continue
            med = {k: statistics.median(rd[name][k] for rd in rounds) for k in ("wall", cpu, "kworker")}
            per = 1000 / opts.spawns
            wall_r = statistics.median(rd[name]["wall"] / rd[bare]["wall"] for rd in rounds)
            cpu_r = statistics.median((rd[name][cpu] + rd[name]["kworker"]) / max(1e-9, rd[bare][cpu] + rd[bare]["kworker"])
                                      for rd in rounds)
            print(f"{name:<46} {med['wall'] * per:6.2f}ms {med[cpu] * per:6.2f}ms {med['kworker'] * per:6.2f}ms"
                  f"   {wall_r:5.2f}x {cpu_r:5.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if group:  # back to where this process was, then the group goes
            (group.parent / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
