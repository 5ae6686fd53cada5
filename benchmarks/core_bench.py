"""Core benchmarks, printed as ratios against their targets (a script, not a test).

    .venv/bin/python benchmarks/core_bench.py            # full sizes (about a minute)
    .venv/bin/python benchmarks/core_bench.py --quick    # smaller sizes, same ratios to read

1. Harness overhead: 100 cases x 10 runs with agent `command: ["true"]`, through run_session (seed,
   spawn, diff, checks, history, retention), against a floor loop that only does mkdtemp + write seed +
   spawn `true` + read one file + rmtree per run. Both at concurrency 1. Target ratio <= 1.5.
   Then the same through the portable spawn path (asyncio transports: what macOS and Windows run,
   forced here with SCARBOOK_PORTABLE_SPAWN=1). It costs about 0.5 ms more per run than the Linux
   epoll/pidfd path; its own target is <= 2.0, printed beside it so the difference stays visible.
2. Concurrency: 200 runs of `sleep 0.5` at concurrency 20; wall against the ideal 5 s. Target <= 1.15.
3. History: with 100,000 runs already on disk (written straight into the documented layout), the cost
   of recording 1,000 more against the same on an empty history (target <= 2x), and the wall time of
   `scarbook list` as a fresh process (target <= 1 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scarbook.history.store import History
from scarbook.models import CheckResult, RunRecord, SessionInfo, WorkspaceDiff
from scarbook.project import Project
from scarbook.run.runner import run_session
from scarbook.run.session import SessionPlan, ready_session

SEED_TEXT = "# tiny-agent\n\nA minimal AI agent.\n"


def make_project(root: Path, n_cases: int, argv: list[str], concurrency: int) -> Project:
    (root / "cases").mkdir(parents=True)
    (root / "scarbook.yaml").write_text(
        f"agent: {{type: command, argv: {json.dumps(argv)}}}\nconcurrency: {concurrency}\ntimeout_s: 30\n")
    for i in range(n_cases):
        folder = root / "cases" / f"case-{i:03d}"
        (folder / "seed").mkdir(parents=True)
        (folder / "seed" / "README.md").write_text(SEED_TEXT)
        (folder / "case.yaml").write_text(
            f"id: case-{i:03d}\ntask: Read README.md\nchecks:\n  - {{type: contains, path: README.md, text: tiny}}\n")
    return Project.discover(root)


async def drain(project: Project, runs: int, concurrency: int) -> list[RunRecord]:
    cases = project.load_cases().cases
    records: list[RunRecord] = []
    async for ev in run_session(ready_session(project, SessionPlan(cases, runs, concurrency=concurrency))):
        if type(ev).__name__ == "SessionFinished":
            records = ev.runs
    return records


def floor_loop(n_runs: int) -> float:
    """What any harness must do per run, and nothing else."""
    start = time.perf_counter()
    for _ in range(n_runs):
        d = tempfile.mkdtemp()
        Path(d, "README.md").write_text(SEED_TEXT)
        subprocess.run(["true"], cwd=d, check=True)
        Path(d, "README.md").read_text()
        shutil.rmtree(d)
    return time.perf_counter() - start


def bench_overhead(tmp: Path, n_cases: int, runs: int, rounds: int = 5, path: str = "") -> tuple[float, str]:
    """Floor and harness take turns, `rounds` times each; the best of each is compared, so a burst of
    load from elsewhere on the machine does not land on one side only. path="portable": the same
    through the asyncio spawn path that macOS and Windows use (SCARBOOK_PORTABLE_SPAWN=1)."""
    floor_loop(20)  # warm the page cache and the fork path
    floors, harnesses, cpu = [], [], []
    for r in range(rounds):
        floors.append(floor_loop(n_cases * runs))
        project = make_project(tmp / f"overhead{path}-{r}", n_cases, ["true"], 1)
        start, cpu0 = time.perf_counter(), time.process_time()
        records = asyncio.run(drain(project, runs, 1))
        harnesses.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu0)
        assert len(records) == n_cases * runs and all(r.status == "pass" for r in records), "runs did not pass"
    floor, harness, n = min(floors), min(harnesses), n_cases * runs
    ratio = harness / floor
    pairs = sorted(h / f for h, f in zip(harnesses, floors, strict=False))  # each round's harness against its own floor
    what = "harness overhead" + (f" ({path} spawn path, as on macOS/Windows)" if path else "")
    return ratio, (f"{what}: {n} runs (concurrency 1): harness {1000 * harness / n:.2f} ms/run "
                   f"(of which harness CPU {1000 * min(cpu) / n:.2f} ms) vs floor {1000 * floor / n:.2f} ms/run, "
                   f"best of {rounds}: ratio {ratio:.2f} (target <= 1.5; round by round "
                   f"{pairs[0]:.2f}-{pairs[-1]:.2f}, median {pairs[len(pairs) // 2]:.2f})")


def bench_concurrency(tmp: Path, n_runs: int, concurrency: int, sleep_s: float) -> tuple[float, str]:
    n_cases = 20
    project = make_project(tmp / "concurrency", n_cases, ["sleep", str(sleep_s)], concurrency)
    runs = n_runs // n_cases
    start = time.perf_counter()
    records = asyncio.run(drain(project, runs, concurrency))
    wall = time.perf_counter() - start
    assert len(records) == n_cases * runs
    ideal = n_cases * runs * sleep_s / concurrency
    ratio = wall / ideal
    return ratio, (f"concurrency: {len(records)} runs of `sleep {sleep_s:g}` at {concurrency} at once: wall "
                   f"{wall:.2f}s vs ideal {ideal:.2f}s: ratio {ratio:.3f} (target <= 1.15)")


def _run_doc(sid: str, case_id: str, k: int, ws_root: Path) -> dict:
    status = "pass" if k % 10 else "fail"
    checks = [CheckResult("file_exists", "pass", "tmp.txt exists (13 bytes)", 0),
              CheckResult("contains", "pass", "tmp.txt contains '# tiny-agent'", 1),
              CheckResult("line_count", status, "tmp.txt has 1 line" if status == "pass" else
                          "tmp.txt has 7 lines, expected exactly 1", 2),
              CheckResult("only_changed", "pass" if status == "pass" else "skipped", "only tmp.txt changed", 3)]
    return RunRecord(session_id=sid, case_id=case_id, k=k, status=status,
                     reason="all checks passed" if status == "pass" else "check 3 (line_count): tmp.txt has 7 lines",
                     checks=checks, output_excerpt="Wrote the first line of README.md to tmp.txt.\n",
                     exit_code=0, duration_s=1.23, started_at="2026-11-01T10:00:00+00:00",
                     workspace=str(ws_root / sid / case_id / str(k)), workspace_kept=status != "pass",
                     diff=WorkspaceDiff(created=["tmp.txt"])).to_dict()


def seed_history(workspaces: Path, n_runs: int, cases: int = 4, runs_per_case: int = 25) -> int:
    """Write n_runs finished runs straight into workspaces/history/<sid>/ (session.json, runs-<case>.jsonl)."""
    hist = workspaces / "history"
    n_sessions = n_runs // (cases * runs_per_case)
    case_ids = [f"case-{c:03d}" for c in range(cases)]
    for s in range(n_sessions):
        sid = f"20261101-{s // 3600:02d}{s // 60 % 60:02d}{s % 60:02d}-000aa"
        folder = hist / sid
        folder.mkdir(parents=True)
        info = SessionInfo(id=sid, label=f"s{s}", started_at="2026-11-01T10:00:00+00:00",
                           finished_at="2026-11-01T10:05:00+00:00", state="finished", runs_per_case=runs_per_case,
                           case_ids=case_ids, fingerprint="abc123abc123", agent="command: true")
        (folder / "session.json").write_text(json.dumps({"session": {"1": {**info.to_dict(), "pid": 1}}}))
        for cid in case_ids:
            docs = {str(k): _run_doc(sid, cid, k, workspaces) for k in range(1, runs_per_case + 1)}
            (folder / f"runs-{cid}.jsonl").write_text("".join(json.dumps(d, separators=(",", ":")) + "\n"
                                                              for d in docs.values()))
    return n_sessions * cases * runs_per_case


def record_many(workspaces: Path, n_runs: int, cases: int = 10) -> float:
    """Record n_runs through History, the way the runner does: one session, cases x runs."""
    history = History(workspaces)
    sid = history.new_session_id()
    case_ids = [f"new-{c:02d}" for c in range(cases)]
    info = SessionInfo(id=sid, started_at="2026-12-01T10:00:00+00:00", runs_per_case=n_runs // cases,
                       case_ids=case_ids)
    start = time.perf_counter()
    history.start_session(info)
    for k in range(1, n_runs // cases + 1):
        for cid in case_ids:
            history.record_run(RunRecord.from_dict(_run_doc(sid, cid, k, workspaces)))
    history.finish_session(info)
    return time.perf_counter() - start


def bench_history(tmp: Path, n_existing: int, n_new: int) -> list[tuple[float, float, str]]:
    empty_ws, full_ws = tmp / "h-empty" / "workspaces", tmp / "h-full" / "workspaces"
    empty_ws.mkdir(parents=True)
    t0 = time.perf_counter()
    seeded = seed_history(full_ws, n_existing)
    seed_s = time.perf_counter() - t0
    record_many(tmp / "h-warm" / "workspaces", n_new)  # warm-up
    empties, fulls = [], []
    for _ in range(3):  # taking turns, so load from elsewhere on the machine hits both sides alike
        empties.append(record_many(empty_ws, n_new))
        fulls.append(record_many(full_ws, n_new))
    on_empty, on_full = min(empties), min(fulls)
    ratio = on_full / on_empty
    out = [(ratio, 2.0, f"history: recording {n_new} runs took {on_full:.2f}s with {seeded:,} runs recorded vs "
                        f"{on_empty:.2f}s on an empty history: ratio {ratio:.2f} (target <= 2; seeding took "
                        f"{seed_s:.1f}s)")]
    # `scarbook list` as a user runs it: a fresh process, with the cases the seeded history ran.
    root = full_ws.parent
    for c in range(4):
        folder = root / "cases" / f"case-{c:03d}"
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(f"id: case-{c:03d}\ntask: t\nchecks: [{{type: file_exists, path: a}}]\n")
    (root / "scarbook.yaml").write_text("agent: {type: command, argv: ['true']}\n")
    cmd = [sys.executable, "-c", "from scarbook.cli import main; main()", "-C", str(root), "list"]
    subprocess.run(cmd, capture_output=True, check=True)  # warm
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        assert proc.returncode == 0 and "case-003" in proc.stdout, proc.stderr
    best = min(times)
    startups = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import scarbook.cli"], check=True)
        startups.append(time.perf_counter() - t0)
    startup = min(startups)
    out.append((best, 1.0, f"history: `scarbook list` with {seeded:,} runs recorded: {best:.2f}s "
                           f"(of which Python + import {startup:.2f}s): ratio to target {best / 1.0:.2f} "
                           f"(target <= 1 s)"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (20 cases, 20,000 history runs)")
    ap.add_argument("--only", choices=["overhead", "concurrency", "history"], default=None)
    args = ap.parse_args()
    results: list[tuple[float, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="scarbook-bench-") as d:
        tmp = Path(d)
        if args.only in (None, "overhead"):
            r, line = bench_overhead(tmp, 20 if args.quick else 100, 10)
            results.append((r, 1.5, line))
            print(line, flush=True)
            os.environ["SCARBOOK_PORTABLE_SPAWN"] = "1"
            try:
                r, line = bench_overhead(tmp, 20 if args.quick else 100, 10, path="portable")
            finally:
                del os.environ["SCARBOOK_PORTABLE_SPAWN"]
            results.append((r, 2.0, line.replace("target <= 1.5", "target <= 2.0")))
            print(results[-1][2], flush=True)
        if args.only in (None, "concurrency"):
            r, line = bench_concurrency(tmp, 200, 20, 0.5)
            results.append((r, 1.15, line))
            print(line, flush=True)
        if args.only in (None, "history"):
            for r, target, line in bench_history(tmp, 20_000 if args.quick else 100_000, 1_000):
                results.append((r, target, line))
                print(line, flush=True)
    missed = [line for r, target, line in results if r > target]
    print(f"\n{len(results) - len(missed)}/{len(results)} targets met")
    return 1 if missed else 0


if __name__ == "__main__":
    os.environ.setdefault("SCARBOOK_DEMO_DELAY", "0")
    sys.exit(main())
