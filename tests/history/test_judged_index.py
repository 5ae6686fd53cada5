"""Issue 38.4: the judge's calibration comes from an index, not a scan of every run. With labels made on
the judge in use, each calibration (every report, eval's end, the library) read every runs file of
every session; each ended session's judged items are now kept beside it (.judged.json) and read from
there while its files are unchanged."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scarbook.history.judge_truth import calibration_for
from scarbook.history.judged_index import INDEX_NAME
from scarbook.history.store import History
from scarbook.judge.calibrate import judged_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.project import Project
from tests.judge.test_label_files import make_project


def _label_all(root: Path) -> None:
    rng = random.Random(3)
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        for item in judged_items(Project.discover(root).history.iter_all_runs()):
            truth = item.judge_verdict if item.judge_verdict == "FAIL" or rng.random() < 0.7 else "FAIL"
            store.save_label(item, truth, labeled_at="2026-12-02")
    finally:
        store.close()


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    seen: list[str] = []
    runs = History.runs

    def spy(self, session_id, *a, **kw):
        seen.append(session_id)
        return runs(self, session_id, *a, **kw)

    monkeypatch.setattr(History, "runs", spy)
    return seen


def _calibration(root: Path):
    p = Project.discover(root)
    return calibration_for(p.history, p.workspaces_dir, p.config.judge)


def test_a_calibration_reads_each_ended_sessions_index_not_its_runs(tmp_path, reads) -> None:
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10, "beta": "p" * 20 + "f" * 20})
    _label_all(root)
    reads.clear()
    first = _calibration(root)
    assert first.error is not None and first.labels == 80
    sid = "20261201-000001-000a"
    assert reads == [sid] and (root / "workspaces" / "history" / sid / INDEX_NAME).exists()
    reads.clear()
    again = _calibration(root)
    assert reads == [], "the runs were read again"
    assert again.to_dict() == first.to_dict()


def test_a_session_whose_runs_file_changed_is_read_again(tmp_path, reads) -> None:
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10})
    _label_all(root)
    before = _calibration(root)
    history = History(root / "workspaces")
    sid = "20261201-000001-000a"
    with open(history.dir / sid / "runs-alpha.jsonl", "a") as fh:  # an edit by hand: the index no longer holds
        fh.write("\n")
    reads.clear()
    after = _calibration(root)
    assert reads == [sid]
    assert after.to_dict() == before.to_dict()


def test_a_damaged_index_is_read_around(tmp_path, reads) -> None:
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10})
    _label_all(root)
    before = _calibration(root)
    sid = "20261201-000001-000a"
    (root / "workspaces" / "history" / sid / INDEX_NAME).write_text('{"format": 1, "items": [[1, 2]]}')
    reads.clear()
    assert _calibration(root).to_dict() == before.to_dict()
    assert reads == [sid]

