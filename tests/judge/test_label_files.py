"""`scarbook calibrate --export/--import/--report` (issue 23): labels from a spreadsheet, checked
line by line before anything is stored; the judge's measured error printed, or why it is not used."""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.history.store import History
from scarbook.judge.label_store import CalibrationStore
from scarbook.judge.prompt import prompt_digest
from scarbook.judge.settings import DEFAULT_MODEL, JudgeSettings
from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo

ITEM = "the summary names the renamed function"


def judged_run(sid: str, case_id: str, k: int, verdict: str, model: str = DEFAULT_MODEL, **recorded) -> RunRecord:
    """A run `model` judged, recorded whole as a run is today: the rest of its judge is the default one's, but for
    `recorded` (a part set to None is left out, as a record older than it)."""
    default = JudgeSettings()
    judge = {"items": [{"index": 0, "item": ITEM, "verdict": verdict, "reason": "r"}], "model": model,
             "prompt_digest": prompt_digest(), "artifact_excerpt": f"artifact {case_id} {sid} {k}",
             "samples": 1, "temperature": 0.0, "base_url": default.recorded_base_url(),
             "max_tokens": default.max_tokens}
    judge = {key: value for key, value in {**judge, **recorded}.items() if value is not None}
    status = "pass" if verdict == "PASS" else "fail"
    return RunRecord(sid, case_id, k, status, "", checks=[CheckResult("llm_judge", status, "", 0, judge=JudgeDetail.from_dict(judge))])


def make_project(root: Path, verdicts: dict[str, str], model: str = DEFAULT_MODEL, **recorded) -> Path:
    """One session; per case a string of p/f judge verdicts, one run each (`recorded`: as judged_run's)."""
    (root / "scarbook.yaml").write_text("")
    history = History(root / "workspaces")
    info = SessionInfo(id="20261201-000001-000a", started_at="2026-12-01T09:00:00+00:00", case_ids=list(verdicts),
                       runs_per_case=max(map(len, verdicts.values())), judge_model=model)
    history.start_session(info)
    for case, marks in verdicts.items():
        for k, mark in enumerate(marks, 1):
            history.record_run(judged_run(info.id, case, k, "PASS" if mark == "p" else "FAIL", model, **recorded))
    info.state = "finished"
    history.finish_session(info)
    return root


def scarbook(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def stored(root: Path) -> list:
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        return store.labels()
    finally:
        store.close()


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10, "beta": "p" * 20 + "f" * 20})


def fill(rows: list[dict], truth) -> list[dict]:
    return [{**row, "label": truth(row)} for row in rows]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_items_to_label_without_the_judges_verdict(project):
    out = project / "to-label.jsonl"
    res = scarbook(project, "calibrate", "--export", str(out), "--sample", "6")
    assert res.exit_code == 0, res.output
    assert res.output == (f"wrote 6 items to label to {out}: fill each `label` with PASS or FAIL (leave it empty "
                          f"to skip), then `scarbook calibrate --import {out}`\n")
    rows = read_jsonl(out)
    assert len(rows) == 6 and {r["case"] for r in rows} == {"alpha", "beta"}
    assert all(set(r) == {"case", "item", "artifact_digest", "judge", "excerpt", "label"} and r["label"] == ""
               for r in rows)
    assert {r["judge"].split("/")[0] for r in rows} == {DEFAULT_MODEL}  # whose draw: its verdicts pair with the labels
    assert rows[0]["excerpt"].startswith("artifact ") and "PASS" not in out.read_text()
    sheet = project / "to-label.csv"
    assert scarbook(project, "calibrate", "--export", str(sheet), "--sample", "4").exit_code == 0
    with sheet.open() as fh:
        assert fh.readline().startswith("# scarbook: a cell that starts with = + - @ tab or CR")  # issue 33.17
        assert [r["label"] for r in csv.DictReader(fh)] == [""] * 4


def test_import_round_trip_csv_stores_labels_and_reports(project):
    sheet = project / "s.csv"
    scarbook(project, "calibrate", "--export", str(sheet), "--sample", "8")
    with sheet.open() as fh:
        fh.readline()  # the note on formula cells (a sheet saved without it reads the same)
        rows = list(csv.DictReader(fh))
    rows[0]["label"] = ""  # not labelled yet
    for row in rows[1:]:
        row["label"] = "pass"  # any case
    with sheet.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    res = scarbook(project, "calibrate", "--import", str(sheet))
    assert res.exit_code == 0, res.output
    assert f"imported 7 labels from {sheet}; 1 row without a label left for later" in res.output
    assert "corrected rates: not used, the raw rates stand — one class only: all 7 labels say PASS" in res.output
    assert sorted(lab.human_verdict for lab in stored(project)) == ["PASS"] * 7


