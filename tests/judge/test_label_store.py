"""calibration.json keeps a person's verdict once per (case, item, artifact) and each judge's verdict beside it:
a change of judge adds its verdicts and never replaces another's; a label changes only by relabel; a file of the
older layout (one record per item holding the judge's verdict of the time) is read as it is and migrated, with a
message and the old file kept, by the first label saved. Real TinyDB files in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

from scarbook.history.judge_truth import current_labels, labelling_pool, measure
from scarbook.judge.calibrate import artifact_digest, judged_items, pick_items
from scarbook.judge.label_store import CalibrationStore, read_labels
from scarbook.judge.settings import JudgeSettings
from scarbook.models import CheckResult, JudgeDetail, RunRecord

ITEM = "the summary names the renamed function"
A, B = JudgeSettings(model="claude-a"), JudgeSettings(model="claude-b")


def run(judge: JudgeSettings, k: int, verdict: str, session: str = "s1") -> RunRecord:
    detail = JudgeDetail.from_dict({"items": [{"item": 1, "text": ITEM, "verdict": verdict, "reason": f"{judge.model} {k}"}],
                                    "model": judge.model, "prompt_digest": judge.prompt_digest,
                                    "artifact_excerpt": f"artifact {k}", "samples": judge.samples,
                                    "temperature": judge.temperature, "max_tokens": judge.max_tokens,
                                    "base_url": judge.recorded_base_url()})
    return RunRecord(session, "alpha", k, "pass" if verdict == "PASS" else "fail", "",
                     checks=[CheckResult("llm_judge", "pass" if verdict == "PASS" else "fail", "", 0, judge=detail)])


def item(judge: JudgeSettings, k: int, verdict: str):
    (found,) = judged_items([run(judge, k, verdict)])
    return found


def old_layout(path: Path, judge: JudgeSettings, labels: dict[int, tuple[str, str]]) -> bytes:
    """calibration.json as scarbook wrote it before truths and verdicts: {k: (human, judge verdict)}."""
    records = {}
    for n, (k, (human, judged)) in enumerate(sorted(labels.items()), 1):
        it = item(judge, k, judged)
        records[str(n)] = {"case_id": "alpha", "item": ITEM, "artifact_digest": it.artifact_digest,
                           "human_verdict": human, "judge_verdict": judged, "judge_reason": it.judge_reason,
                           "judge_model": judge.model, "judge_prompt_digest": judge.prompt_digest,
                           "labeled_at": f"2026-11-0{k}T10:00:00+00:00", "artifact": f"artifact {k}", "item_index": 0,
                           "judge_sampling": it.judge_sampling}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"labels": records, "calibrations": {}}))
    return path.read_bytes()


def pairs(labels) -> list[tuple[int, str, str, str]]:
    return sorted((int(lab.artifact.split()[-1]), lab.human_verdict, lab.judge_model, lab.judge_verdict) for lab in labels)


def test_a_second_judges_verdict_is_kept_beside_the_first_and_each_calibration_reads_its_own(tmp_path):
    """Labelled under judge A, then the same artifact graded by judge B and paired: A's label keeps A's verdict (it
    was replaced by B's, and A's calibration lost it); the person's verdict is stored once."""
    store = CalibrationStore(tmp_path / "calibration.json")
    store.save_label(item(A, 1, "PASS"), "FAIL")
    store.save_label(item(A, 2, "FAIL"), "FAIL")
    paired, ask = store.pair_known([item(B, 1, "FAIL"), item(B, 3, "PASS")])
    assert pairs(paired) == [(1, "FAIL", "claude-b", "FAIL")] and [i.artifact for i in ask] == ["artifact 3"]
    assert pairs(store.labels()) == [(1, "FAIL", "claude-a", "PASS"), (1, "FAIL", "claude-b", "FAIL"),
                                     (2, "FAIL", "claude-a", "FAIL")]
    assert pairs(current_labels(store.labels(), A)) == [(1, "FAIL", "claude-a", "PASS"), (2, "FAIL", "claude-a", "FAIL")]
    assert pairs(current_labels(store.labels(), B)) == [(1, "FAIL", "claude-b", "FAIL")]
    assert store.labeled_keys() == {("alpha", ITEM, artifact_digest("artifact 1")), ("alpha", ITEM, artifact_digest("artifact 2"))}
    store.close()
    on_disk = json.loads((tmp_path / "calibration.json").read_text())
    assert len(on_disk["truths"]) == 2 and len(on_disk["verdicts"]) == 3


