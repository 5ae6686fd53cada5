"""The cost of `isolation: sandbox` per run, as a ratio against `isolation: none` (a script, not a test).

    .venv/bin/python benchmarks/sandbox_bench.py            # 100 runs per mode, best of 3 rounds
    .venv/bin/python benchmarks/sandbox_bench.py --quick    # 30 runs per mode

Each mode runs the same case (a seeded README, one contains check)
through run_session at concurrency 1; a run's cost is the session's wall time / runs. Three agents:
`true` (the bare spawn, where the sandbox's fixed cost shows most), a Python one-liner (a start-up an
agent really pays) and the bundled demo agent (what the quickstart runs, sandboxed by default since
issue 25.1; SCARBOOK_DEMO_DELAY=0, its outcomes drawn as usual). Prints ms per run in each mode and
the ratio sandbox / none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from scarbook.project import Project
from scarbook.run.runner import run_session
from scarbook.run.session import SessionPlan, ready_session

AGENTS = {"true": {"type": "command", "argv": ["true"]},
          "python -c": {"type": "command", "argv": [sys.executable, "-c", "open('README.md').read()"]},
          "demo": {"type": "demo", "seed": 1}}


def make_project(root: Path, agent: dict, isolation: str) -> Project:
    (root / "cases" / "c" / "seed").mkdir(parents=True)
    (root / "cases" / "c" / "seed" / "README.md").write_text("# tiny-agent\n")
    (root / "cases" / "c" / "case.yaml").write_text(
        "id: c\ntask: Read README.md\nchecks:\n  - {type: contains, path: README.md, text: tiny}\n")
    (root / "scarbook.yaml").write_text(f"agent: {json.dumps(agent)}\n"
                                        f"isolation: {isolation}\nconcurrency: 1\ntimeout_s: 30\n")
    return Project.discover(root)


async def session(project: Project, runs: int, demo: bool) -> float:
    start = time.perf_counter()
    statuses = []
    plan = SessionPlan(list(project.load_cases().cases), runs, concurrency=1)
    async for ev in run_session(ready_session(project, plan)):
        if type(ev).__name__ == "SessionFinished":
            statuses = [r.status for r in ev.runs]
    took = time.perf_counter() - start
    # a sandbox that broke the agent would look cheap (the demo fails some runs on purpose; never errors)
    assert "error" not in statuses if demo else statuses == ["pass"] * runs, statuses
    return took / runs


def per_run(agent: dict, isolation: str, runs: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        root = Path(tempfile.mkdtemp(prefix="scarbook-sbx-"))
        try:
            best = min(best, asyncio.run(session(make_project(root, agent, isolation), runs, agent["type"] == "demo")))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    runs, rounds = (30, 2) if args.quick else (100, 3)
    os.environ["SCARBOOK_DEMO_DELAY"] = "0"
    for name, agent in AGENTS.items():
        none = per_run(agent, "none", runs, rounds)
        sandbox = per_run(agent, "sandbox", runs, rounds)
        print(f"agent {name!r}: none {none * 1000:.1f} ms/run, sandbox {sandbox * 1000:.1f} ms/run, "
              f"ratio sandbox/none {sandbox / none:.2f}x (+{(sandbox - none) * 1000:.1f} ms per run)")


if __name__ == "__main__":
    main()
