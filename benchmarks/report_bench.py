"""CI report benchmarks for a 10,000-run session (a script, not a test): HTML, JUnit, step summary.

    .venv/bin/python benchmarks/report_bench.py            # 50 cases x 200 runs = 10,000 runs
    .venv/bin/python benchmarks/report_bench.py --quick    # 20 cases x 50 runs

The session is written into a real history (workspaces/history, the documented layout) through
History.record_run: 25% of runs fail with two check results, a workspace diff and a 400-character
output excerpt; one case in ten has a judge check with per-item reasons. Then `scarbook report
--html --junit` reads it back as a fresh process would, and each writer is timed alone.

Targets: the HTML file opens in a browser without trouble (≤ 25 MB at 10,000 runs, every failed
run included) and each output takes ≤ 2 s to generate. Printed as ratios against those targets.

Then the notes of a report's undecided raw cases ("needs about N more runs", stats/runs_needed.py): 100
such cases near their line (20 with --quick) decided as a report decides them (stats/decisions.decide_cases),
with runs_to_decide as it was (an exact tail at every N it tried: tests/helpers/old_runs_to_decide.py) and
as it is (the tails walked from one N to the next), the same notes both ways; CPU time, printed as old/new.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarbook.config import Config  # noqa: E402
from scarbook.history.baseline import baseline_from_session, compare_to_baseline  # noqa: E402
from scarbook.history.store import History, now_iso  # noqa: E402
from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo, WorkspaceDiff  # noqa: E402
from scarbook.reports.github import step_summary  # noqa: E402
from scarbook.reports.html import render_html  # noqa: E402
from scarbook.reports.junit import write_junit  # noqa: E402
from scarbook.reports.table import build_report  # noqa: E402
from scarbook.stats import decisions  # noqa: E402
from scarbook.stats.decisions import CaseEvidence, Decision, decide_cases  # noqa: E402
from tests.helpers.old_runs_to_decide import old_runs_to_decide  # noqa: E402

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


def undecided_near_the_line(count: int) -> list[CaseEvidence]:
    """`count` raw cases of 40-200 runs at rates 74-86% against 80%, each undecided at the gate's level."""
    rng, found = random.Random(1), []
    while len(found) < count:
        n = rng.randrange(40, 201)
        passes = round(n * rng.uniform(0.74, 0.86))
        e = CaseEvidence(f"case-{len(found):03d}", passes, n - passes, 0, 0.8)
        if decide_cases([e], notes=False)[0].decision == Decision.UNDECIDED:
            found.append(e)
    return found


def bench_notes(count: int) -> tuple[float, float, int]:
    """CPU seconds of decide_cases over `count` undecided raw cases with runs_to_decide as it was and as it
    is; the number of cases that have a "needs about N more runs" note."""
    cases = undecided_near_the_line(count)
    walked = decisions.runs_to_decide

    def cpu() -> tuple[float, list]:
        t0 = time.process_time()
        out = decide_cases(cases)
        return time.process_time() - t0, out

    t_new, new = cpu()
    decisions.runs_to_decide = old_runs_to_decide
    try:
        t_old, old = cpu()
    finally:
        decisions.runs_to_decide = walked
    assert old == new, "the walk's notes differ from the scan's"
    return t_old, t_new, sum(d.runs_needed is not None for d in new)


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
        count = 20 if args.quick else 100
        t_old, t_new, noted = bench_notes(count)
        print(f"notes:   {count} undecided raw cases near 80% ({noted} with 'needs about N more runs'): "
              f"{t_old:.2f}s as it was, {t_new:.3f}s walked; old/new {t_old / t_new:.0f}x, the same notes")
        ok = html_mb <= SIZE_TARGET_MB and max(t_html, t_junit, t_md) <= TIME_TARGET_S
        print("targets met" if ok else "TARGET MISSED")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
