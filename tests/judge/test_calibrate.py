"""Judge calibration: stratified sampling, kappa, label storage, staleness."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest

from scarbook.judge.calibrate import (
    agreement,
    artifact_digest,
    cohen_kappa,
    format_report,
    judged_items,
    pick_items,
    rescore,
    verdicts_by_key,
)
from scarbook.judge.label_store import CalibrationStore, LabelConflict, calibration_status
from scarbook.judge.settings import JudgeSettings
from scarbook.models import CheckResult, JudgeDetail, RunRecord

RUBRIC = ["the summary names the renamed function", "the summary says which file changed"]


def judged_run(case_id: str, k: int, verdicts: list[str], artifact: str | None = None, shape: str = "brief") -> RunRecord:
    if shape == "brief":  # the shape the calibration brief assumed
        items = [{"index": i, "item": RUBRIC[i], "verdict": v, "reason": f"r{i}"} for i, v in enumerate(verdicts)]
    else:  # the judge's own record: 1-based "item" number plus "text"
        items = [{"item": i + 1, "text": RUBRIC[i], "verdict": v, "reason": f"r{i}"} for i, v in enumerate(verdicts)]
    judge = {"items": items, "model": "claude-test", "prompt_digest": "p1"}
    if artifact is not None:
        judge["artifact_excerpt"] = artifact
    status = "pass" if all(v == "PASS" for v in verdicts) else "fail"
    return RunRecord(
        session_id="s1", case_id=case_id, k=k, status=status, reason="",
        checks=[CheckResult(type="file_exists", status="pass", detail="", index=0),
                CheckResult(type="llm_judge", status=status, detail="", index=1, judge=JudgeDetail.from_dict(judge))],
        output_excerpt=f"output of {case_id} run {k}",
    )


def runs_for(case_id: str, n: int, fail_every: int) -> list[RunRecord]:
    return [judged_run(case_id, k, ["FAIL" if (k + 1) % fail_every == 0 else "PASS", "PASS"], artifact=f"{case_id}-{k}")
            for k in range(n)]


def test_judged_items_reads_both_record_shapes_and_falls_back_to_the_output():
    brief = judged_items([judged_run("c", 0, ["PASS", "FAIL"], artifact="ART")])
    own = judged_items([judged_run("c", 1, ["PASS", "FAIL"], shape="judge")])
    assert [(i.item_index, i.item, i.judge_verdict) for i in brief] == [(0, RUBRIC[0], "PASS"), (1, RUBRIC[1], "FAIL")]
    assert [(i.item_index, i.item, i.judge_verdict) for i in own] == [(0, RUBRIC[0], "PASS"), (1, RUBRIC[1], "FAIL")]
    assert brief[0].artifact == "ART" and own[0].artifact == "output of c run 1"
    assert brief[0].check_index == 1 and brief[0].judge_model == "claude-test"
    assert brief[0].key == ("c", RUBRIC[0], artifact_digest("ART"))


def test_pick_items_is_stratified_across_cases_and_verdicts():
    runs = runs_for("alpha", 20, 5) + runs_for("beta", 20, 4) + runs_for("gamma", 4, 100)
    picked = pick_items(runs, sample=12, seed=3)
    assert len(picked) == 12 and len({i.key for i in picked}) == 12
    per_case = Counter(i.case_id for i in picked)
    assert per_case == {"alpha": 4, "beta": 4, "gamma": 4}
    # FAILs are ~10% of items, yet each case that has them contributes half its picks as FAIL
    for case in ("alpha", "beta"):
        assert Counter(i.judge_verdict for i in picked if i.case_id == case) == {"FAIL": 2, "PASS": 2}
    assert all(i.judge_verdict == "PASS" for i in picked if i.case_id == "gamma")
    assert pick_items(runs, sample=12, seed=3) == picked  # seeded
    assert pick_items(runs, sample=12, seed=4) != picked


def test_pick_items_skips_already_labelled_and_stops_when_out_of_items():
    runs = runs_for("alpha", 2, 1)
    first = pick_items(runs, sample=100)
    assert len(first) == 4  # 2 runs x 2 items
    again = pick_items(runs, sample=100, exclude={first[0].key})
    assert first[0].key not in {i.key for i in again} and len(again) == 3


def test_cohen_kappa_hand_worked():
    # 50 items: both PASS 20, A PASS/B FAIL 5, A FAIL/B PASS 10, both FAIL 15.
    # po = 35/50 = 0.70; pe = 0.5*0.6 + 0.5*0.4 = 0.50; kappa = 0.2 / 0.5 = 0.40
    pairs = [("PASS", "PASS")] * 20 + [("PASS", "FAIL")] * 5 + [("FAIL", "PASS")] * 10 + [("FAIL", "FAIL")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def sklearn_kappa(pairs):
    # sklearn.metrics.cohen_kappa_score's confusion-matrix formula, reimplemented
    labels = sorted({x for p in pairs for x in p})
    idx = {lab: i for i, lab in enumerate(labels)}
    m = [[0] * len(labels) for _ in labels]
    for a, b in pairs:
        m[idx[a]][idx[b]] += 1
    total = len(pairs)
    rows = [sum(r) for r in m]
    cols = [sum(m[i][j] for i in range(len(labels))) for j in range(len(labels))]
    expected = [[rows[i] * cols[j] / total for j in range(len(labels))] for i in range(len(labels))]
    w = [[0 if i == j else 1 for j in range(len(labels))] for i in range(len(labels))]
    num = sum(w[i][j] * m[i][j] for i in range(len(labels)) for j in range(len(labels)))
    den = sum(w[i][j] * expected[i][j] for i in range(len(labels)) for j in range(len(labels)))
    return 1 - num / den


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_matches_the_sklearn_formula(seed):
    rng = random.Random(seed)
    pairs = [(rng.choice("PF"), rng.choice("PPF")) for _ in range(37)]
    assert cohen_kappa(pairs) == pytest.approx(sklearn_kappa(pairs))


def test_cohen_kappa_is_not_measurable_with_one_class():
    assert math.isnan(cohen_kappa([("PASS", "PASS")] * 6))
    assert math.isnan(cohen_kappa([]))
    # one class per rater but different classes: perfect disagreement, kappa 0 (pe = 0)
    assert cohen_kappa([("PASS", "FAIL")] * 4) == 0.0


def test_grade_five_items_store_and_report(tmp_path):
    runs = runs_for("alpha", 6, 2) + runs_for("beta", 6, 3)
    items = pick_items(runs, sample=5, seed=1)
    store = CalibrationStore(tmp_path / "history" / "calibration.json")
    human = ["FAIL", "PASS", "PASS", "FAIL", "FAIL"]
    for item, verdict in zip(items, human, strict=False):
        store.save_label(item, verdict, labeled_at="2026-11-20")
    labels = store.labels()
    assert len(labels) == 5
    report = agreement(labels)
    pairs = [(h, i.judge_verdict) for h, i in zip(human, items, strict=False)]
    assert report.overall[0] == pytest.approx(sum(a == b for a, b in pairs) / 5)
    assert report.overall[1] == pytest.approx(sklearn_kappa(pairs))  # the human used both classes
    assert report.overall[2] == 5
    assert set(report.per_case) == {i.case_id for i in items}
    assert {d.key for d in report.disagreements} == {i.key for h, i in zip(human, items, strict=False) if h != i.judge_verdict}
    text = format_report(report)
    assert text.splitlines()[0].startswith("case") and any(line.startswith("overall") for line in text.splitlines())
    # the file on disk is plain JSON that survives reopening
    store.close()
    on_disk = json.loads((tmp_path / "history" / "calibration.json").read_text())
    assert len(on_disk["truths"]) == 5 and len(on_disk["verdicts"]) == 5
    assert len(CalibrationStore(tmp_path / "history" / "calibration.json").labels()) == 5


def test_a_label_changes_only_by_relabel_never_by_saving_it_again(tmp_path):
    """Saving the same label again adds nothing; another verdict for a labelled item is refused with what is
    stored — a person's label changes by `relabel`, the explicit act, which keeps each judge's verdict."""
    item = judged_items(runs_for("alpha", 1, 1))[0]
    store = CalibrationStore(tmp_path / "cal.json")
    store.save_label(item, "pass", labeled_at="2026-12-01T10:00:00+00:00")
    store.save_label(item, "PASS", labeled_at="2026-12-02T10:00:00+00:00")
    assert [(lab.human_verdict, lab.labeled_at) for lab in store.labels()] == [("PASS", "2026-12-01T10:00:00+00:00")]
    with pytest.raises(LabelConflict) as conflict:
        store.save_label(item, "FAIL")
    assert str(conflict.value) == (f"case alpha, item {RUBRIC[0]!r} (artifact {item.artifact_digest}) is labelled PASS "
                                   f"in {tmp_path / 'cal.json'} (2026-12-01), not FAIL: a label changes only when you "
                                   "relabel it")
    before = store.relabel(item.key, "fail")
    assert before.human_verdict == "PASS"
    assert [(lab.human_verdict, lab.judge_verdict) for lab in store.labels()] == [("FAIL", "FAIL")]
    with pytest.raises(ValueError) as info:
        store.save_label(item, "maybe")
    assert str(info.value) == "a label is PASS or FAIL, got 'maybe'"


def test_rescore_scores_a_later_judge_against_the_same_labels(tmp_path):
    runs = [judged_run("alpha", k, ["PASS", "FAIL"], artifact=f"a{k}") for k in range(3)]
    store = CalibrationStore(tmp_path / "cal.json")
    for item in judged_items(runs):
        store.save_label(item, "PASS")  # the human thinks every item passes
    assert agreement(store.labels()).overall[0] == pytest.approx(0.5)
    later = [judged_run("alpha", k, ["PASS", "PASS"], artifact=f"a{k}") for k in range(2)]
    rescored = rescore(store.labels(), verdicts_by_key(later), judge_model="claude-new", judge_prompt_digest="p2")
    assert len(rescored) == 4  # the third artifact was not re-judged
    assert all(lab.judge_model == "claude-new" for lab in rescored)
    assert agreement(rescored).overall[0] == 1.0


def test_calibration_status_goes_stale_on_any_change_of_judge(tmp_path):
    """Stale when the judge it was made on is not the one in use: model, prompt or sampling (judge/identity.py)."""
    judge = JudgeSettings(model="claude-test")
    store = CalibrationStore(tmp_path / "cal.json")
    assert calibration_status(store, judge) == (None, None, "")
    labels = [store.save_label(i, "PASS") for i in judged_items(runs_for("alpha", 2, 1))]
    store.record_calibration(agreement(labels), judge, when="2026-11-20")
    assert calibration_status(store, judge) == ("2026-11-20", 0.5, "")
    other = JudgeSettings(model="claude-other")
    assert calibration_status(store, other)[2] == (f"it was made on judge claude-test (prompt {judge.prompt_digest[:8]}), "
                                                   f"the judge is now claude-other (prompt {judge.prompt_digest[:8]})")
    assert calibration_status(store, JudgeSettings(model="claude-test", samples=3))[2] == (
        "it was made on judge claude-test, samples=1, the judge is now claude-test, samples=3")
    store.record_calibration(agreement(labels), other, when="2026-11-21")
    assert calibration_status(store, other) == ("2026-11-21", 0.5, "")


@pytest.mark.parametrize("record, why", [
    ({"judge_model": "m", "judge_prompt_digest": "d", "agreement": 0.9}, "a calibration record lacks 'date'"),
    ({"date": 20261201, "judge_model": "m", "judge_prompt_digest": "d", "agreement": 0.9},
     "a calibration's date is not text or its agreement not a number"),
    ({"date": "2026-12-01", "judge_model": "m", "judge_prompt_digest": "d", "agreement": "all"},
     "a calibration's date is not text or its agreement not a number"),
])
def test_a_calibration_record_scarbook_did_not_write_is_named_damaged(tmp_path, record, why):
    """calibration.json sits in history, within an unsandboxed agent's reach: a record of the wrong
    shape is a damaged-file message naming the file, never a KeyError or a date that is not one."""
    from scarbook.errors import HistoryError
    from scarbook.judge.label_store import calibration_status

    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"calibrations": {"1": record}}))
    store = CalibrationStore(path)
    with pytest.raises(HistoryError) as exc:
        calibration_status(store, JudgeSettings(model="m"))
    store.close()
    assert str(exc.value) == (f"history file {path} is damaged ({why}); the other sessions are unaffected — "
                              f"move it aside to silence this: mv {path} {path}.damaged")
