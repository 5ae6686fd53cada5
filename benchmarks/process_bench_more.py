"""process_bench.py's other parts: the report of one session in a small and a large history, the TUI's
first keys over a large library, and the CLI's start-up (see process_bench.py's docstring)."""

from __future__ import annotations

import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from process_bench import SCARBOOK, WRAPPED, load, make_project

REPO = Path(__file__).resolve().parents[1]

REPORT_CASES = 50


def _write_session(hist: Path, sid: str, runs_per_case: int, started: str) -> None:
    """A finished session of REPORT_CASES cases, written in history's layout (a quarter of the runs failing)."""
    folder = hist / sid
    folder.mkdir(parents=True)
    ids = [f"case-{i:03d}" for i in range(REPORT_CASES)]
    info = {"id": sid, "label": sid[-4:], "started_at": started, "finished_at": started, "state": "finished",
            "runs_per_case": runs_per_case, "case_ids": ids, "fingerprint": "", "agent": "bench", "judge_model": "",
            "git_revision": None, "case_digests": {}, "partial": False, "note": ""}
    (folder / "session.json").write_text(json.dumps({"session": {"1": info}}))
    for i, cid in enumerate(ids):
        lines = []
        for k in range(1, runs_per_case + 1):
            failed = (i * 7 + k * 3) % 4 == 0
            status = "fail" if failed else "pass"
            checks = [{"type": "file_exists", "status": "pass", "detail": "out.txt exists", "index": 0, "judge": None,
                       "duration_s": 0.0}]
            if failed:
                checks.append({"type": "line_count", "status": "fail", "detail": "out.txt has 7 lines, expected 1",
                               "index": 1, "judge": None, "duration_s": 0.0})
            lines.append(json.dumps({"session_id": sid, "case_id": cid, "k": k, "status": status,
                                     "reason": checks[-1]["detail"], "checks": checks, "duration_s": 0.1,
                                     "started_at": started, "workspace": "", "workspace_kept": False,
                                     "output_excerpt": "done — out.txt holds the first line. " * 4}))
        (folder / f"runs-{cid}.jsonl").write_text("\n".join(lines) + "\n")


def _report_project(root: Path, session_runs: int, total_runs: int) -> str:
    (root / "cases").mkdir(parents=True)
    (root / "scarbook.yaml").write_text("agent: {type: demo}\n")
    for i in range(REPORT_CASES):
        folder = root / "cases" / f"case-{i:03d}"
        folder.mkdir()
        (folder / "case.yaml").write_text(f"id: case-{i:03d}\ntask: t\nchecks:\n  - {{type: file_exists, path: out.txt}}\n"
                                          "  - {type: line_count, path: out.txt, equals: 1}\n")
    hist = root / "workspaces" / "history"
    per_case = session_runs // REPORT_CASES
    for n in range(total_runs // session_runs - 1):  # older sessions first
        _write_session(hist, f"20260101-{n:06d}-old0", per_case, f"2026-01-01T{n % 24:02d}:00:00+00:00")
    sid = "20260102-000000-this"
    _write_session(hist, sid, per_case, "2026-01-02T00:00:00+00:00")
    return sid


def _cpu_of(args: list[str]) -> float:
    out = subprocess.run([sys.executable, "-c", WRAPPED, *args], capture_output=True, text=True)
    seen = json.loads(out.stderr.strip().splitlines()[-1])
    if seen["code"] != 0:
        sys.exit(f"scarbook {' '.join(args)} exited {seen['code']}:\n{out.stderr[-2000:]}")
    return seen["cpu"]


def bench_report(tmp: Path, session_runs: int, total_runs: int, rounds: int = 3) -> list[str]:
    alone, big = tmp / "report-alone", tmp / "report-big"
    sid = _report_project(alone, session_runs, session_runs)
    assert _report_project(big, session_runs, total_runs) == sid
    times: dict[str, list[float]] = {"alone": [], "big": []}
    for r in range(rounds):
        for name in (("alone", "big") if r % 2 == 0 else ("big", "alone")):
            root = alone if name == "alone" else big
            times[name].append(_cpu_of(["-C", str(root), "report", sid, "--html", str(tmp / f"{name}.html")]))
    ratios = [b / a for a, b in zip(times["alone"], times["big"], strict=True)]
    return [f"report --html of one {session_runs:,}-run session (CPU of the whole process, median of {rounds}; {load()}):",
            f"  alone {statistics.median(times['alone']):.2f} s, in a {total_runs:,}-run history "
            f"{statistics.median(times['big']):.2f} s: ratio {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f}-{max(ratios):.2f}; target <= 1.2)"]


# A fresh process, as a launch is: the time from its start to the library's first paint, to a key typed
# at that moment being on the screen ("/" then "x": the filter shows "x"), and to the rows' history. The
# first paint is the library mounted and its screen refreshed once; not `pilot.pause()`, which waits until
# the whole process is idle (the rows' worker too, up to a second), so the keys went only after the rows.
TUI_LAUNCH = """
import time
t0 = time.perf_counter()
import asyncio, json, sys
from textual import events
from textual.widgets import Input
from scarbook.tui.app import make_app
from scarbook.tui.screens.library.screen import LibraryScreen

async def main():
    app = make_app(sys.argv[1])
    seen = {}
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, LibraryScreen):
            await asyncio.sleep(0.002)
        await pilot._wait_for_screen()  # the library's widgets have handled what mounting them sent
        painted = asyncio.Event()
        app.screen.call_after_refresh(painted.set)
        await painted.wait()
        seen["first paint"] = time.perf_counter() - t0
        seen["first paint, CPU"] = time.process_time()
        for key, ch in (("slash", "/"), ("x", "x")):
            press = events.Key(key, ch)
            press.set_sender(app)
            app._driver.send_message(press)
        library = app.screen
        while "keys taken" not in seen or "rows filled" not in seen:
            if "keys taken" not in seen and library.query_one("#filter", Input).value == "x":
                seen["keys taken"] = time.perf_counter() - t0
                seen["keys taken, CPU"] = time.process_time()  # the process's CPU since it started
            if "rows filled" not in seen and library.loaded:
                seen["rows filled"] = time.perf_counter() - t0
            await asyncio.sleep(0.002)
    print(json.dumps(seen))

asyncio.run(main())
"""


def bench_tui(tmp: Path, n_cases: int, sessions: int, rounds: int = 3) -> list[str]:
    from tui_bench import make_library

    root = tmp / "tui"
    root.mkdir()
    total = make_library(root, n_cases, sessions, 1)
    got: dict[str, list[float]] = {}
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", TUI_LAUNCH, str(root)], capture_output=True, text=True,
                             timeout=300)
        if out.returncode != 0:
            sys.exit(f"the TUI launch failed:\n{out.stderr[-3000:]}")
        for what, seconds in json.loads(out.stdout.strip().splitlines()[-1]).items():
            got.setdefault(what, []).append(seconds)
    return [f"TUI over {n_cases:,} cases and a {total:,}-run history, from the process's start (median of {rounds}; "
            f"{load()}):",
            "  " + "; ".join(f"{what} {statistics.median(s):.2f} s ({min(s):.2f}-{max(s):.2f})" for what, s in got.items())
            + " (keys taken: target <= 1 s; CPU is the process's own, what load elsewhere does not inflate)"]


