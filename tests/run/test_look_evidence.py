"""`undecided: more`'s looks (run/runner._more_extender) test each calibrated case, at every look done, on
its corrected evidence (run/gate.corrected_evidence) — and read nothing else of it: they compute no corrected
rate or interval (stats/corrected.gate_evidence). Before, each look ran the whole stats/corrected.correct
for every case at every earlier look, the interval's search over the calibration's box included: 20 cases
at their second look cost 40 interval searches a step, 18 ms of the event loop's CPU; now none, 2 ms.
The looks stop the same cases at the same counts with the same decisions as with the whole correct."""

from __future__ import annotations

import random

import pytest

from scarbook.run import gate, runner
from scarbook.stats import corrected_gate
from tests.helpers.paths import load_benchmark


@pytest.fixture
def session():
    """20 calibrated cases of mixed_sim's (thresholds 80/70/90% in turn) at true rates 10%, 99%, their line
    and 40% in turn, their 80 runs drawn with a near-right judge whose error is measured from 200 labels a
    case: the looks stop five of them below, at 20 or 40 runs."""
    sim = load_benchmark("mixed_sim")
    base = sim.session_shape(1.0, drop=False, cases=20)
    rates = {cid: (0.1, 0.99, t, 0.4)[i % 4] for i, (cid, t) in enumerate(base.thresholds.items())}
    shape = sim.Shape(base.thresholds, rates, base.calibrated)
    runs, calibration = sim.draw_session(random.Random(3), shape, (0.99, 0.99))
    assert calibration is not None and calibration.usable_error is not None
    return sim, shape, runs, calibration.usable_error


def test_the_looks_compute_no_interval(session, monkeypatch) -> None:
    sim, shape, runs, error = session
    intervals: list[tuple] = []
    plain = corrected_gate.decision_interval
    monkeypatch.setattr(corrected_gate, "decision_interval", lambda *a: intervals.append(a) or plain(*a))
    have, said = sim.run_looks(shape, runs, error)
    assert sorted(have.values()) == [20] + [40] * 4 + [80] * 15 and set(said.values()) == {"below"}
    assert intervals == []


def test_the_looks_decide_as_they_did_on_the_whole_correction(session, monkeypatch) -> None:
    sim, shape, runs, error = session
    now = sim.run_looks(shape, runs, error)

    def whole(case_id, ran, error):  # the evidence as the looks took it before: correct()'s, interval and all
        found = gate._corrected(case_id, list(ran), error)
        return found.evidence if found is not None else None

    monkeypatch.setattr(runner, "corrected_evidence", whole)
    assert sim.run_looks(shape, runs, error) == now