def test_export_over_a_sheet_whose_labels_are_not_imported_yet_is_refused(project):
    """Exporting again to the sheet a person is filling replaced it with empty labels: their work was lost without a
    word. Its labels imported, the same name is free to be written again."""
    sheet = project / "l.jsonl"
    scarbook(project, "calibrate", "--export", str(sheet), "--sample", "4")
    rows = [{**row, "label": "PASS"} for row in read_jsonl(sheet)[:3]] + read_jsonl(sheet)[3:]
    write_jsonl(sheet, rows)
    before = sheet.read_bytes()
    res = scarbook(project, "calibrate", "--export", str(sheet), "--sample", "4")
    assert res.exit_code == 2
    assert res.output == (f"scarbook: {sheet} holds 3 labels not imported yet — `scarbook calibrate --import {sheet}` "
                          "stores them first, or export to another file\n")
    assert sheet.read_bytes() == before and stored(project) == []
    assert scarbook(project, "calibrate", "--import", str(sheet)).exit_code == 0
    res = scarbook(project, "calibrate", "--export", str(sheet), "--sample", "4")
    assert res.exit_code == 0, res.output
    assert [row["label"] for row in read_jsonl(sheet)] == [""] * 4


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_bad_labels_name_the_file_and_line_and_nothing_is_imported(project):
    out = project / "l.jsonl"
    scarbook(project, "calibrate", "--export", str(out), "--sample", "4")
    rows = fill(read_jsonl(out), lambda r: "PASS")
    rows[1]["label"] = "maybe"
    rows.append({**rows[0], "label": "FAIL"})  # line 5 contradicts line 1
    rows.append({**rows[2]})  # line 6 repeats line 3
    write_jsonl(out, rows)
    with out.open("a") as fh:
        fh.write("{not json\n")
    res = scarbook(project, "calibrate", "--import", str(out))
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        f"note: {out} line 6: repeats line 3 (case {rows[2]['case']}, item {ITEM!r}); counted once",
        f"scarbook: {out} line 2: label 'maybe' is not PASS or FAIL — write PASS or FAIL, or leave it empty to skip the item",
        f"{out} line 5: contradicts line 1 — case {rows[0]['case']}, item {ITEM!r} (artifact "
        f"{rows[0]['artifact_digest']}) is labelled PASS there and FAIL here; keep one",
        f"{out} line 7: not JSON (Expecting property name enclosed in double quotes) — each line is one object "
        "with the fields case, item, artifact_digest, judge, excerpt, label",
        f"nothing imported from {out}: fix these lines and import it again",
    ]
    assert stored(project) == []


def test_unknown_items_are_named_and_skipped_the_rest_imported(project):
    out = project / "l.jsonl"
    scarbook(project, "calibrate", "--export", str(out), "--sample", "3")
    rows = fill(read_jsonl(out), lambda r: "FAIL")
    rows[0]["item"] = "an item the rubric no longer has"
    write_jsonl(out, rows)
    res = scarbook(project, "calibrate", "--import", str(out))
    assert res.exit_code == 0, res.output
    assert (f"note: {out} line 1: case {rows[0]['case']}, item 'an item the rubric no longer has' (artifact "
            f"{rows[0]['artifact_digest']}) is not among the judged items in history — the rubric or the artifact "
            "changed since the export; skipped") in res.stderr
    assert f"imported 2 labels from {out}; 1 unknown item skipped" in res.output
    assert len(stored(project)) == 2


@pytest.mark.parametrize(("name", "content", "message"), [
    ("l.txt", "", "{path}: unknown label file type '.txt' — name it .jsonl or .csv"),
    ("l.csv", "case,item\nalpha,x\n", "{path} line 1: the header lacks artifact_digest, label — keep the header row "
                                      "`scarbook calibrate --export` wrote (case,item,artifact_digest,judge,excerpt,label)"),
    ("l.jsonl", '[1, 2]\n', "{path} line 1: not a JSON object — each line is one object with the fields case, item, "
                            "artifact_digest, judge, excerpt, label"),
    ("l.jsonl", '{"case": "alpha", "item": "x", "label": "PASS"}\n',
     "{path} line 1: no 'artifact_digest' text — every row needs case, item, artifact_digest and label, as exported"),
])
def test_malformed_label_files(project, name, content, message):
    path = project / name
    path.write_text(content)
    res = scarbook(project, "calibrate", "--import", str(path))
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == "scarbook: " + message.format(path=path)