def _child_cpu() -> float:
    """User + system seconds of this process's waited-for children so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def bench_startup(tmp: Path, rounds: int = 10) -> list[str]:
    """Wall time and the process's CPU time (user + system, which a loaded machine disturbs far less: the
    wall ratios range 2-12x at load 7) against `python -c pass`'s, each ratio taken within a round."""
    root = tmp / "startup"
    make_project(root, 100, "none")
    bundled = tmp / "bundled"  # the repository's own cases/ and scarbook.yaml (4 cases)
    shutil.copytree(REPO / "cases", bundled / "cases")
    shutil.copy(REPO / "scarbook.yaml", bundled)
    commands = {"python -c pass": [sys.executable, "-c", "pass"], "scarbook --help": [*SCARBOOK, "--help"],
                "scarbook eval --dry-run": [*SCARBOOK, "-C", str(root), "eval", "--dry-run"],
                "  (the 4 bundled cases)": [*SCARBOOK, "-C", str(bundled), "eval", "--dry-run"],
                # the floor under a dry run: the three libraries it reads scarbook.yaml and the cases with
                "  (click, yaml, msgspec)": [sys.executable, "-c", "import click, yaml, msgspec"]}
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for r in range(rounds + 1):
        for name, argv in (commands.items() if r % 2 == 0 else reversed(commands.items())):
            cpu, start = _child_cpu(), time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            if r:  # the first round warms the page cache
                walls[name].append(time.perf_counter() - start)
                cpus[name].append(_child_cpu() - cpu)
    lines = [f"start-up (100 cases but where said), median of {rounds} interleaved rounds ({load()}):",
             f"  {'':<24} {'wall':>8}   / python -c pass       {'cpu':>8}   / python -c pass"]
    for name in commands:
        cells = []
        for figures in (walls, cpus):
            ratios = [x / b for x, b in zip(figures[name], figures["python -c pass"], strict=True)]
            cells.append(f"{1000 * statistics.median(figures[name]):6.1f} ms   {statistics.median(ratios):5.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f})")
        target = name.startswith("scarbook") or "cases" in name
        lines.append(f"  {name:<24} {cells[0]}   {cells[1]}" + ("  (target <= 3)" if target else ""))
    return lines

