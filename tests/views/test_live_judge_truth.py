"""The live screen's numbers (views/live_state.py) with a calibrated judge: each judged case's rate
corrected for the judge's measured error as the runs come in (issue 23)."""

from __future__ import annotations

from pathlib import Path

from scarbook.config import Config
from scarbook.history.judge_truth import calibration_for
from scarbook.models import Case, Check
from scarbook.project import Project
from scarbook.views.live_state import LiveSession
from tests.judge.test_label_files import ITEM, judged_run, make_project
from tests.reports.test_judge_truth import calibrate


def test_live_stats_carry_the_corrected_rate(tmp_path: Path):
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10})
    calibrate(root)
    p = Project.discover(root)
    case = Case(id="alpha", task="t", checks=[Check("llm_judge", {"rubric": [ITEM]})])
    live = LiveSession([case], 10, Config())
    live.runs["alpha"] = [judged_run("s", "alpha", k, "PASS" if k % 4 else "FAIL") for k in range(1, 9)]
    assert live.stats(case).corrected is None and live.corrected_line() == ""  # not read yet: raw only
    live.calibration = calibration_for(p.history, p.workspaces_dir, p.config.judge, {"alpha": case})
    s = live.stats(case)
    assert s.rate == 0.75 and s.corrected is not None and s.corrected.rate < s.rate
    assert live.corrected_line() == (f"≈ corrected for the judge's measured error: alpha {100 * s.corrected.rate:.0f}% "
                                     f"({100 * s.corrected.lo:.0f}–{100 * s.corrected.hi:.0f}%)")
    live.runs["alpha"].append(judged_run("s", "alpha", 9, "PASS"))
    assert live.stats(case).corrected.rate != s.corrected.rate  # recomputed for the new run
