"""scarbook's cost per run, as whole processes, against the floor any harness pays (issues 26.13, 38): one
command, every figure issue 38 asks for, printed as ratios.

    .venv/bin/python benchmarks/process_bench.py            # 1,000 and 10,000 runs, report, TUI, start-up
    .venv/bin/python benchmarks/process_bench.py --quick    # 200 and 1,000 runs, smaller report and TUI
    .venv/bin/python benchmarks/process_bench.py --parts runs --sizes 1000 --rounds 3

runs: a project of 100 cases (20 with --quick) whose agent is a trivial shell command (`sh -c 'cat
README.md > out.txt'`) and whose one check is `contains`. Each configuration is `scarbook eval --runs N
-j J -q` in a fresh process — the default (`isolation: auto`: the sandbox on Linux, its runs in slots where they
run — the first line says whether they do), `isolation: none` and `isolation: sandbox` (a bwrap per run), at -j1
and -j16 (`--configs` picks some) — started through a small wrapper that prints the process's own CPU time and how many
zombie children it holds at the end. The floor does per run only what any harness must: a temporary
folder, the seed copied in, the same agent spawned there, its file checked, the folder removed; serially,
and on 16 threads; and the same with the agent spawned through the sandbox's bwrap line (the floor any
sandboxed harness pays: bwrap's namespaces and mounts), so the sandbox's own cost and scarbook's share of
it are told apart. Within a round the configurations take turns (the order reversed every other round),
so a burst of load lands on all of them; each ratio is taken within a round, and the median is printed.

report: `scarbook report SESSION --html` of one session of 2,000 runs (500 with --quick) in a history
that holds only it, then in one of 20,000 runs (5,000): the CPU time of each (the ratio should be ~1).

tui: the library over 1,000 cases (200 with --quick) and a 10,000-run history (2,000): the time from
launch to the first paint, to a key typed at the first paint being on the screen (the filter shows it),
and to the rows holding their history figures.

start-up: `scarbook --help` and `scarbook eval --dry-run` (the 100 cases, and the repository's own 4)
against `python -c pass`, 10 interleaved runs: wall time and the process's CPU time, each as a ratio;
beside them a process that only imports click, yaml and msgspec, the floor under a dry run.

Targets (issue 38, on a quiet 2-core machine): default <= 1.5x none at -j16; per run at 10,000 runs
<= 1.2x per run at 1,000; -j16 >= 1.5x faster than -j1 unconfined; unconfined -j1 <= 1.5x the serial
floor; 0 zombies; report within 1.2x; TUI keys <= 1 s; --help <= 3x python -c pass.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

AGENT = ["sh", "-c", "cat README.md > out.txt"]
SEED = "# tiny-agent\n\nA small agent that answers in one line.\n" * 4
_script = Path(sys.executable).with_name("scarbook")
SCARBOOK = [str(_script)] if _script.exists() else [sys.executable, "-c", "from scarbook.entry import main; main()"]

# scarbook's own program, plus what it held and spent by its end: its own CPU (not its agents') and its
# zombie children (after the session, as the process is about to exit)
WRAPPED = """
import json, os, resource, sys
from scarbook.entry import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
zombies = 0
for tid in os.listdir("/proc/self/task"):
    try:
        kids = open(f"/proc/self/task/{tid}/children").read().split()
    except OSError:
        continue
    for kid in kids:
        try:
            zombies += open(f"/proc/{kid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            pass
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "zombies": zombies, "cpu": me.ru_utime + me.ru_stime}), file=sys.__stderr__)
"""


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def make_project(root: Path, n_cases: int, isolation: str) -> None:
    (root / "cases").mkdir(parents=True)
    argv = ", ".join(f'"{a}"' for a in AGENT)
    isolation_line = "" if isolation == "default" else f"isolation: {isolation}\n"
    (root / "scarbook.yaml").write_text(f"agent: {{type: command, argv: [{argv}]}}\n{isolation_line}")
    for i in range(n_cases):
        case = root / "cases" / f"case-{i:03d}"
        (case / "seed").mkdir(parents=True)
        (case / "seed" / "README.md").write_text(SEED)
        (case / "case.yaml").write_text(f"id: case-{i:03d}\ntask: copy the README to out.txt\nchecks:\n"
                                        "  - {type: contains, path: out.txt, text: tiny-agent}\n")


def _one_floor_run(seed_dir: Path, wrap: Callable[[list[str], Path], list[str]] | None) -> None:
    d = tempfile.mkdtemp()
    shutil.copytree(seed_dir, d, dirs_exist_ok=True)
    subprocess.run(wrap(AGENT, Path(d)) if wrap else AGENT, cwd=d, check=True)
    assert "tiny-agent" in Path(d, "out.txt").read_text()
    shutil.rmtree(d)


def floor(n_runs: int, seed_dir: Path, threads: int, wrap: Callable[[list[str], Path], list[str]] | None = None) -> dict:
    start = time.perf_counter()
    if threads == 1:
        for _ in range(n_runs):
            _one_floor_run(seed_dir, wrap)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda _: _one_floor_run(seed_dir, wrap), range(n_runs)))
    return {"wall": time.perf_counter() - start, "zombies": 0, "cpu": None}


def eval_once(root: Path, runs_per_case: int, jobs: int) -> dict:
    shutil.rmtree(root / "workspaces", ignore_errors=True)  # every round starts with an empty history
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", WRAPPED, "-C", str(root), "eval", "--runs", str(runs_per_case),
                          "-j", str(jobs), "-q", "--no-judge-cache"], capture_output=True, text=True)
    took = time.perf_counter() - start
    seen = json.loads(out.stderr.strip().splitlines()[-1])
    if seen["code"] != 0:
        sys.exit(f"scarbook eval exited {seen['code']} in {root}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return {"wall": took, "zombies": seen["zombies"], "cpu": seen["cpu"]}


ALL_CONFIGS = [("floor, serial", "floor", 1), ("floor, 16 threads", "floor", 16), ("none", "none", 1),
               ("none", "none", 16), ("default (auto)", "default", 1), ("default (auto)", "default", 16),
               ("bwrap floor serial", "bwrap-floor", 1), ("bwrap floor 16 th.", "bwrap-floor", 16),
               ("isolation: sandbox", "sandbox", 1), ("isolation: sandbox", "sandbox", 16)]
CONFIGS = ALL_CONFIGS


def bench_runs(tmp: Path, sizes: list[int], n_cases: int, rounds: dict[int, int]) -> list[str]:
    lines = []
    roots = {}
    for isolation in ("none", "default", "sandbox"):
        roots[isolation] = tmp / f"proj-{isolation}"
        make_project(roots[isolation], n_cases, isolation)
    seed_dir = roots["none"] / "cases" / "case-000" / "seed"
    floor(20, seed_dir, 1)  # warm the page cache and the fork path
    from scarbook.agents.sandbox import require_sandbox

    box = require_sandbox(roots["default"])  # the sandbox a session of that project gets (SandboxUnavailable: no bwrap)
    from scarbook.agents.slots import why_no_slots

    why = why_no_slots()
    lines.append(f"the default (auto) runs the sandbox {'in slots' if why is None else f'a bwrap per run ({why})'}")

    def wrap(argv: list[str], workspace: Path) -> list[str]:
        return box.wrap(argv, workspace)
    results: dict[tuple[int, str, int], list[dict]] = {}
    for n in sizes:
        per_case = n // n_cases
        for r in range(rounds[n]):
            order = CONFIGS if r % 2 == 0 else CONFIGS[::-1]
            for name, kind, jobs in order:
                got = (floor(n, seed_dir, jobs) if kind == "floor" else floor(n, seed_dir, jobs, wrap)
                       if kind == "bwrap-floor" else eval_once(roots[kind], per_case, jobs))
                results.setdefault((n, kind, jobs), []).append(got)
                print(f"  {n:>6} runs  {name:<18} -j{jobs:<3} {got['wall']:8.2f} s  ({load()})", flush=True)
    lines.append(f"{'runs':>6}  {'configuration':<18} {'-j':>3}  {'wall s':>8} {'ms/run':>7} {'main CPU ms/run':>16} "
                 f"{'zombies':>8}")
    for n in sizes:
        for name, kind, jobs in CONFIGS:
            got = results[(n, kind, jobs)]
            wall = statistics.median(g["wall"] for g in got)
            cpu = [g["cpu"] for g in got if g["cpu"] is not None]
            lines.append(f"{n:>6}  {name:<18} {jobs:>3}  {wall:8.2f} {1000 * wall / n:7.2f} "
                         f"{(f'{1000 * statistics.median(cpu) / n:.2f}' if cpu else '-'):>16} "
                         f"{max(g['zombies'] for g in got):>8}")

    def ratio(a: tuple[int, str, int], b: tuple[int, str, int], scale: float = 1.0) -> str:
        if a not in results or b not in results:
            return "-"
        pairs = [x["wall"] / y["wall"] * scale for x, y in zip(results[a], results[b], strict=False)]
        return f"{statistics.median(pairs):.2f}" + (f" ({min(pairs):.2f}-{max(pairs):.2f})" if len(pairs) > 1 else "")

    lines.append("ratios (median of the rounds' ratios; min-max):")
    for n in sizes:
        lines.append(f"  {n:>6} runs: default/none -j16 {ratio((n, 'default', 16), (n, 'none', 16))} (<= 1.5); "
                     f"-j1 {ratio((n, 'default', 1), (n, 'none', 1))}; none -j1 / serial floor "
                     f"{ratio((n, 'none', 1), (n, 'floor', 1))} (<= 1.5); none -j16 / 16-thread floor "
                     f"{ratio((n, 'none', 16), (n, 'floor', 16))}; none -j1 / -j16 "
                     f"{ratio((n, 'none', 1), (n, 'none', 16))} (>= 1.5); floor serial / 16 threads "
                     f"{ratio((n, 'floor', 1), (n, 'floor', 16))}")
        lines.append(f"  {n:>6} runs, the sandbox's own cost apart, -j16: bwrap floor / floor "
                     f"{ratio((n, 'bwrap-floor', 16), (n, 'floor', 16))} (what bwrap adds to a bare spawn); "
                     f"default / bwrap floor {ratio((n, 'default', 16), (n, 'bwrap-floor', 16))} (against none / floor "
                     f"{ratio((n, 'none', 16), (n, 'floor', 16))}: scarbook's share); -j1: bwrap floor / floor "
                     f"{ratio((n, 'bwrap-floor', 1), (n, 'floor', 1))}, default / bwrap floor "
                     f"{ratio((n, 'default', 1), (n, 'bwrap-floor', 1))}")
    for n in sizes:
        lines.append(f"  {n:>6} runs, isolation: sandbox (a bwrap per run): sandbox/none -j16 "
                     f"{ratio((n, 'sandbox', 16), (n, 'none', 16))}; -j1 {ratio((n, 'sandbox', 1), (n, 'none', 1))}; "
                     f"default/sandbox -j16 {ratio((n, 'default', 16), (n, 'sandbox', 16))}")
    if len(sizes) > 1:
        small, big = sizes[0], sizes[-1]
        for kind, jobs in (("none", 16), ("default", 16), ("sandbox", 16), ("none", 1), ("default", 1), ("sandbox", 1)):
            if (big, kind, jobs) not in results:
                continue
            a = statistics.median(g["wall"] for g in results[(big, kind, jobs)]) / big
            b = statistics.median(g["wall"] for g in results[(small, kind, jobs)]) / small
            lines.append(f"  a run at {big} runs / a run at {small}: {kind} -j{jobs} {a / b:.2f} (<= 1.2)")
    zombies = max(g["zombies"] for got in results.values() for g in got)
    lines.append(f"  zombie children at the end of any session: {zombies} (target 0)")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200 and 1,000 runs of 20 cases; smaller report and TUI")
    ap.add_argument("--parts", default="runs,report,tui,startup", help="which parts (comma-separated)")
    ap.add_argument("--sizes", default=None, help="run counts (default 1000,10000; --quick 200,1000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds at each size but the largest (default 3)")
    ap.add_argument("--big-rounds", type=int, default=1, help="rounds at the largest size (default 1)")
    ap.add_argument("--configs", default=None,
                    help="run configurations as kind:jobs (e.g. none:16,default:16,sandbox:16; default all)")
    args = ap.parse_args()
    if args.configs:
        global CONFIGS
        wanted = {tuple(c.split(":")) for c in args.configs.split(",")}
        CONFIGS = [c for c in ALL_CONFIGS if (c[1], str(c[2])) in wanted]
    parts = set(args.parts.split(","))
    sizes = [int(s) for s in (args.sizes or ("200,1000" if args.quick else "1000,10000")).split(",")]
    n_cases = 20 if args.quick else 100
    rounds = {n: (args.big_rounds if n == sizes[-1] and len(sizes) > 1 else args.rounds) for n in sizes}
    out: list[str] = [f"process_bench{' --quick' if args.quick else ''}: {load()} at the start"]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    with tempfile.TemporaryDirectory() as tmp:
        if "runs" in parts:
            out += ["", f"runs ({n_cases} cases, a trivial shell agent, one contains check):",
                    *bench_runs(Path(tmp), sizes, n_cases, rounds)]
        if "report" in parts:
            from process_bench_more import bench_report

            out += ["", *bench_report(Path(tmp), 500 if args.quick else 2000, 5000 if args.quick else 20000)]
        if "tui" in parts:
            from process_bench_more import bench_tui

            out += ["", *bench_tui(Path(tmp), 200 if args.quick else 1000, 10)]
        if "startup" in parts:
            from process_bench_more import bench_startup

            out += ["", *bench_startup(Path(tmp))]
    out.append(f"{load()} at the end")
    print("\n" + "\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
