"""Issue 38.4: a report reads the session it reports, not the whole history. A report of one session
took 3.4 s of CPU inside a 20,000-run history and 1.3 s alone, 10.7 of 14.0 s of the profile being
the judge calibration's scan of every run, in a project with no llm_judge check at all."""

from __future__ import annotations

import pytest

from scarbook.history.judge_truth import NO_JUDGED_CASE, calibration_for
from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo

JUDGED = ("id: {cid}\ntask: t\nchecks:\n  - {{type: file_exists, path: out.txt}}\n"
          "  - {{type: llm_judge, artifact: output, rubric: [the answer is one line]}}\n")
RULES = "id: {cid}\ntask: t\nchecks: [{{type: file_exists, path: out.txt}}]\n"


def _session(history: History, n: int, case_ids: list[str]) -> SessionInfo:
    info = SessionInfo(id=f"20260101-0{n:05d}-000a", label=f"s{n}", started_at=f"2026-01-{n:02d}T09:00:00+00:00",
                       runs_per_case=3, case_ids=case_ids, agent="demo")
    history.start_session(info)
    for cid in case_ids:
        for k in (1, 2, 3):
            history.record_run(RunRecord(info.id, cid, k, "pass", "all checks passed", started_at=info.started_at))
    history.finish_session(info)
    return info


@pytest.fixture
def reads(monkeypatch) -> dict[str, list]:
    """Which sessions' runs were read, and whether every run of history was."""
    seen: dict[str, list] = {"sessions": [], "all_runs": []}
    runs, iter_all = History.runs, History.iter_all_runs

    def spy_runs(self, session_id, *a, **kw):
        seen["sessions"].append(session_id)
        return runs(self, session_id, *a, **kw)

    def spy_all(self):
        seen["all_runs"].append(True)
        return iter_all(self)

    monkeypatch.setattr(History, "runs", spy_runs)
    monkeypatch.setattr(History, "iter_all_runs", spy_all)
    return seen


@pytest.mark.parametrize("case_yaml", [RULES, JUDGED], ids=["no-judge-check", "judged-no-labels"])
def test_a_report_reads_its_session_only(project, reads, tmp_path, case_yaml) -> None:
    for cid in ("a", "b"):
        project.case(cid, case_yaml.format(cid=cid))
    history = project.load().history
    old = [_session(history, n, ["a", "b"]) for n in (1, 2, 3)]
    mine = _session(history, 4, ["a"])
    reads["sessions"].clear()
    result = project.cli("report", mine.id, "--html", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").exists()
    assert reads["all_runs"] == [], "the report read every run of history"
    assert set(reads["sessions"]) == {mine.id}, f"read the runs of {reads['sessions']}, not only {mine.id}"
    assert not {s.id for s in old} & set(reads["sessions"])


def test_no_calibration_is_read_when_no_case_has_a_judge_check(project, reads) -> None:
    project.case("a", RULES.format(cid="a"))
    (project.workspaces / "history").mkdir(parents=True)
    (project.workspaces / "history" / "calibration.json").write_text("{not json")  # not even opened
    p = project.load()
    cal = calibration_for(p.history, p.workspaces_dir, p.config.judge, p.load_cases().by_id())
    assert (cal.usable, cal.reason) == (False, NO_JUDGED_CASE)
    assert reads["all_runs"] == []
