"""The label planner (issue 39.6): batches of `calibrate --export` fill every stratum the estimate
needs — the judge's FAILs first while the calibration lacks FAIL labels — instead of sending every
label to the judge's PASSes while the FAILs stay unlabelled; `calibrate --report` says which
stratum limits the estimate."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from scarbook.judge.label_store import CalibrationStore
from tests.judge.test_label_files import make_project, read_jsonl, scarbook

PASSED, FAILED = 184, 24  # the judge passed 184 of the case's 208 items (88%)


def verdict_of(row: dict) -> str:
    """The judge's verdict on an exported row (never written there): run k's artifact says its k."""
    k = int(row["excerpt"].rsplit(" ", 1)[1])
    return "PASS" if k <= PASSED else "FAIL"


def truth(row: dict, rng: random.Random) -> str:
    """The person: the judge's PASSes are right 96% of the time, its FAILs two times in three."""
    if verdict_of(row) == "PASS":
        return "PASS" if rng.random() < 0.96 else "FAIL"
    return "FAIL" if rng.random() < 2 / 3 else "PASS"


def labelled_fails(root: Path) -> int:
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        return sum(1 for lab in store.labels() if lab.judge_verdict == "FAIL")
    finally:
        store.close()


@pytest.fixture
def project(tmp_path) -> Path:
    return make_project(tmp_path, {"alpha": "p" * PASSED + "f" * FAILED})


def test_batches_label_the_judges_fails_until_the_calibration_has_enough(project):
    rng = random.Random(6)
    usable_at = None
    fails_after = []
    for batch in range(1, 6):
        out = project / f"batch{batch}.jsonl"
        assert scarbook(project, "calibrate", "--export", str(out), "--sample", "20").exit_code == 0
        rows = read_jsonl(out)
        out.write_text("".join(json.dumps({**r, "label": truth(r, rng)}) + "\n" for r in rows))
        assert scarbook(project, "calibrate", "--import", str(out)).exit_code == 0
        report = scarbook(project, "calibrate", "--report").output
        if usable_at is None and "corrected rates: on" in report:
            usable_at = batch
        fails_after.append(labelled_fails(project))
    # the first batch alternates (no label yet); then, short of FAIL labels, the judge's FAILs go first
    assert fails_after[1] == FAILED, fails_after
    assert fails_after[-1] == FAILED  # none of the judge's FAILs left unlabelled
    assert usable_at is not None and usable_at <= 3, (usable_at, fails_after)


def test_the_report_says_which_stratum_limits_the_estimate(project):
    rng = random.Random(2)
    out = project / "b.jsonl"
    scarbook(project, "calibrate", "--export", str(out), "--sample", "40")
    out.write_text("".join(json.dumps({**r, "label": truth(r, rng)}) + "\n" for r in read_jsonl(out)))
    scarbook(project, "calibrate", "--import", str(out))
    report = scarbook(project, "calibrate", "--report").output
    line = next(x.strip() for x in report.splitlines() if x.strip().startswith("limits the estimate:"))
    assert "alpha" in line and ("judge-PASS items" in line or "judge-FAIL items" in line)
    assert "labelled of" in line
