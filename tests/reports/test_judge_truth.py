"""Corrected rates in every report (issue 23): a session graded by a calibrated judge shows the raw
rate and the rate corrected for the judge's measured error side by side — table, JSON, JUnit, step
summary, HTML — and a stale or switched-off calibration leaves the raw rates, saying why."""

from __future__ import annotations

import json
import random
from html import escape as html_escape
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from scarbook.history.judge_truth import calibration_for
from scarbook.judge.calibrate import judged_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.project import Project
from scarbook.reports.github import step_summary
from scarbook.reports.table import build_report
from tests.judge.test_label_files import ITEM, make_project, scarbook

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


def calibrate(root: Path, seed: int = 5) -> None:
    """A person labels every judged item: the judge passed 30% of the FAILs it saw as PASS."""
    rng = random.Random(seed)
    project = Project.discover(root)
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        for item in judged_items(project.history.iter_all_runs()):
            truth = item.judge_verdict if item.judge_verdict == "FAIL" or rng.random() < 0.7 else "FAIL"
            store.save_label(item, truth, labeled_at="2026-12-02")
    finally:
        store.close()


@pytest.fixture
def project(tmp_path) -> Path:
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10, "rules-only": ""})
    calibrate(root)
    return root


def test_report_shows_raw_and_corrected_side_by_side(project):
    out = project / "r.json"
    res = scarbook(project, "report", "--json", str(out), "--junit", str(project / "j.xml"),
                   "--html", str(project / "r.html"))
    assert res.exit_code == 0, res.output
    head = res.output.splitlines()[0].split()
    assert head[head.index("rate"):head.index("rate") + 6] == ["rate", "95%", "CI", "≈rate", "≈90%", "CI"]
    assert ("judge: ≈ rates corrected for the judge's measured error (40 labels, last 2026-12-02; docs/statistics.md); "
            "the gate decides on them") in res.output
    case = json.loads(out.read_text())["cases"][0]
    assert case["rate"] == 0.75
    fixed = case["corrected"]
    assert set(fixed) == {"rate", "ci", "ci_level", "q0", "q1", "labels", "calibrated_at", "judge_limited",
                          "labels_to_decide", "unbounded", "ci_note"}
    # 10 labels of the judge's FAILs and 40 judged items bound its error loosely: the interval is 0–100%, and says why
    assert fixed["ci"] == [0.0, 1.0] and fixed["unbounded"]["labels_to_bound"] is None
    assert fixed["ci_note"] == (
        "90% CI 0–100%: the judge's error as its 40 labels bound it could account for every verdict on its own — each "
        "pass a false pass (it may pass up to 94% of failing runs), each fail a miss (it may fail up to 58% of passing "
        "runs); were its error known exactly, these 40 runs would give 17–71%: labels alone would not bound it "
        "within 100,000 more — the judge's PASS share among its 40 judged items in history is too uncertain: more "
        "judged runs would narrow it")
    assert fixed["ci_level"] == 0.9  # the gate's interval: two one-sided tests at alpha 5%
    # about 30% of the judge's PASSes were FAILs: the corrected rate is lower, and its interval holds it
    assert fixed["rate"] < 0.7 and fixed["ci"][0] <= fixed["rate"] <= fixed["ci"][1]
    assert fixed["labels"] == 40 and fixed["calibrated_at"] == "2026-12-02"
    props = {p.get("name"): p.get("value") for p in ET.parse(project / "j.xml").iter("property")}
    assert props["corrected_rate"] == f"{fixed['rate']:.4f}" and props["corrected_labels"] == "40"
    assert props["judge_limited"] in ("true", "false")
    html = (project / "r.html").read_text()
    assert f"≈{round(100 * fixed['rate'])}%" in html and "rates corrected for the judge" in html