def test_the_draw_for_a_new_judge_takes_its_items_and_asks_only_about_the_unlabelled(tmp_path):
    """After a change of judge the draw comes from the new judge's items, less those already paired with its
    verdicts; items the person labelled under the old judge stay in it and are paired without a question (the
    draw used to leave every labelled artifact out, so the new judge could never be calibrated on them)."""
    store = CalibrationStore(tmp_path / "calibration.json")
    for k in (1, 2, 3):
        store.save_label(item(A, k, "PASS"), "PASS")
    runs = [run(A, k, "PASS") for k in range(1, 6)] + [run(B, k, "PASS", "s2") for k in range(1, 6)]
    judge, done = labelling_pool(store.labels(), judged_items(runs), B)
    assert judge is B and done == set()
    drawn = pick_items(runs, sample=10, exclude=done, judge=judge)
    assert sorted((i.judge_model, i.artifact) for i in drawn) == [("claude-b", f"artifact {k}") for k in range(1, 6)]
    paired, ask = store.pair_known(drawn)
    assert len(paired) == 3 and sorted(i.artifact for i in ask) == ["artifact 4", "artifact 5"]
    judge, done = labelling_pool(store.labels(), judged_items(runs), B)
    assert sorted(i.artifact for i in pick_items(runs, sample=10, exclude=done, judge=judge)) == ["artifact 4", "artifact 5"]
    # a judge that graded nothing yet: every judge's items, less every labelled one (as before)
    judge, done = labelling_pool(store.labels(), judged_items(runs), JudgeSettings(model="claude-c"))
    assert judge is None and len(done) == 3
    store.close()


def test_a_file_of_the_older_layout_is_read_as_it_is_and_migrated_with_a_message_by_the_first_label(tmp_path):
    path = tmp_path / "history" / "calibration.json"
    before = old_layout(path, A, {1: ("PASS", "PASS"), 2: ("FAIL", "PASS"), 3: ("FAIL", "FAIL")})
    # reading — what every eval, report and the library do — never writes the file
    assert pairs(read_labels(path)) == [(1, "PASS", "claude-a", "PASS"), (2, "FAIL", "claude-a", "PASS"),
                                        (3, "FAIL", "claude-a", "FAIL")]
    cal = measure(read_labels(path), judged_items([run(A, k, "PASS") for k in range(1, 4)]), A)
    assert cal.labels == 3 and cal.calibrated_at == "2026-11-03"
    assert path.read_bytes() == before
    store = CalibrationStore(path)
    assert store.migrated == ""
    store.save_label(item(B, 2, "FAIL"), "FAIL")  # judge B on an item labelled under A: the first write
    assert store.migrated == (f"{path}: 3 labels moved to the layout that keeps your verdict once per item and "
                              "artifact and each judge's verdict beside it (a change of judge no longer replaces one); "
                              f"the file as it was: {path}.v1")
    assert pairs(store.labels()) == [(1, "PASS", "claude-a", "PASS"), (2, "FAIL", "claude-a", "PASS"),
                                     (2, "FAIL", "claude-b", "FAIL"), (3, "FAIL", "claude-a", "FAIL")]
    store.close()
    assert (tmp_path / "history" / "calibration.json.v1").read_bytes() == before
    on_disk = json.loads(path.read_text())
    assert "labels" not in on_disk and len(on_disk["truths"]) == 3 and len(on_disk["verdicts"]) == 4
    again = CalibrationStore(path)  # nothing left to migrate: no second message, the first backup kept
    again.save_label(item(A, 4, "PASS"), "PASS")
    assert again.migrated == ""
    again.close()
    assert (tmp_path / "history" / "calibration.json.v1").read_bytes() == before
    assert measure(read_labels(path), judged_items([run(A, k, "PASS") for k in range(1, 5)]), A).labels == 4
