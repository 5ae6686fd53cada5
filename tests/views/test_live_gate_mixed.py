"""The gate in one place (run/gate.py), for a session that mixes cases whose judged rate is corrected for the
judge's measured error with cases decided on their raw rate (issue 32.4): the live screen's fold
(views/live_state.LiveSession) and the CLI's report (reports/table.build_report) decide every case alike —
one Holm family over the four cases with a verdict, at one alpha, each corrected interval at the same level.

A past simulation saw a possible mismatch here (0 in 3,000). Reading the two paths: both end in
decide_gate -> gate_stats -> decide_cases over every case with a verdict (stats/decisions.py), the corrected
ones through their exact tests on the true rate (family = the same count), at gate_alpha of the session, with
the calibration the session was prepared with; this pins that they agree on real history."""

from __future__ import annotations

from pathlib import Path

from scarbook.config import Config
from scarbook.history.judge_truth import calibration_for
from scarbook.history.store import History
from scarbook.judge.calibrate import judged_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.models import Case, Check, CheckResult, RunRecord, SessionInfo
from scarbook.project import Project
from scarbook.reports.table import build_report
from scarbook.run.events import RunFinished, SessionFinished
from scarbook.views.live_state import LiveSession
from tests.judge.test_label_files import DEFAULT_MODEL, ITEM, judged_run

EARLIER, SID = "20261201-000001-000a", "20261202-000001-000b"
JUDGED = {"judged-high": "p" * 38 + "f" * 2, "judged-low": "p" * 12 + "f" * 28}  # corrected: a fifth of the FAILs were passes
RULED = {"ruled-high": "p" * 40, "ruled-low": "p" * 26 + "f" * 14}  # raw: a file check, no judge


def label(root: Path) -> None:
    """A person labels every judged item: the judge's PASSes are right, and one in five of its FAILs was a pass."""
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        for n, item in enumerate(sorted(judged_items(Project.discover(root).history.iter_all_runs()),
                                        key=lambda i: (i.case_id, i.k))):
            truth = "PASS" if item.judge_verdict == "PASS" or n % 5 == 0 else "FAIL"
            store.save_label(item, truth, labeled_at="2026-12-02")
    finally:
        store.close()


def ruled_run(sid: str, case_id: str, k: int, mark: str) -> RunRecord:
    status = "pass" if mark == "p" else "fail"
    return RunRecord(sid, case_id, k, status, "", checks=[CheckResult("file_exists", status, "", 0)])


def write_session(history: History, sid: str, day: int, verdicts: dict[str, str], ruled: dict[str, str]) -> SessionInfo:
    info = SessionInfo(id=sid, started_at=f"2026-12-0{day}T09:00:00+00:00", case_ids=[*verdicts, *ruled],
                       runs_per_case=max(map(len, (*verdicts.values(), *ruled.values()))), judge_model=DEFAULT_MODEL)
    history.start_session(info)
    for case, marks in verdicts.items():
        for k, mark in enumerate(marks, 1):
            history.record_run(judged_run(sid, case, k, "PASS" if mark == "p" else "FAIL"))
    for case, marks in ruled.items():
        for k, mark in enumerate(marks, 1):
            history.record_run(ruled_run(sid, case, k, mark))
    info.state = "finished"
    history.finish_session(info)
    return info


def test_a_mixed_session_is_decided_alike_live_and_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "scarbook.yaml").write_text("")
    history = History(tmp_path / "workspaces")
    # an earlier session of the judged cases, its items labelled: the judge's error is measured on 200 runs each
    write_session(history, EARLIER, 1, {"judged-high": "p" * 180 + "f" * 20, "judged-low": "p" * 110 + "f" * 90}, {})
    label(tmp_path)
    info = write_session(history, SID, 2, JUDGED, RULED)  # the session the gate decides
    p = Project.discover(tmp_path)
    cases = {cid: Case(id=cid, task="t", checks=[Check("llm_judge", {"rubric": [ITEM]})],
                       threshold=0.6 if cid == "judged-high" else None) for cid in JUDGED} | {
        cid: Case(id=cid, task="t", checks=[Check("file_exists", {"path": "out.txt"})]) for cid in RULED}
    calibration = calibration_for(p.history, p.workspaces_dir, p.config.judge, cases)
    assert calibration.usable
    runs = sorted(p.history.runs(SID), key=lambda r: (r.case_id, r.k))

    live = LiveSession(list(cases.values()), 40, Config(), calibration=calibration)
    for r in runs:
        live.apply(RunFinished(r))
    live.apply(SessionFinished(info))
    rep = build_report(info, runs, cases, Config(), calibration)

    reported = {s.case_id: s for s in rep.stats}
    assert {cid: s.corrected is not None for cid, s in reported.items()} == {
        "judged-high": True, "judged-low": True, "ruled-high": False, "ruled-low": False}
    # One Holm family of the four, the corrected cases by their tests on the true rate: ruled-low (26/40 against
    # 80%, P(X <= 26) = .0194) comes second, after judged-low's corrected P, so Holm takes it x3 (.058): undecided.
    # In a family of the two raw cases alone it would be x2 (.039): below. judged-high is above its 60% on its
    # corrected interval (67–100%), judged-low below 80% on its (11–67%).
    assert {cid: s.gate for cid, s in reported.items()} == {
        "judged-high": "above", "judged-low": "below", "ruled-high": "above", "ruled-low": "undecided"}
    assert live.gate == {cid: s.gate for cid, s in reported.items()}
    for cid, s in reported.items():  # the numbers beside each decision: the same, corrected ones at one level
        shown = live.final[cid]
        assert (shown.rate, shown.lo, shown.hi) == (s.rate, s.lo, s.hi), cid
        if s.corrected is not None:
            assert shown.corrected is not None
            assert (shown.corrected.rate, shown.corrected.lo, shown.corrected.hi) == (
                s.corrected.rate, s.corrected.lo, s.corrected.hi), cid