def test_step_summary_has_the_corrected_column(project):
    p = Project.discover(project)
    info = p.history.resolve("latest")
    rep = build_report(info, p.history.runs(info.id), {}, p.config,
                       calibration_for(p.history, p.workspaces_dir, p.config.judge))
    text = step_summary(rep)
    assert "| case | rate | 95% CI | ≈rate (judge-corrected, 90% CI) | pass^k |" in text
    row = next(line for line in text.splitlines() if line.startswith("| `alpha`"))
    assert f"≈{round(100 * rep.stats[0].corrected.rate)}% (" in row


def test_a_stale_calibration_leaves_the_raw_rates_and_says_why(project):
    (project / "scarbook.yaml").write_text("judge:\n  model: claude-newer\n")
    out = project / "r.json"
    res = scarbook(project, "report", "--json", str(out))
    assert "≈rate" not in res.output
    assert "judge: rates not corrected for the judge's error — stale: the labels were made on judge " in res.output
    doc = json.loads(out.read_text())
    assert doc["cases"][0]["corrected"] is None
    assert doc["judge_calibration"]["reason"].startswith("stale: ")


def test_judge_correct_false_turns_it_off(project):
    (project / "scarbook.yaml").write_text("judge:\n  correct: false\n")
    res = scarbook(project, "report")
    assert "≈rate" not in res.output
    assert "judge: rates not corrected for the judge's error — off (judge.correct: false in scarbook.yaml)" in res.output


WHOLE_RANGE = ("alpha: 90% CI 0–100%: the judge's error as its 40 labels bound it could account for every verdict on "
               "its own — each pass a false pass (it may pass up to 68% of failing runs), each fail a miss (it may fail "
               "up to 69% of passing runs); were its error known exactly, these 40 runs would give 32–68%: about 522 "
               "more labels would bound it")


def test_a_whole_range_interval_says_why_in_words(tmp_path):
    """20 judge PASSes in 40 runs, and 40 labels that put the judge at q0 = q1 = .9 (18 of its 20 PASSes and 2 of
    its 20 FAILs person PASS): the ≈90% interval is 0–100%, which alone reads as "no idea". The table, the HTML
    and the JSON say why: the judge's error as 40 labels bound it could account for every verdict, while with its
    error known exactly the runs would give 32–68%, and about how many labels would bound it."""
    root = make_project(tmp_path, {"alpha": "p" * 20 + "f" * 20})
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    seen = {"PASS": 0, "FAIL": 0}
    try:
        for item in judged_items(Project.discover(root).history.iter_all_runs()):
            seen[item.judge_verdict] += 1
            agrees = seen[item.judge_verdict] > 2  # the first 2 of each verdict are the judge's errors
            truth = item.judge_verdict if agrees else {"PASS": "FAIL", "FAIL": "PASS"}[item.judge_verdict]
            store.save_label(item, truth, labeled_at="2026-12-02")
    finally:
        store.close()
    out = root / "r.json"
    res = scarbook(root, "report", "--json", str(out), "--html", str(root / "r.html"))
    row = next(line for line in res.output.splitlines() if line.startswith("alpha"))
    assert " 0–100%* " in row  # judge-limited at 80%: the star
    assert WHOLE_RANGE in res.output.splitlines()
    fixed = json.loads(out.read_text())["cases"][0]["corrected"]
    assert fixed["ci"] == [0.0, 1.0]
    assert fixed["ci_note"] == WHOLE_RANGE.removeprefix("alpha: ")
    assert fixed["unbounded"] == {"false_pass": 0.6813, "missed": 0.6872, "exact_ci": [0.3151, 0.6849],
                                  "labels_to_bound": 522}
    assert html_escape(WHOLE_RANGE) in (root / "r.html").read_text()


