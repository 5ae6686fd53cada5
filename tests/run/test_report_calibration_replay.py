"""A later report of a session decides with the judge's calibration the session ran with — the one its runner's
looks decided with — never with the one history holds when the report is asked for.

Before, `scarbook report` (and merge, resume, the TUI's sessions screen) read the calibration again at report
time: labels added between the session and its report changed the corrected test the looks are replayed on
(run/gate.decide_gate), so a case the runner called below and stopped — and the exit code the eval gave — came
out undecided, exit 0, in a later report. Nothing recorded which calibration the looks had used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.judge.calibrate import judged_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.judge.settings import DEFAULT_MODEL
from scarbook.models import SessionInfo
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.judge.test_label_files import judged_run, scarbook
from tests.run.test_more_corrected import CASE, calibrate, judge_url_of, write_project

# the agent's summary is fine; the judge fails it every time
AGENT = 'from pathlib import Path\nPath("out.txt").write_text("renamed parse_args to read_args\\n")\n'


@pytest.fixture
def project(tmp_path: Path, judge_server, monkeypatch) -> Path:  # noqa: F811
    write_project(tmp_path, judge_server.url, AGENT, {"c": CASE})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    calibrate(tmp_path, lambda item: item.judge_verdict)  # a person agrees with the judge on all 40 items
    return tmp_path


def label_more(root: Path, count: int) -> None:
    """A later session of case c, `count` runs the judge failed, each labelled PASS by a person: the judge
    fails passing runs after all."""
    history = History(root / "workspaces")
    info = SessionInfo(id="20261203-000001-000b", started_at="2026-12-03T09:00:00+00:00", case_ids=["c"],
                       runs_per_case=count, judge_model=DEFAULT_MODEL)
    history.start_session(info)
    for k in range(1, count + 1):
        history.record_run(judged_run(info.id, "c", k, "FAIL", base_url=judge_url_of(root)))
    info.state = "finished"
    history.finish_session(info)
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        done = {lab.key for lab in store.labels()}
        for item in judged_items(history.iter_all_runs()):
            if item.key not in done and item.session_id == info.id:
                store.save_label(item, "PASS", labeled_at="2026-12-04")
    finally:
        store.close()


CHANGED = ("judge: this report corrects and decides with the calibration the session ran with (40 labels, last "
           "2026-12-02); history's has changed since (70 labels, last 2026-12-04: 30 added) — a new session "
           "decides with it")


def run_below_then_label(project: Path, judge_server) -> dict:  # noqa: F811
    """An eval whose looks (6, then 12 runs; the judge fails every run) call case c below on its corrected rate,
    exit 1; then 30 labels that say the judge fails passing runs. The eval's JSON report."""
    judge_server.default = tool_reply([("FAIL", "does not name it")])
    out = project / "eval.json"
    ran = scarbook(project, "eval", "--runs", "6", "--max-runs", "12", "-q", "--gate", "evidence",
                   "--undecided", "more", "--json", str(out))
    evaluated = json.loads(out.read_text())
    (case,) = evaluated["cases"]
    assert "corrected" in case, case  # the calibration was in use: the looks decided on the corrected test
    assert case["decision"] == "below" and ran.exit_code == 1 == evaluated["exit_code"], ran.output
    assert (case["passes"], case["fails"]) == (0, 12), case  # undecided at the first look, below at the last
    assert evaluated["session"]["gate"]["calibration"]["labels"] == 40  # recorded with the session
    assert evaluated["judge_calibration_changed"] is None
    same = scarbook(project, "report", evaluated["session"]["id"], "--json", str(project / "same.json"))
    assert json.loads((project / "same.json").read_text())["judge_calibration_changed"] is None, same.output
    assert "history's has changed" not in same.output, same.output  # nothing changed: nothing to say
    label_more(project, 30)  # history's calibration now says the judge fails passing runs
    return evaluated


def test_a_later_report_decides_with_the_calibration_the_session_ran_with(project: Path, judge_server) -> None:  # noqa: F811
    evaluated = run_below_then_label(project, judge_server)
    (case,) = evaluated["cases"]
    later = project / "report.json"
    result = scarbook(project, "report", evaluated["session"]["id"], "--json", str(later))
    assert result.exit_code == 0, result.output
    report = json.loads(later.read_text())
    (again,) = report["cases"]
    assert again["decision"] == "below" and report["exit_code"] == 1, again  # as the runner decided
    assert again["corrected"] == case["corrected"], again
    assert report["judge_calibration"]["labels"] == 40, report["judge_calibration"]
    assert report["judge_calibration_changed"] == CHANGED
    assert CHANGED in result.output, result.output

    # a session recorded before scarbook kept its calibration: history's decides, as before, and no line says so
    path = project / "workspaces" / "history" / evaluated["session"]["id"] / "session.json"
    db = json.loads(path.read_text())
    for row in db["session"].values():
        del row["gate"]["calibration"]
    path.write_text(json.dumps(db))
    older = scarbook(project, "report", evaluated["session"]["id"], "--json", str(project / "older.json"))
    old = json.loads((project / "older.json").read_text())
    assert old["cases"][0]["decision"] == "undecided" and old["judge_calibration"]["labels"] == 70, old["cases"]
    assert old["judge_calibration_changed"] is None and "history's has changed" not in older.output

    # with history's calibration now, 12 such runs are no longer below: what a new session would decide on
    fresh = scarbook(project, "eval", "--runs", "12", "-q", "--gate", "evidence", "--json", str(project / "new.json"))
    (now,) = json.loads((project / "new.json").read_text())["cases"]
    assert now["decision"] == "undecided" and fresh.exit_code == 0, fresh.output
    assert now["corrected"]["labels"] == 70, now
