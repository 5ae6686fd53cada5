"""Issue 35.3: the run review filters runs by the rubric item that failed them — one filter per item that
failed some run (most failing first), its count, and the runs it shows."""

from __future__ import annotations

from scarbook.models import CheckResult, CheckStatus, RunRecord, RunStatus
from scarbook.views.run_review import filter_counts, filter_names, shown_runs
from tests.helpers.item_history import judged_run

ITEMS = [("r000001", "tmp.txt holds one line"), ("r000002", "the answer names tmp.txt")]


def runs() -> list[RunRecord]:
    votes = {1: [["PASS"], ["PASS"]], 2: [["FAIL"], ["PASS"]], 3: [["FAIL"], ["FAIL"]], 4: [["PASS"], ["PASS"]]}
    out = [judged_run("s1", "c1", k, ITEMS, v) for k, v in votes.items()]
    # a run a rule check failed before the judge: no item failed it
    out.append(RunRecord(session_id="s1", case_id="c1", k=5, status=RunStatus.FAIL, reason="no file",
                         checks=[CheckResult("file_exists", CheckStatus.FAIL, "no tmp.txt", 0)]))
    return out


def test_each_item_that_failed_a_run_is_a_filter_of_the_runs_it_failed() -> None:
    rs = runs()
    names = filter_names(rs)
    assert names[-2:] == ["item r000001", "item r000002"]  # r000001 failed 2 runs, r000002 1
    counts = filter_counts(rs)
    assert (counts["item r000001"], counts["item r000002"]) == (2, 1)
    assert [r.k for r in shown_runs(rs, "item r000001")] == [2, 3]
    assert [r.k for r in shown_runs(rs, "item r000002")] == [3]
    assert [r.k for r in shown_runs(rs, "failed")] == [2, 3, 5]


def test_runs_without_a_failing_item_add_no_item_filter() -> None:
    rs = [r for r in runs() if r.k in (1, 4, 5)]
    assert not [n for n in filter_names(rs) if n.startswith("item ")]
