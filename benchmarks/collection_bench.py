"""What each xdist worker of the README's test command pays before its first test: collecting the suite (issue 37).

    .venv/bin/python benchmarks/collection_bench.py                    # this checkout, 3 rounds
    .venv/bin/python benchmarks/collection_bench.py --against 88f5037  # and REV's, interleaved round by round

Every worker (`-n auto`: four on 2 CPUs) collects every test module before xdist hands out the first test, so the
CPU of `pytest --collect-only -q -n 0 -p no:cacheprovider` is paid four times, at once, at the start of every run.
Printed: user+sys CPU seconds of that command (the bytecode caches warm: one unmeasured run first), its median
against the target (≤ 3 s), and with --against the median ratio to REV's (a scratch worktree of REV, collected with
this checkout's virtualenv). Then what importing each library that collection used to import costs, alone in a
fresh interpreter: the judge's SDK, scipy, Ray (each worker imports the first two anyway when it runs a test
that uses them; only the worker running the Ray group needs Ray). CPU, not wall time: the machine is shared.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COLLECT = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"]
TARGET_S = 3.0
LIBRARIES = ("anthropic", "scipy.stats", "ray", "textual.app", "hypothesis")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(argv: list[str], cwd: Path) -> float:
    """User+sys CPU seconds of one run of argv (and its children), which must succeed."""
    before = _children_cpu()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return _children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also collect REV's suite (a scratch git worktree)")
    args = parser.parse_args()
    trees = {"this checkout": REPO}
    with tempfile.TemporaryDirectory(prefix="collection-bench-") as scratch:
        if args.against:
            other = Path(scratch) / "against"
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(other), args.against],
                           check=True, capture_output=True)
            trees[args.against] = other
        try:
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for tree in trees.values():
                cpu_of(COLLECT, tree)  # writes the bytecode caches (a fresh worktree has none)
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    cpu[name].append(cpu_of(COLLECT, tree))
        finally:
            if args.against:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(trees[args.against])],
                               capture_output=True)
    print("pytest --collect-only -q -n 0 -p no:cacheprovider (one worker's collection), CPU s")
    here = statistics.median(cpu["this checkout"])
    for name, runs in cpu.items():
        median = statistics.median(runs)
        print(f"  {name:<16} median {median:5.2f}  runs {' '.join(f'{c:.2f}' for c in runs)}  "
              f"/ target {TARGET_S:g} s = {median / TARGET_S:.2f}")
    if args.against:
        print(f"  this checkout / {args.against}: {here / statistics.median(cpu[args.against]):.2f}")
    print("importing alone in a fresh interpreter (median of 3), CPU s")
    bare = statistics.median(cpu_of([sys.executable, "-c", "pass"], REPO) for _ in range(3))
    for name in LIBRARIES:
        took = statistics.median(cpu_of([sys.executable, "-c", f"import {name}"], REPO) for _ in range(3))
        print(f"  {name:<12} {took - bare:5.2f}")


if __name__ == "__main__":
    main()
