"""The library's (and `scarbook list`'s) ≈ rate of a judged case is its latest session's as `scarbook report` gives
it: corrected with the judge's calibration that session ran with, at its gate's level — not with history's.

Before, views/library_rows.correct_rows corrected the latest session's runs with history's calibration at the
project's alpha: once labels were added after the session, the library showed a corrected rate and interval that
its own report (run/gate.replay_calibration) did not, for the same runs."""

from __future__ import annotations

import json
from pathlib import Path

from scarbook.project import Project
from scarbook.run.gate import unbounded_words
from scarbook.views.library_rows import build_rows, correct_rows
from tests.helpers.judge_server import judge_server  # noqa: F401
from tests.judge.test_label_files import scarbook
from tests.run.test_report_calibration_replay import project, run_below_then_label  # noqa: F401


def test_the_library_corrects_the_latest_session_as_its_report_does(project: Path, judge_server) -> None:  # noqa: F811
    evaluated = run_below_then_label(project, judge_server)  # the eval ran with 40 labels; history now holds 70
    scarbook(project, "report", evaluated["session"]["id"], "--json", str(project / "report.json"))
    (reported,) = json.loads((project / "report.json").read_text())["cases"]

    opened = Project.open(project)
    rows = list(build_rows(opened))
    line = correct_rows(opened, rows)
    (row,) = rows
    assert row.session_id == evaluated["session"]["id"]
    assert row.stats is not None and row.stats.corrected is not None
    # the report's JSON adds the words for a 0–100% interval (run/gate.unbounded_words) to the numbers
    words = reported["corrected"].pop("ci_note")
    assert words == (unbounded_words(row.stats.corrected, row.stats.threshold) or None)
    evaluated["cases"][0]["corrected"].pop("ci_note")
    assert row.stats.corrected.to_dict() == reported["corrected"] == evaluated["cases"][0]["corrected"]
    assert row.stats.corrected.labels == 40
    assert line == ("judge: ≈ rates corrected for its measured error with the calibration each case's latest session "
                    "ran with, as its report does; history's has changed since (70 labels, last 2026-12-04) — a new "
                    "session decides with it"), line


def test_a_whole_range_interval_says_why_in_the_library() -> None:
    """The library's detail line of a case whose ≈ interval is 0–100% says why, in the report's words."""
    from scarbook.stats.corrected import correct
    from scarbook.stats.judge_error import Stratum, estimate_error
    from scarbook.stats.rates import summarize_counts
    from scarbook.views.library_rows import corrected_line

    stats = summarize_counts("alpha", 20, 20, 0, 0.8, 0.9)
    model = estimate_error([Stratum("alpha", "PASS", 20, 18, 2), Stratum("alpha", "FAIL", 20, 2, 18)]).for_case("alpha")
    stats.corrected = correct(20, 20, 0, model, threshold=0.8)
    assert corrected_line(stats) == (
        "≈ 50% corrected for the judge's error (90% CI 0–100%; raw 50%); judge-limited: more labels, not more runs, "
        "will decide it; 90% CI 0–100%: the judge's error as its 40 labels bound it could account for every verdict "
        "on its own — each pass a false pass (it may pass up to 68% of failing runs), each fail a miss (it may fail "
        "up to 69% of passing runs); were its error known exactly, these 40 runs would give 32–68%: about 522 more "
        "labels would bound it")
