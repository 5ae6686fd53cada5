"""CI report benchmarks for a 10,000-run session (a script, not a test): HTML, JUnit, step summary.

    .venv/bin/python benchmarks/report_bench.py            # 50 cases x 200 runs = 10,000 runs
    .venv/bin/python benchmarks/report_bench.py --quick    # 20 cases x 50 runs

The session is written into a real history (workspaces/history, the documented layout) through
History.record_run: 25% of runs fail with two check results, a workspace diff and a 400-character
output excerpt; one case in ten has a judge check with per-item reasons. Then `scarbook report
--html --junit` reads it back as a fresh process would, and each writer is timed alone.

Targets: the HTML file opens in a browser without trouble (≤ 25 MB at 10,000 runs, every failed
run included) and each output takes ≤ 2 s to generate. Printed as ratios against those targets.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from scarbook.config import Config
from scarbook.history.baseline import baseline_from_session, compare_to_baseline
from scarbook.history.store import History, now_iso
from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo, WorkspaceDiff
from scarbook.reports.github import step_summary
from scarbook.reports.html import render_html
from scarbook.reports.junit import write_junit
from scarbook.reports.table import build_report

SIZE_TARGET_MB, TIME_TARGET_S = 25.0, 2.0


def _run(rng: random.Random, sid: str, case_id: str, k: int, judged: bool) -> RunRecord:
    failed = rng.random() < 0.25
    checks = [CheckResult("file_exists", "pass", "tmp.txt exists", 0)]
    if failed:
        checks.append(CheckResult("line_count", "fail", f"tmp.txt has {rng.randint(2, 40)} lines, expected exactly 1", 1))
    elif judged:
        checks.append(CheckResult("llm_judge", "pass", "2/2 rubric items PASS", 1, judge=JudgeDetail.from_dict({
            "verdict": "pass", "model": "claude-sonnet-4-6", "error": None,
            "items": [{"item": i, "text": f"rubric item {i}", "verdict": "PASS", "reason": "the file has one line " * 3}
                      for i in (1, 2)]})))
    return RunRecord(sid, case_id, k, "fail" if failed else "pass",
                     checks[-1].detail if failed else "all checks passed", checks=checks,
                     output_excerpt=("done — tmp.txt holds the first line of README.md. " * 8)[:400],
                     duration_s=rng.uniform(0.5, 30), started_at=now_iso(), workspace=f"workspaces/{sid}/{case_id}/{k}",
                     diff=WorkspaceDiff(created=["tmp.txt"] + (["notes.md"] if failed else [])))


def build_session(root: Path, cases: int, runs: int) -> tuple[History, SessionInfo]:
    rng = random.Random(0)
    history = History(root / "workspaces")
    info = SessionInfo(history.new_session_id(), label="bench", started_at=now_iso(), runs_per_case=runs,
                       case_ids=[f"case-{i:03d}" for i in range(cases)], agent="bench", state="running")
    history.start_session(info)
    for i, cid in enumerate(info.case_ids):
        for k in range(1, runs + 1):
            history.record_run(_run(rng, info.id, cid, k, judged=i % 10 == 0))
    info.state, info.finished_at = "finished", now_iso()
    history.finish_session(info)
    return history, info


def timed(fn, *args):
    t0 = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cases, runs = (20, 50) if args.quick else (50, 200)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        history, info = build_session(root, cases, runs)
        records, t_read = timed(history.runs, info.id)
        rep, t_build = timed(build_report, info, records, {}, Config())
        baseline = baseline_from_session(info, records, now_iso())
        against = compare_to_baseline(baseline, info, records)
        html, t_html = timed(render_html, rep, against)
        (root / "r.html").write_text(html, encoding="utf-8")
        _, t_junit = timed(write_junit, rep, root / "j.xml", against)
        md, t_md = timed(step_summary, rep, against)
        html_mb = (root / "r.html").stat().st_size / 1e6
        junit_mb = (root / "j.xml").stat().st_size / 1e6
        failed = sum(r.status != "pass" for r in records)
        print(f"session: {cases} cases x {runs} runs = {len(records)} runs ({failed} not passing); "
              f"read {t_read:.2f}s, stats {t_build:.2f}s")
        print(f"html:    {html_mb:6.2f} MB in {t_html:.2f}s   size/target {html_mb / SIZE_TARGET_MB:.2f}, "
              f"time/target {t_html / TIME_TARGET_S:.2f}")
        print(f"junit:   {junit_mb:6.2f} MB in {t_junit:.2f}s   time/target {t_junit / TIME_TARGET_S:.2f}")
        print(f"summary: {len(md.encode()) / 1e6:6.2f} MB in {t_md:.2f}s   (GitHub caps a step summary at 1 MiB: "
              f"{len(md.encode()) / 2**20:.2f} of it)")
        ok = html_mb <= SIZE_TARGET_MB and max(t_html, t_junit, t_md) <= TIME_TARGET_S
        print("targets met" if ok else "TARGET MISSED")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
