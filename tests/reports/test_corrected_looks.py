"""The judge-corrected gate under `undecided: more` (issue 39.1, 39.2): a case the judge's error is
corrected for is decided on its true rate at every look, never on the judge's raw verdicts.

Before, each look but the last decided on the raw judge-PASS counts and kept what it decided: with a
judge that misses true passes (q1 .8), a case whose true rate is exactly its 80% threshold went red in
about 45% of sessions (stopped at the first look by the raw test), and the report printed BELOW beside
a corrected interval that held the threshold, at 90% where the last look decides at alpha / 2."""

from __future__ import annotations

import json
import random
from pathlib import Path

from scarbook.config import GatePolicy
from scarbook.history.store import History
from scarbook.judge.calibrate import judged_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.models import SessionInfo
from scarbook.models.session_parts import GateRecord
from scarbook.stats.corrected import correct
from scarbook.stats.decisions import gate_stats, make_extender, more_looks
from scarbook.stats.rates import summarize_counts
from tests.judge.test_label_files import DEFAULT_MODEL, judged_run, scarbook
from tests.stats.test_corrected_gate import calibrated

MORE = GatePolicy.from_record({**GatePolicy().to_dict(), "undecided": "more"})


def test_false_red_at_most_alpha_when_the_true_rate_is_the_threshold() -> None:
    """The runner's own extender (stops a case a look decided) and the report's gate_stats: 400
    sessions of one case at its threshold 80%, judge q0 .95 q1 .8 calibrated on 200 labels, looks at
    20, 40 and 80 runs. A fixed seed: the same sessions every time."""
    t, q0, q1 = 0.8, 0.95, 0.8
    model = calibrated(t, q0, q1, 200)
    looks = more_looks(20, 80)
    judge_pass = t * q1 + (1 - t) * (1 - q0)
    rng = random.Random(391)
    red, sessions = 0, 400
    for _ in range(sessions):
        verdicts = ["pass" if rng.random() < judge_pass else "fail" for _ in range(looks[-1])]
        extend, have = make_extender({"c": t}, MORE, looks), looks[0]
        while more := extend({"c": verdicts[:have]}):
            have = more["c"]
        ran = verdicts[:have]
        s = summarize_counts("c", ran.count("pass"), ran.count("fail"), 0, t)
        s.corrected = correct(s.passes, s.fails, 0, model, threshold=t, alpha=MORE.alpha / len(looks))
        (gated,) = gate_stats([s], MORE, {"c": ran}, looks=looks)
        red += gated.decision == "below"
    assert red / sessions <= MORE.alpha, red / sessions


def _labelled(root: Path, seed: int = 7) -> None:
    """A person labels every judged item: the judge's PASSes are right, and half its FAILs on case c
    were passes (its FAILs on case e are right)."""
    rng = random.Random(seed)
    history = History(root / "workspaces")
    store = CalibrationStore(root / "workspaces" / "history" / "calibration.json")
    try:
        for item in judged_items(history.iter_all_runs()):
            truth = "PASS" if item.judge_verdict == "PASS" or (item.case_id == "c" and rng.random() < 0.5) else "FAIL"
            store.save_label(item, truth, labeled_at="2026-12-02")
    finally:
        store.close()


def test_a_case_stopped_by_a_raw_look_is_decided_on_its_corrected_rate(tmp_path) -> None:
    """An `undecided: more` session (looks 20, 40): case c's judge passed 10 of its 20 runs, which the
    raw test calls below 80% at the first look (P(X <= 10 | 20, .8) = .003 < .025), so it got no more
    runs. Half the judge's FAILs were passes: its corrected rate's interval holds 80%, and the report
    says undecided with that interval at the last look's level (1 - 2 alpha / 2 = 95%)."""
    (tmp_path / "scarbook.yaml").write_text("threshold: 0.8\n")
    history = History(tmp_path / "workspaces")
    gate = GateRecord.read({**MORE.to_dict(), "looks": [20, 40]})
    info = SessionInfo(id="20261201-000001-000a", started_at="2026-12-01T09:00:00+00:00", case_ids=["c", "d", "e"],
                       runs_per_case=40, judge_model=DEFAULT_MODEL, gate=gate)
    history.start_session(info)
    # d: a case the first look left undecided; e: one whose judge FAILs are all right (FAIL labels)
    marks = {"c": "pf" * 10, "d": "p" * 36 + "f" * 4, "e": "p" * 4 + "f" * 16}
    for case, verdicts in marks.items():
        for k, mark in enumerate(verdicts, 1):
            history.record_run(judged_run(info.id, case, k, "PASS" if mark == "p" else "FAIL"))
    info.state = "finished"
    history.finish_session(info)
    _labelled(tmp_path)
    out = tmp_path / "r.json"
    result = scarbook(tmp_path, "report", "--json", str(out))
    assert result.exit_code == 0, result.output
    case = next(c for c in json.loads(out.read_text())["cases"] if c["case_id"] == "c")
    lo, hi = case["corrected"]["ci"]
    assert lo < 0.8 < hi, case["corrected"]
    assert case["decision"] == "undecided", case
    assert case["corrected"]["ci_level"] == 0.95