@pytest.mark.parametrize(("name", "make", "message"), [
    ("l.jsonl", lambda p: p.write_bytes(b'{"case": "caf\xe9"}\n'), "{path}: not UTF-8 text — save it as UTF-8"),
    ("l.csv", lambda p: p.write_bytes(b"case,item\ncaf\xe9,x\n"), "{path}: not UTF-8 text — save the sheet as UTF-8 CSV"),
    ("l.jsonl", lambda p: None, "{path}: cannot read the labels file: No such file or directory — give the file "
                               "`scarbook calibrate --export` wrote, with its label column filled"),
    pytest.param("l.csv", os.mkfifo, "{path}: cannot read the labels file: {path} is a FIFO, not a regular file — give "
                                     "the file `scarbook calibrate --export` wrote, with its label column filled",
                 marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here"), id="fifo"),
])
def test_a_label_file_that_cannot_be_read_is_named_with_the_fix(project, name, make, message):
    """A named pipe is refused at once (it was waited on for a writer, forever)."""
    path = project / name
    make(path)
    res = scarbook(project, "calibrate", "--import", str(path))
    assert res.exit_code == 2
    assert res.stderr == "scarbook: " + message.format(path=path) + "\n"
    assert stored(project) == []


def label_truly(project: Path, sample: int, truth) -> None:
    out = project / "all.jsonl"
    scarbook(project, "calibrate", "--export", str(out), "--sample", str(sample))
    write_jsonl(out, fill(read_jsonl(out), truth))
    assert scarbook(project, "calibrate", "--import", str(out)).exit_code == 0


def test_report_prints_the_weighted_error_rates_and_json(project):
    rng = random.Random(3)
    # the person agrees with the judge on PASSes 90% of the time and on FAILs 80%
    store_path = project / "workspaces" / "history" / "calibration.json"
    label_truly(project, 80, lambda r: "PASS")  # first pass: we rewrite verdicts below
    data = json.loads(store_path.read_text())
    judged = {(v["case_id"], v["item"], v["artifact_digest"]): v["judge_verdict"] for v in data["verdicts"].values()}
    for doc in data["truths"].values():
        doc["judge_verdict"] = judged[(doc["case_id"], doc["item"], doc["artifact_digest"])]
        agree = rng.random() < (0.9 if doc["judge_verdict"] == "PASS" else 0.8)
        doc["human_verdict"] = doc["judge_verdict"] if agree else ("FAIL" if doc["judge_verdict"] == "PASS" else "PASS")
        del doc["judge_verdict"]
    store_path.write_text(json.dumps(data))
    res = scarbook(project, "calibrate", "--report")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith(f"judge {DEFAULT_MODEL} (prompt {prompt_digest()[:8]}): 80 labels, last ")
    assert lines[1] == "corrected rates: on"
    assert lines[3].split() == ["labels", "sensitivity", "q1", "specificity", "q0", "agreement", "kappa"]
    assert lines[4].startswith("pooled (weighted)") and lines[5].startswith("alpha") and lines[6].startswith("beta")
    doc = json.loads(scarbook(project, "calibrate", "--report", "--json").output)
    assert doc["usable"] is True and doc["labels"] == 80 and doc["reason"] is None
    pooled = doc["error"]["pooled"]
    for key in ("q0", "q1", "agreement", "kappa"):
        lo, hi = pooled[key]["ci"]
        assert lo <= pooled[key]["value"] <= hi
    assert set(doc["error"]["per_case"]) == {"alpha", "beta"}


def test_report_says_why_the_raw_rates_stand(project, tmp_path):
    res = scarbook(project, "calibrate", "--report")
    assert res.output.splitlines()[1] == ("corrected rates: not used, the raw rates stand — not calibrated: no human "
                                          "labels yet — label judged items with `scarbook calibrate` (or `scarbook "
                                          "calibrate --export FILE`, then `--import FILE`)")
    label_truly(project, 12, lambda r: "PASS" if "alpha" in r["case"] else "FAIL")
    res = scarbook(project, "calibrate", "--report")
    assert res.output.splitlines()[1] == (
        "corrected rates: not used, the raw rates stand — too few labels: 12 (6 PASS, 6 FAIL); correcting needs 30 "
        "with 10 of each class (judge.calibration_min_labels, judge.calibration_min_per_class) — label more with "
        "`scarbook calibrate`")
    (project / "scarbook.yaml").write_text("judge:\n  samples: 3\n")  # same model and prompt, another sampling
    res = scarbook(project, "calibrate", "--report")
    assert res.output.splitlines()[1] == (
        f"corrected rates: not used, the raw rates stand — stale: the labels were made on judge {DEFAULT_MODEL}, "
        f"samples=1, the judge is now {DEFAULT_MODEL}, samples=3 — label items it graded with `scarbook calibrate`")
    (project / "scarbook.yaml").write_text("judge:\n  model: claude-other\n")
    res = scarbook(project, "calibrate", "--report")
    assert res.output.splitlines()[1] == (
        f"corrected rates: not used, the raw rates stand — stale: the labels were made on judge {DEFAULT_MODEL} "
        f"(prompt {prompt_digest()[:8]}), the judge is now claude-other (prompt {prompt_digest()[:8]}) — label items "
        "it graded with `scarbook calibrate`")


TOO_FEW = ("corrected rates: not used, the raw rates stand — too few labels: 12 (6 PASS, 6 FAIL); correcting needs 30 "
           "with 10 of each class (judge.calibration_min_labels, judge.calibration_min_per_class) — label more with "
           "`scarbook calibrate`")


def stale(then: str, now: str) -> str:
    return (f"corrected rates: not used, the raw rates stand — stale: the labels were made on judge {DEFAULT_MODEL}, "
            f"{then}, the judge is now {DEFAULT_MODEL}, {now} — label items it graded with `scarbook calibrate`")


def test_labels_made_at_one_endpoint_or_max_tokens_count_for_that_judge_only(tmp_path):
    """A calibration measured against one vendor's endpoint was applied to another's: the labels' judge was told
    apart by model, prompt, samples and temperature only (here: 'too few labels' at the second endpoint too)."""
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10, "beta": "p" * 20 + "f" * 20},
                        base_url="http://127.0.0.1:8001")
    (root / "scarbook.yaml").write_text("judge:\n  base_url: http://127.0.0.1:8001/\n")  # (recorded without the /)
    label_truly(root, 12, lambda r: "PASS" if "alpha" in r["case"] else "FAIL")
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == TOO_FEW
    (root / "scarbook.yaml").write_text("judge:\n  base_url: http://127.0.0.1:8002\n")
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == stale(
        "base_url=http://127.0.0.1:8001", "base_url=http://127.0.0.1:8002")
    (root / "scarbook.yaml").write_text("judge:\n  base_url: http://127.0.0.1:8001\n  max_tokens: 2048\n")
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == stale("max_tokens=1024", "max_tokens=2048")


