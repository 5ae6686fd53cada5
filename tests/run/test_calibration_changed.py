"""A later report says history's calibration of the judge has changed since the session ran only when what a
person changes did: the labels counted and their verdicts (or whether the rates are corrected at all) — never
because the strata's sizes moved as history grew.

Before, the report compared the whole recorded calibration, the strata's sizes (W) too. With the last label made
on the day an eval runs (labels were stored as a day until scarbook kept their time), history's calibration counts
that session's own judged items once it has run, so a `scarbook report` of the session made right after it said
"history's has changed since (…: its judged items in history or the labels' verdicts changed)" though nobody
had changed anything."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.judge.calibrate import judged_items
from scarbook.judge.label_store import CalibrationStore
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.judge.test_label_files import scarbook
from tests.run.test_more_corrected import CASE, calibrate, write_project
from tests.run.test_report_calibration_replay import AGENT

TODAY = datetime.now(UTC).date().isoformat()


@pytest.fixture
def project(tmp_path: Path, judge_server, monkeypatch) -> Path:  # noqa: F811
    write_project(tmp_path, judge_server.url, AGENT, {"c": CASE})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    # a person agrees with the judge on all 40 items, labelled today as a day (as scarbook stored labels before)
    calibrate(tmp_path, lambda item: item.judge_verdict, labeled_at=TODAY)
    return tmp_path


def evaluate(project: Path, name: str) -> dict:
    out = project / f"{name}.json"
    ran = scarbook(project, "eval", "--runs", "6", "-q", "--gate", "evidence", "--json", str(out))
    report = json.loads(out.read_text())
    assert "corrected" in report["cases"][0], ran.output  # the calibration was in use
    return report


def report(project: Path, sid: str, name: str) -> tuple[dict, str]:
    out = project / f"{name}.json"
    result = scarbook(project, "report", sid, "--json", str(out))
    return json.loads(out.read_text()), result.output


def relabel_one(root: Path, verdict: str = "FAIL") -> None:
    """A person changes their mind on one labelled item the judge passed (the first): `verdict`."""
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        labelled = {lab.key for lab in store.labels()}
        item = next(i for i in judged_items(History(root / "workspaces").iter_all_runs())
                    if i.key in labelled and i.judge_verdict == "PASS")
        store.relabel(item.key, verdict, labeled_at=TODAY)
    finally:
        store.close()


def test_a_report_right_after_a_session_run_the_day_of_the_last_label_says_nothing_changed(project: Path,
                                                                                          judge_server) -> None:  # noqa: F811
    judge_server.default = tool_reply([("FAIL", "does not name it")])
    first = evaluate(project, "first")
    sid = first["session"]["id"]
    again, output = report(project, sid, "again")
    assert again["judge_calibration_changed"] is None, again["judge_calibration_changed"]
    assert "has changed" not in output, output
    assert again["cases"][0]["corrected"] == first["cases"][0]["corrected"]

    evaluate(project, "second")  # another session the same day: history's strata grow again, the labels do not
    again, output = report(project, sid, "after-second")
    assert again["judge_calibration_changed"] is None and "has changed" not in output, output

    relabel_one(project)  # what a person changes is said, though the labels' count is the same
    changed, output = report(project, sid, "relabelled")
    line = changed["judge_calibration_changed"]
    assert line == (f"judge: this report corrects and decides with the calibration the session ran with (40 labels, "
                    f"last {TODAY}); history's has changed since (40 labels, last {TODAY}: a label's verdict changed, "
                    "or other labels count) — a new session decides with it"), line
    assert line in output, output
    assert changed["cases"][0]["corrected"] == first["cases"][0]["corrected"]  # still decided as it ran


    relabel_one(project, "PASS")  # changed back: the labels are the session's again, nothing to say
    back, output = report(project, sid, "back")
    assert back["judge_calibration_changed"] is None and "has changed" not in output, output

    # the same labels, no longer used (judge.correct: false): said too, the session still decided as it ran
    yaml = project / "scarbook.yaml"
    yaml.write_text(yaml.read_text().replace("judge:\n", "judge:\n  correct: false\n"))
    off, output = report(project, sid, "off")
    assert off["judge_calibration_changed"] == (
        f"judge: this report corrects and decides with the calibration the session ran with (40 labels, last {TODAY}); "
        f"history's has changed since (40 labels, last {TODAY}, not used: the same labels, no longer used) — a new "
        "session decides with it"), off["judge_calibration_changed"]
    assert off["cases"][0]["corrected"] == first["cases"][0]["corrected"]