def test_the_gate_decides_on_the_corrected_rate(project):
    """alpha reads 75% raw; about 30% of the judge's PASSes were FAILs. Against a threshold of 70%
    the raw rate passes and the corrected one does not: the gate (exit code, gate column) says BELOW."""
    (project / "scarbook.yaml").write_text("threshold: 0.7\ngate: {mode: point}\n")
    out = project / "r.json"
    res = scarbook(project, "report", "--json", str(out))
    row = next(line for line in res.output.splitlines() if line.startswith("alpha"))
    assert " 75% " in row and "BELOW" in row
    doc = json.loads(out.read_text())
    assert doc["cases"][0]["meets_threshold"] is False and doc["exit_code"] == 1
    (project / "scarbook.yaml").write_text("threshold: 0.7\ngate: {mode: point}\njudge:\n  correct: false\n")
    res = scarbook(project, "report", "--json", str(out))
    assert json.loads(out.read_text())["cases"][0]["meets_threshold"] is True


def test_the_evidence_gate_decides_on_the_corrected_interval(project):
    """30/40 raw is shown above 60% by the exact test (p = .04); the corrected rate's interval spans
    60%, so the evidence gate leaves it undecided and says what would decide it."""
    (project / "scarbook.yaml").write_text("threshold: 0.6\njudge:\n  correct: false\n")
    out = project / "r.json"
    scarbook(project, "report", "--json", str(out))
    assert json.loads(out.read_text())["cases"][0]["decision"] == "above"
    (project / "scarbook.yaml").write_text("threshold: 0.6\n")
    scarbook(project, "report", "--json", str(out))
    case = json.loads(out.read_text())["cases"][0]
    assert case["corrected"]["ci"][0] < 0.6 < case["corrected"]["ci"][1]
    assert case["decision"] == "undecided"
    # with the judge's error known exactly its 40 runs could not decide it either: more runs are what it needs
    assert case["corrected"]["judge_limited"] is False
    assert case["gate_note"] == "its rate corrected for the judge's error is too close to 60% to call: more runs would decide it"


def test_runs_auto_tests_the_true_rate_with_a_calibrated_judge(project):
    from scarbook.models import Case, Check
    from scarbook.run.session import SessionPlan, SessionSite, judge_rates
    from scarbook.session.prepare import read_calibration
    from scarbook.stats.sequential import make_decider

    judged = Case(id="alpha", task="t", checks=[Check("llm_judge", {"rubric": [ITEM]})])
    rules_only = Case(id="rules", task="t", checks=[Check("file_exists", {"path": "x"})])
    plan = SessionPlan(cases=[judged, rules_only], runs=40, adaptive=True)
    p = Project.discover(project)
    rates = judge_rates(read_calibration(SessionSite.of(p), plan.cases).usable_error, plan.cases)
    assert set(rates) == {"alpha"}
    q0, q1 = rates["alpha"]
    model = calibration_for(p.history, p.workspaces_dir, p.config.judge).error.for_case("alpha")
    assert (q0, q1) == (model.q0.value, model.q1.value)
    # the judge passes many true FAILs: 27 PASSes of 30 decide "above" on the raw scale, not on the true one
    raw = make_decider(plan.cases, 0.7, 40)
    fixed = make_decider(plan.cases, 0.7, 40, rates)
    assert raw(judged, 27, 3) == "above" and fixed(judged, 27, 3) != "above"
    (project / "scarbook.yaml").write_text("judge:\n  correct: false\n")
    assert judge_rates(read_calibration(SessionSite.of(Project.discover(project)), plan.cases).usable_error,
                       plan.cases) == {}


def second_session(root: Path, marks: str, model: str = "claude-sonnet-4-6") -> None:
    from scarbook.history.store import History
    from scarbook.models import SessionInfo
    from tests.judge.test_label_files import judged_run
    history = History(root / "workspaces")
    info = SessionInfo(id="20261203-000001-000b", started_at="2026-12-03T09:00:00+00:00", case_ids=["alpha"],
                       runs_per_case=len(marks), judge_model=model)
    history.start_session(info)
    for k, mark in enumerate(marks, 1):
        history.record_run(judged_run(info.id, "alpha", k, "PASS" if mark == "p" else "FAIL", model))
    info.state = "finished"
    history.finish_session(info)