def test_labels_older_than_base_url_count_for_the_default_endpoint_only(tmp_path, monkeypatch):
    """Labels made before a judge record held base_url and max_tokens: which endpoint graded them is unknown, so they
    count as the default endpoint's (https://api.anthropic.com), never another vendor's; an unrecorded max_tokens,
    like samples and temperature, is not held against them."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10, "beta": "p" * 20 + "f" * 20},
                        base_url=None, max_tokens=None)
    label_truly(root, 12, lambda r: "PASS" if "alpha" in r["case"] else "FAIL")
    assert all(lab.judge_sampling == "samples=1 temperature=0.0" for lab in stored(root))
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == TOO_FEW
    (root / "scarbook.yaml").write_text("judge:\n  max_tokens: 2048\n")
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == TOO_FEW
    (root / "scarbook.yaml").write_text("judge:\n  base_url: http://127.0.0.1:8001\n")
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == stale(
        "base_url not recorded (counted as https://api.anthropic.com)", "base_url=http://127.0.0.1:8001")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8001")  # where the SDK sends a judge without base_url
    (root / "scarbook.yaml").write_text("")
    assert scarbook(root, "calibrate", "--report").output.splitlines()[1] == stale(
        "base_url not recorded (counted as https://api.anthropic.com)", "base_url=http://127.0.0.1:8001")


def test_one_option_at_a_time(project):
    res = scarbook(project, "calibrate", "--report", "--export", "x.csv")
    assert res.exit_code == 2 and res.stderr == "scarbook: --report and --export do different things — give one of them\n"


def test_after_some_labels_the_next_ones_go_where_they_help_and_the_report_says_how_many(tmp_path):
    root = make_project(tmp_path, {"alpha": "p" * 60 + "f" * 20, "beta": "p" * 70 + "f" * 10})
    rng = random.Random(1)
    label_truly(root, 24, lambda r: "FAIL" if rng.random() < 0.3 else "PASS")
    out = root / "next.jsonl"
    res = scarbook(root, "calibrate", "--export", str(out), "--sample", "10")
    assert res.output.splitlines()[0] == ("picked where labels shrink the corrected intervals most (cases near their "
                                          "threshold first; at random within each case's judge-PASS and judge-FAIL items)")
    assert len(read_jsonl(out)) == 10
    report = scarbook(root, "calibrate", "--report").output
    advice = report.split("where labels help most:\n")[1].splitlines()
    # per judged case what limits its estimate, then how many labels would decide it, or that runs must come first
    assert advice and all(line.startswith(("  limits the estimate: ", "  about ", "  case ")) for line in advice)
    for case in ("alpha", "beta"):
        assert any(f"case {case}" in line and ("more label" in line or "more runs first" in line) for line in advice)
    doc = json.loads(scarbook(root, "calibrate", "--report", "--json").output)
    assert doc["advice"] == [line.strip() for line in advice]


def test_labels_for_rubric_items_a_case_no_longer_has_are_named_and_left_out(project):
    label_truly(project, 80, lambda r: "PASS" if r["case"] == "beta" or r["excerpt"].endswith("1") else "FAIL")
    for case, item in (("alpha", "the summary names the new function"), ("beta", ITEM)):  # alpha's rubric was edited
        (project / "cases" / case).mkdir(parents=True)
        (project / "cases" / case / "case.yaml").write_text(
            f"id: {case}\ntask: summarize\nchecks:\n  - type: llm_judge\n    rubric: [{item}]\n")
    res = scarbook(project, "calibrate", "--report")
    assert res.output.splitlines()[2] == (
        f"note: calibration.json: 40 labels of case alpha are for rubric items it no longer has ({ITEM!r}): left out "
        "— label its current items with `scarbook calibrate`")
    doc = json.loads(scarbook(project, "calibrate", "--report", "--json").output)
    assert doc["labels"] == 40 and set(doc["error"]["per_case"]) == {"beta"}


def test_the_recorded_calibration_is_the_weighted_one(project):
    """The library's 'judge: calibrated …, N% agreement' line reads the recorded calibration: it is the
    agreement weighted back from the stratified sample, not the sample's own (issue 23)."""
    label_truly(project, 40, lambda r: "PASS" if r["case"] == "alpha" else "FAIL")
    store = CalibrationStore(project / "workspaces" / "history" / "calibration.json")
    try:
        recorded = store.last_calibration()
        naive = sum(lab.human_verdict == lab.judge_verdict for lab in store.labels()) / 40
    finally:
        store.close()
    weighted = json.loads(scarbook(project, "calibrate", "--report", "--json").output)["error"]["pooled"]["agreement"]
    assert recorded["agreement"] == pytest.approx(weighted["value"], abs=1e-4) and recorded["n"] == 40
    assert abs(recorded["agreement"] - naive) > 0.05


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_sheet_saved_with_semicolons_or_tabs_is_read(project, sep):
    """A spreadsheet in a locale whose decimal mark is a comma (German, French Excel) saves CSV with ';': its header
    was said to lack case, item, artifact_digest and label — which it holds — and nothing was imported."""
    sheet = project / "s.csv"
    scarbook(project, "calibrate", "--export", str(sheet), "--sample", "4")
    with sheet.open() as fh:
        note = fh.readline()
        rows = list(csv.DictReader(fh))
    with sheet.open("w", newline="") as fh:
        fh.write(note)
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=sep, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows({**row, "label": "FAIL"} for row in rows)
    res = scarbook(project, "calibrate", "--import", str(sheet))
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"imported 4 labels from {sheet}\n")
    assert [lab.human_verdict for lab in stored(project)] == ["FAIL"] * 4


def test_grading_stopped_by_the_end_of_input_keeps_and_reports_the_labels_given(project):
    """Ctrl-C or the end of the input in `scarbook calibrate` printed 'Aborted!' (exit 1): the labels given were
    stored, but the user was told nothing of them and the calibration was not recorded. It stops as q does."""
    res = CliRunner().invoke(main, ["-C", str(project), "calibrate", "--sample", "5"], input="p\nf\n")
    assert res.exit_code == 0, res.output
    assert "\nstopped at item 3 of 5: 2 labels kept\n" in res.output
    assert "judge claude-sonnet-4-6" in res.output and "2 labels" in res.output
    assert len(stored(project)) == 2
    store = CalibrationStore(project / "workspaces" / "history" / "calibration.json")
    try:
        assert store.last_calibration()["n"] == 2
    finally:
        store.close()
