"""Trends benchmark (issue 16): reading every case's last 8 sessions must not slow the library.

Over the tui_bench library (1,000 cases, 10 sessions x 10 runs = 100,000 runs), printed as ratios:
1. core: build_trends against build_rows (the library's own load), both from a fresh Project: the first
   read (which writes each ended session's .counts.json) and the next (which uses it);
2. TUI: first paint and rows filled with trends on, against the same app with trends made instant
   (what the library cost before trends) — target: ratio <= 1.1 for both, i.e. trends, read after the
   rows in the same worker, delay neither; then when the trend column is filled;
3. TUI: the time `e` takes to open the editor while trends are still being read, as a ratio of the
   same press once they are read (the UI thread shares the GIL with the worker);
4. TUI: the time `t` takes to show the flake view's flakiest rows, as a ratio of the first paint.

    .venv/bin/python benchmarks/trends_bench.py [--cases 1000] [--sessions 10] [--runs-per-case 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

RATIO_TARGET = 1.1
OPEN_RATIO_TARGET = 0.3  # opening a screen: at most this share of the library's first paint (tui_bench's)


def bench_core(root: Path) -> tuple[float, float, float]:
    from scarbook.project import Project
    from scarbook.views.library_rows import build_rows
    from scarbook.views.trends import project_trends

    project = Project.discover(root)
    t = time.perf_counter()
    rows = build_rows(project)
    rows_s = time.perf_counter() - t
    took = []
    for _ in range(2):  # the first read writes each session's counts cache, the second uses it
        project = Project.discover(root)
        t = time.perf_counter()
        project_trends(project, [r.case for r in rows if r.case])
        took.append(time.perf_counter() - t)
    return rows_s, took[0], took[1]


async def bench_tui(root: Path, press_early: bool) -> dict[str, float]:
    """First paint, rows filled, trends shown; and `e` pressed as soon as the rows are filled (while
    trends load) or once trends are shown."""
    from scarbook.tui.app import make_app
    from scarbook.tui.screens.editor import EditorScreen
    from scarbook.tui.screens.flakes import FlakeScreen
    from scarbook.tui.screens.library import LibraryScreen

    t0 = time.perf_counter()
    app = make_app(root)
    out: dict[str, float] = {}
    async with app.run_test(size=(200, 50)) as pilot:
        while not isinstance(app.screen, LibraryScreen):
            await pilot.pause(0.005)
        await pilot.pause()
        out["first_paint"] = time.perf_counter() - t0
        lib = app.screen
        while not lib.loaded:
            await pilot.pause(0.005)
        out["filled"] = time.perf_counter() - t0
        if not press_early:
            while not lib.trends_loaded:
                await pilot.pause(0.005)
            out["trends"] = time.perf_counter() - t0
        out["trends_pending_at_press"] = float(not lib.trends_loaded)
        t = time.perf_counter()
        send_key(app, "e")  # not pilot.press: it waits for the app to go idle, trends load included
        while not (isinstance(app.screen, EditorScreen) and app.screen.is_mounted):
            await asyncio.sleep(0.001)
        out["editor"] = time.perf_counter() - t
        await pilot.press("escape")
        while app.screen is not lib:
            await pilot.pause(0.005)
        while not lib.trends_loaded:
            await pilot.pause(0.005)
        out.setdefault("trends", time.perf_counter() - t0)
        if press_early or lib.trends is None or not lib.trends.sessions:
            return out  # (the variant without trends has no flake view to time)
        # t: the flake view, from the key (sent as tui_bench sends keys, without waiting for idle) to
        # its grid showing the flakiest cases; the rest of the rows follow, 100 per refresh.
        t = time.perf_counter()
        send_key(app, "t")
        while not (isinstance(app.screen, FlakeScreen) and app.screen.is_mounted
                   and app.screen.query_one("#flake-grid").row_count):
            await asyncio.sleep(0.001)
        out["flakes"] = time.perf_counter() - t
        while app.screen.query_one("#flake-grid").row_count < len(app.screen.cases):
            await asyncio.sleep(0.002)
        out["flakes_all"] = time.perf_counter() - t
    return out


def send_key(app, key: str) -> None:
    """Send a key as Pilot.press does, without its wait for the app to go idle (as tui_bench does)."""
    from textual import events

    event = events.Key(key, key)
    event.set_sender(app)
    app._driver.send_message(event)


def without_trends():
    """The library as it was before trends: project_trends made instant (an empty Trends)."""
    import scarbook.tui.screens.library.trends as library
    from scarbook.stats.trends import Trends

    real = library.project_trends
    library.project_trends = lambda project, cases, depth=8: Trends({}, [])
    return lambda: setattr(library, "project_trends", real)


def median_of(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tui_bench import make_library

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--runs-per-case", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3, help="app launches per variant (medians printed)")
    args = ap.parse_args()
    os.environ.setdefault("SCARBOOK_DEMO_DELAY", "0")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lib"
        root.mkdir()
        total = make_library(root, args.cases, args.sessions, args.runs_per_case)
        print(f"library: {args.cases} cases, {total:,} runs in {args.sessions} sessions")
        rows_s, first_s, cached_s = bench_core(root)
        print(f"core: build_rows {rows_s:.3f} s; build_trends (8 sessions per case) {first_s:.3f} s the first "
              f"time (ratio {first_s / rows_s:.2f}), {cached_s:.3f} s from the counts cache (ratio "
              f"{cached_s / rows_s:.2f}); the library reads them after its rows, in the same worker")

        restore = without_trends()
        try:
            before = [asyncio.run(bench_tui(root, press_early=False)) for _ in range(args.repeat)]
        finally:
            restore()
        after = [asyncio.run(bench_tui(root, press_early=False)) for _ in range(args.repeat)]
        early = [asyncio.run(bench_tui(root, press_early=True)) for _ in range(args.repeat)]
        for key, name in (("first_paint", "first paint"), ("filled", "rows filled")):
            a, b = median_of(before, key), median_of(after, key)
            print(f"library {name:<12} without trends {a:6.3f} s, with {b:6.3f} s  "
                  f"(ratio {b / a:.2f}, target <= {RATIO_TARGET})")
        print(f"library trend column filled: {median_of(after, 'trends'):6.3f} s after launch")
        first, flakes = median_of(after, "first_paint"), median_of(after, "flakes")
        print(f"open the flake view (t): {flakes:.3f} s to the flakiest rows (ratio to the library's first paint "
              f"{flakes / first:.2f}, target <= {OPEN_RATIO_TARGET}); all {args.cases} rows {median_of(after, 'flakes_all'):.3f} s")
        quiet, busy = median_of(after, "editor"), median_of(early, "editor")
        pending = sum(r["trends_pending_at_press"] for r in early)
        print(f"open the editor (e) while trends load: {busy:.3f} s vs {quiet:.3f} s once read (ratio "
              f"{busy / quiet:.2f}; trends still loading at {int(pending)} of {len(early)} presses)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
