"""A capability-free sandbox slot: one bwrap per concurrency slot, no namespace and no mount per run (issue 38).
Built on this design, the slot is scarbook's own now (`isolation: slot`: agents/slots.py, proc/slot.py, slot_pool.py,
slot_launcher.py): this bench times the product's Slot against a bare spawn and one bwrap per run. The product has
moved on from the design below: its launcher holds CAP_SYS_ADMIN of the slot's user namespace and gives each run a
mount namespace of its own with the run's folder at its real path (no rename, no slot folder, no root needed).
The isolation proofs that were its --check are tests/agents/test_slot.py and test_slot_failures.py (through
`scarbook eval`). The measurements and the --check results below are the prototype's (its own launcher).

    .venv/bin/python benchmarks/slot_nocap_bench.py                  # 300 runs a configuration, -j1 and -j16, 3 rounds
    .venv/bin/python benchmarks/slot_nocap_bench.py --runs 500 --rounds 5 --jobs 16

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
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarbook.proc.slot import Slot, SlotRun  # noqa: E402

AGENT = ["sh", "-c", "cat README.md > out.txt"]
SEED = "# tiny-agent\n\nA small agent that answers in one line.\n"

class Project:
    """A project folder with workspaces/, runs' folders made as scarbook makes them, and the three ways to run."""

    def __init__(self, root: Path, session: str = "S") -> None:
        from dataclasses import replace

        from scarbook.agents.sandbox import require_sandbox

        self.root, self.workspaces = root, root / "workspaces"
        self.session = self.workspaces / session
        self.session.mkdir(parents=True)
        self.box = replace(require_sandbox(root), private=(str(self.workspaces),))
        self.count = 0
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

    def open_slot(self) -> Slot:
        """A slot as scarbook's pool makes one (proc/slot_pool.py)."""
        from scarbook.agents.slots import slot_line

        return Slot(slot_line(self.box, AGENT[0], self.env), [str(self.workspaces)],
                    [*self.box.hidden, "/dev/shm", "/dev/mqueue", "/dev/pts"])

    def slot_run(self, slot: Slot) -> None:
        run_dir, io_dir = self.new_run()
        out = bytearray()
        job = SlotRun(AGENT, self.env, run_dir, tuple(str(io_dir / n) for n in ("transcript.jsonl", "usage.jsonl")),
                      None, out.extend, None, 60.0)
        code, _timed_out = _thread_loop().run_until_complete(slot.run(job))
        self.done(run_dir, code if code is not None else -1)


_loops = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's event loop (a slot run is waited for on one), made once."""
    loop = getattr(_loops, "loop", None)
    if loop is None:
        loop = _loops.loop = asyncio.new_event_loop()
    return loop


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--none-ms", type=float, default=5.5, help="isolation: none's CPU a run (process_bench.py)")
    opts = parser.parse_args()
    if sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64") or os.geteuid() != 0:
        print("needs Linux on x86_64 or aarch64, as root (scarbook's sandbox slots: scarbook/agents/slots.py)")
        return 2
    return bench(opts)


if __name__ == "__main__":
    sys.exit(main())
