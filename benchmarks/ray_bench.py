"""Ray's own cost: 200 runs of a 0.5 s agent at concurrency 8, local executor vs a local 2-node Ray
cluster (ray.cluster_utils.Cluster, 4 CPUs per node) on this machine.

    .venv/bin/python benchmarks/ray_bench.py [--runs 200] [--concurrency 8] [--sleep 0.5]

Prints the wall time of each, the ratio ray/local (target <= 1.25) and the driver's CPU time per
run in ms (what this process spends per run: submitting, awaiting, unpacking, judging, recording).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CASE = """\
id: nap
task: take a nap
checks:
  - {type: output_contains, text: done}
"""


def make_project(root: Path, sleep_s: float, concurrency: int) -> Path:
    (root / "cases" / "nap").mkdir(parents=True)
    (root / "cases" / "nap" / "case.yaml").write_text(CASE)
    agent = {"type": "command", "argv": ["/bin/sh", "-c", f"sleep {sleep_s}; echo done"]}
    (root / "scarbook.yaml").write_text(f"agent: {json.dumps(agent)}\nconcurrency: {concurrency}\n"
                                        "timeout_s: 60\nthreshold: 0.5\n")
    return root


def run(root: Path, runs: int, executor_kind: str) -> tuple[float, float, int]:
    """(wall seconds, driver CPU seconds, passes) of one session."""
    from scarbook.project import Project
    from scarbook.run.events import SessionFinished
    from scarbook.run.ray.executor import make_executor
    from scarbook.run.runner import run_session
    from scarbook.run.session import SessionPlan, prepare_session
    from scarbook.session.plan import select_cases

    project = Project.at(root)
    ready = prepare_session(project, SessionPlan(select_cases(project, project.load_cases(), (), ()), runs=runs)).session
    executor = make_executor(project.config.executor, ready, executor_kind)
    if executor is not None:
        executor.connect()

    async def go():
        async for ev in run_session(ready, executor=executor):
            if isinstance(ev, SessionFinished):
                return ev

    wall, cpu = time.perf_counter(), time.process_time()
    finished = asyncio.run(go())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, sum(1 for r in finished.runs if r.status == "pass")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--sleep", type=float, default=0.5)
    args = ap.parse_args()
    import ray
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory() as tmp:
        root = make_project(Path(tmp) / "proj", args.sleep, args.concurrency)
        per_node = max(1, args.concurrency // 2)
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": per_node, "include_dashboard": False})
        cluster.add_node(num_cpus=per_node)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            run(root, args.concurrency * 2, "ray")  # warm-up: Ray's workers start and import scarbook
            local = run(root, args.runs, "local")
            remote = run(root, args.runs, "ray")
        finally:
            ray.shutdown()
            cluster.shutdown()
    ideal = args.runs * args.sleep / args.concurrency
    print(f"{args.runs} runs of a {args.sleep:g} s agent at concurrency {args.concurrency} (ideal {ideal:.1f} s)")
    for name, (wall, cpu, passes) in (("local", local), ("ray 2-node", remote)):
        print(f"  {name:<11} wall {wall:6.2f} s   driver CPU {1000 * cpu / args.runs:6.2f} ms/run   "
              f"{passes}/{args.runs} pass")
    ratio = remote[0] / local[0]
    print(f"wall-time ratio ray/local: {ratio:.2f} (target <= 1.25: {'met' if ratio <= 1.25 else 'NOT met'})")
    print(f"driver overhead on Ray: {1000 * remote[1] / args.runs:.2f} ms CPU per run "
          f"({1000 * (remote[0] - ideal) / args.runs:.1f} ms wall per run above the ideal)")


if __name__ == "__main__":
    main()
