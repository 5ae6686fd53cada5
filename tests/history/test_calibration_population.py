"""The judge's PASS share W describes the items the labels were drawn from (issue 39.8): a session run
after the last label — the one an eval then reports — does not move the eval's q0, q1 away from what
`calibrate --report` says."""

from __future__ import annotations

import json
import random

from scarbook.history.store import History, now_iso
from scarbook.models import SessionInfo
from tests.judge.test_label_files import judged_run, make_project, scarbook


def _q(root) -> tuple[float, float]:
    pooled = json.loads(scarbook(root, "calibrate", "--report", "--json").output)["error"]["pooled"]
    return pooled["q0"]["value"], pooled["q1"]["value"]


def test_a_session_after_the_labels_leaves_q0_q1_as_calibrate_report_said(tmp_path):
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 30})
    rng = random.Random(4)
    out = root / "labels.jsonl"
    scarbook(root, "calibrate", "--export", str(out), "--sample", "60")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    out.write_text("".join(json.dumps({**r, "label": "PASS" if rng.random() < 0.5 else "FAIL"}) + "\n" for r in rows))
    assert scarbook(root, "calibrate", "--import", str(out)).exit_code == 0
    before = _q(root)
    # then an eval: 40 more runs the judge passed every one of, in a session that started after the labels
    history = History(root / "workspaces")
    info = SessionInfo(id="20991231-000002-000a", started_at="2099-12-31T09:00:00+00:00", case_ids=["alpha"],
                       runs_per_case=40, judge_model=json.loads((root / "workspaces" / "history" / "calibration.json")
                                                                .read_text())["verdicts"]["1"]["judge_model"])
    history.start_session(info)
    for k in range(1, 41):
        history.record_run(judged_run(info.id, "alpha", k, "PASS"))
    info.state = "finished"
    history.finish_session(info)
    assert now_iso() < info.started_at
    assert _q(root) == before
    report = json.loads(scarbook(root, "report", "--json", str(root / "r.json")).output and
                        (root / "r.json").read_text())
    assert report["judge_calibration"]["error"]["pooled"]["q1"]["value"] == before[1]
