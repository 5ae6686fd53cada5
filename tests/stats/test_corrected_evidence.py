"""stats/corrected.gate_evidence is `correct(...).evidence` without the rate and its interval, for the
runner's looks (which read only decisions): the same evidence, or None where correct's is None, on every
count of a grid with judges near right, missing passes and no better than chance, graded on one rubric
item or three, with rule fails or without — and it computes no interval."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scarbook.stats import corrected_gate
from scarbook.stats.corrected import correct, gate_evidence
from scarbook.stats.judge_error import ErrorModel, Stratum, estimate_error


def _model(pass_labels: tuple[int, int], fail_labels: tuple[int, int], judge_passes: int = 700) -> ErrorModel:
    """The judge's error from 100 labels on each of its verdicts: the person's (PASS, FAIL) among them."""
    return estimate_error([Stratum("c", "PASS", judge_passes, *pass_labels),
                           Stratum("c", "FAIL", 1000 - judge_passes, *fail_labels)]).for_case("c")


MODELS = {
    "near right": _model((98, 2), (3, 97)),
    "misses passes": _model((95, 5), (40, 60)),
    "no better than chance": _model((50, 50), (50, 50), judge_passes=500),
}
MODELS["without its counts"] = replace(MODELS["near right"], counts=None)  # built by hand: no gate


@pytest.mark.parametrize("judge", list(MODELS))
@pytest.mark.parametrize("items", [1, 3])
def test_the_evidence_is_corrects(judge: str, items: int) -> None:
    model = MODELS[judge]
    grid = [(passes, judge_fails, rule_fails) for passes in range(0, 13, 3) for judge_fails in range(0, 13, 4)
            for rule_fails in (0, 5)]
    for passes, judge_fails, rule_fails in grid:
        full = correct(passes, judge_fails, rule_fails, model, items=items)
        want = full.evidence if full is not None else None
        assert gate_evidence(passes, judge_fails, rule_fails, model, items=items) == want, (passes, judge_fails)
    if judge in ("no better than chance", "without its counts"):
        assert gate_evidence(10, 5, 0, model, items=items) is None
    else:
        assert gate_evidence(10, 5, 0, model, items=items) is not None


def test_it_computes_no_interval(monkeypatch) -> None:
    intervals: list[tuple] = []
    plain = corrected_gate.decision_interval
    monkeypatch.setattr(corrected_gate, "decision_interval", lambda *a: intervals.append(a) or plain(*a))
    model = MODELS["near right"]
    assert correct(30, 10, 2, model) is not None and len(intervals) == 1  # the count sees correct's
    assert gate_evidence(30, 10, 2, model) == correct(30, 10, 2, model).evidence
    assert len(intervals) == 2  # the second correct's, none of gate_evidence's