def test_diff_says_what_the_judges_error_does_to_a_difference(project):
    second_session(project, "p" * 20 + "f" * 20)
    res = scarbook(project, "diff")
    assert res.exit_code == 0, res.output
    p = Project.discover(project)
    pooled = calibration_for(p.history, p.workspaces_dir, p.config.judge).error.pooled
    den = pooled.q0.value + pooled.q1.value - 1
    assert (f"judge: with its measured error (q0 {pooled.q0.value:.2f}, q1 {pooled.q1.value:.2f}, 40 labels) a true "
            f"difference reads × {den:.2f}: the agent's differences are about {1 / den:.1f}× those above; the same "
            "judge graded both sessions, so the verdicts stand (one-item rubrics; docs/statistics.md)") in res.output
    (project / "scarbook.yaml").write_text("judge:\n  correct: false\n")
    assert ("judge: differences not corrected for the judge's error — off (judge.correct: false in scarbook.yaml)"
            in scarbook(project, "diff").output)


def test_the_labels_file_is_closed_before_history_is_read(project, monkeypatch):
    """calibration_for takes calibration.json's labels and closes the file (judge/label_store.read_labels)
    before it walks history's judged items: no handle on it is held across the history read."""
    from scarbook.history import judge_truth
    from scarbook.history.store import History
    from scarbook.judge import label_store

    open_now: list = []

    class Tracked(label_store.CalibrationStore):
        def __init__(self, path) -> None:
            super().__init__(path)
            open_now.append(self)

        def close(self) -> None:
            open_now.remove(self)
            super().close()

    sessions = History.sessions
    seen: list[int] = []

    def watched(self, *args, **kwargs):
        seen.append(len(open_now))
        return sessions(self, *args, **kwargs)

    monkeypatch.setattr(label_store, "CalibrationStore", Tracked)
    monkeypatch.setattr(judge_truth, "CalibrationStore", Tracked, raising=False)  # (it once opened its own)
    monkeypatch.setattr(History, "sessions", watched)
    p = Project.discover(project)
    cal = calibration_for(p.history, p.workspaces_dir, p.config.judge)
    assert cal.usable and cal.labels == 40
    assert seen and seen == [0] * len(seen) and open_now == []


def test_diff_of_two_sessions_an_earlier_judge_graded_says_its_error_is_not_the_one_measured(project):
    """Both sessions graded by one judge that is no longer the one in use: their verdicts stand, and the error
    measured is the judge in use's, not theirs. Before, the note said A and B were graded by different judges
    ('A was graded by claude-old, B by claude-old: their difference mixes the agent's change with the judges'')."""
    from scarbook.history.store import History
    from scarbook.models import SessionInfo
    from tests.judge.test_label_files import judged_run
    history = History(project / "workspaces")
    for sid, marks in (("20261203-000001-000b", "p" * 20 + "f" * 20), ("20261204-000001-000c", "p" * 30 + "f" * 10)):
        info = SessionInfo(id=sid, started_at=f"{sid[:4]}-{sid[4:6]}-{sid[6:8]}T09:00:00+00:00", case_ids=["alpha"],
                           runs_per_case=len(marks), judge_model="claude-old")
        history.start_session(info)
        for k, mark in enumerate(marks, 1):
            history.record_run(judged_run(sid, "alpha", k, "PASS" if mark == "p" else "FAIL", "claude-old"))
        info.state = "finished"
        history.finish_session(info)
    res = scarbook(project, "diff", "20261203-000001-000b", "20261204-000001-000c")
    assert res.exit_code == 0, res.output
    model = Project.discover(project).config.judge.model
    assert (f"judge: both sessions were graded by claude-old, not by the judge in use ({model}) whose error the labels "
            "measure: differences not corrected for it; the same judge graded both sessions, so the verdicts stand"
            ) in res.output, res.output
    assert "mixes" not in res.output
