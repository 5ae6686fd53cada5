"""The cost of `isolation: sandbox` per run, as a ratio against `isolation: none` (a script, not a test).

    .venv/bin/python benchmarks/sandbox_bench.py            # 100 runs per mode, best of 3 rounds
    .venv/bin/python benchmarks/sandbox_bench.py --quick    # 30 runs per mode

Each mode runs the same case (a seeded README, one contains check)
through run_session at concurrency 1; a run's cost is the session's wall time / runs. Two agents:
`true` (the bare spawn, where the sandbox's fixed cost shows most) and a Python one-liner (a
start-up an agent really pays). Prints ms per run in each mode and the ratio sandbox / none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from scarbook.project import Project
from scarbook.run.runner import run_session
from scarbook.run.session import SessionPlan, ready_session

AGENTS = {"true": ["true"], "python -c": [sys.executable, "-c", "open('README.md').read()"]}


def make_project(root: Path, argv: list[str], isolation: str) -> Project:
    (root / "cases" / "c" / "seed").mkdir(parents=True)
    (root / "cases" / "c" / "seed" / "README.md").write_text("# tiny-agent\n")
    (root / "cases" / "c" / "case.yaml").write_text(
        "id: c\ntask: Read README.md\nchecks:\n  - {type: contains, path: README.md, text: tiny}\n")
    (root / "scarbook.yaml").write_text(f"agent: {{type: command, argv: {json.dumps(argv)}}}\n"
                                        f"isolation: {isolation}\nconcurrency: 1\ntimeout_s: 30\n")
    return Project.discover(root)


async def session(project: Project, runs: int) -> float:
    start = time.perf_counter()
    statuses = []
    plan = SessionPlan(list(project.load_cases().cases), runs, concurrency=1)
    async for ev in run_session(ready_session(project, plan)):
        if type(ev).__name__ == "SessionFinished":
            statuses = [r.status for r in ev.runs]
    took = time.perf_counter() - start
    assert statuses == ["pass"] * runs, statuses  # a sandbox that broke the agent would look cheap
    return took / runs


def per_run(argv: list[str], isolation: str, runs: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        root = Path(tempfile.mkdtemp(prefix="scarbook-sbx-"))
        try:
            best = min(best, asyncio.run(session(make_project(root, argv, isolation), runs)))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    runs, rounds = (30, 2) if args.quick else (100, 3)
    for name, argv in AGENTS.items():
        none = per_run(argv, "none", runs, rounds)
        sandbox = per_run(argv, "sandbox", runs, rounds)
        print(f"agent {name!r}: none {none * 1000:.1f} ms/run, sandbox {sandbox * 1000:.1f} ms/run, "
              f"ratio sandbox/none {sandbox / none:.2f}x (+{(sandbox - none) * 1000:.1f} ms per run)")


if __name__ == "__main__":
    main()
