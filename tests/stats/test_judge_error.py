"""The judge's measured error (issue 23): q0/q1, kappa and agreement from a stratified sample,
weighted back to the population; the Rogan–Gladen corrected rate and its interval."""

from __future__ import annotations

import math

import pytest

from scarbook.judge.calibrate import CalibrationLabel, agreement
from scarbook.stats.corrected import correct, theta
from scarbook.stats.judge_error import JudgeError, Stratum, estimate_error, run_level
from scarbook.stats.rates import Z95
from tests.helpers.paths import load_benchmark


def issue_example(labels_per_stratum: int = 5000) -> list[Stratum]:
    """90% true passes; the judge passes 98% of passes and fails 50% of fails. Of 100,000 judged
    items it passed 93,200 (88,200 true + 5,000 false) and failed 6,800 (1,800 + 5,000). The sample
    is half judge-PASS, half judge-FAIL, with the person's PASS shares 88.2/93.2 and 1.8/6.8."""
    n = labels_per_stratum
    pp = round(n * 882 / 932)
    fp = round(n * 18 / 68)
    return [Stratum("c", "PASS", 93_200, pp, n - pp), Stratum("c", "FAIL", 6_800, fp, n - fp)]


def test_the_stratified_sample_is_weighted_back_the_issue_example():
    """Scored as if it were a random sample the labels read kappa .68 / agreement .84; weighted by
    the strata they read the truth, kappa .56 / agreement .93, q1 .98, q0 .50."""
    strata = issue_example()
    labels = []
    for s in strata:
        labels += [CalibrationLabel("c", "i", str(len(labels) + k), "PASS", s.judge) for k in range(s.human_pass)]
        labels += [CalibrationLabel("c", "i", str(len(labels) + k), "FAIL", s.judge) for k in range(s.human_fail)]
    naive_agree, naive_kappa, _ = agreement(labels).overall
    assert (round(naive_agree, 2), round(naive_kappa, 2)) == (0.84, 0.68)
    model = estimate_error(strata).pooled
    assert round(model.agreement.value, 2) == 0.93
    assert round(model.kappa.value, 2) == 0.56
    assert round(model.q1.value, 2) == 0.98
    assert round(model.q0.value, 2) == 0.50
    for measure in (model.q0, model.q1, model.agreement, model.kappa):
        assert measure.lo < measure.value < measure.hi


def test_intervals_narrow_with_more_labels_and_cover_the_truth():
    small, large = estimate_error(issue_example(20)).pooled, estimate_error(issue_example(500)).pooled
    assert small.q0.lo < 0.5 < small.q0.hi and large.q0.lo < 0.5 < large.q0.hi
    assert (small.q0.hi - small.q0.lo) > 3 * (large.q0.hi - large.q0.lo)
    assert small.labels == 40 and large.labels == 1000


def test_pooled_over_cases_weights_each_case_by_its_judged_items():
    """Two cases with equal labels but one has 9x the judged items: the pool leans to it."""
    strata = [Stratum("big", "PASS", 900, 10, 0), Stratum("big", "FAIL", 900, 0, 10),  # a perfect judge
              Stratum("small", "PASS", 100, 5, 5), Stratum("small", "FAIL", 100, 5, 5)]  # a coin
    err = estimate_error(strata)
    assert err.pooled.agreement.value == pytest.approx(0.9 * 1.0 + 0.1 * 0.5)
    assert err.per_case["big"].agreement.value > err.pooled.agreement.value > err.per_case["small"].agreement.value


def test_per_case_rates_shrink_toward_the_pool():
    strata = [Stratum(c, v, 100, 20 if v == "PASS" else 2, 2 if v == "PASS" else 20) for c in "abc" for v in ("PASS", "FAIL")]
    strata += [Stratum("d", "PASS", 100, 1, 0), Stratum("d", "FAIL", 100, 1, 0)]  # two labels, a judge blind to FAILs
    err = estimate_error(strata)
    d = err.for_case("d")
    # alone, two labels would say q0 is not measurable (no FAILs); shrunk, it sits near the pool
    assert d.labels == 2 and d.q0.value == pytest.approx(err.pooled.q0.value, abs=0.15)
    assert err.for_case("unlabelled") is err.pooled


def test_run_level_error_rates_from_item_level():
    assert run_level(0.9, 0.95, 1) == (0.9, 0.95)
    q0, q1 = run_level(0.9, 0.95, 3)
    assert q0 == 0.9 and q1 == pytest.approx(0.95 ** 3)


def test_rogan_gladen_hand_worked_and_clipped():
    # q0 .8, q1 .95: a true 60% reads .6*.95 + .4*.2 = .65
    assert theta(0.65, 0.8, 0.95) == pytest.approx(0.6)
    assert theta(0.1, 0.8, 0.95) == 0.0 and theta(0.99, 0.8, 0.95) == 1.0
    assert math.isnan(theta(0.5, 0.5, 0.5))


def perfect(n: int = 100) -> list[Stratum]:
    return [Stratum("c", "PASS", 1000, n, 0), Stratum("c", "FAIL", 1000, 0, n)]


def test_correct_applies_to_the_judged_part_only():
    model = estimate_error(perfect()).for_case("c")
    fixed = correct(8, 2, 10, model, calibrated_at="2026-12-01")  # 10 runs a rule check failed
    assert fixed.rate == pytest.approx(0.4)  # 8 passes of 20 runs: a perfect judge changes nothing
    assert fixed.lo < 0.4 < fixed.hi and fixed.var_runs > 0
    assert fixed.to_dict()["calibrated_at"] == "2026-12-01" and fixed.labels == 200


def test_correct_is_none_when_the_judge_is_no_better_than_chance():
    coin = [Stratum("c", "PASS", 100, 10, 10), Stratum("c", "FAIL", 100, 10, 10)]
    assert correct(5, 5, 0, estimate_error(coin).for_case("c")) is None
    assert correct(0, 0, 3, estimate_error(perfect()).for_case("c")) is None


def test_judge_limited_when_the_labels_not_the_runs_leave_it_open():
    few = [Stratum("c", "PASS", 1000, 9, 1), Stratum("c", "FAIL", 1000, 2, 8)]
    fixed = correct(400, 100, 0, estimate_error(few).for_case("c"), threshold=0.8)  # many runs, few labels
    assert fixed.lo < 0.8 < fixed.hi and fixed.judge_limited and fixed.var_judge > fixed.var_runs
    assert fixed.labels_to_decide and fixed.labels_to_decide > 0
    many = [Stratum("c", "PASS", 1000, 900, 100), Stratum("c", "FAIL", 1000, 200, 800)]
    runs_bound = correct(4, 1, 0, estimate_error(many).for_case("c"), threshold=0.8)  # few runs, many labels
    assert runs_bound.lo < 0.8 < runs_bound.hi and not runs_bound.judge_limited


def load_sim():
    return load_benchmark("judge_sim")


@pytest.mark.parametrize(("theta_", "q0", "q1"), [(0.3, 0.8, 0.95), (0.9, 0.95, 0.8)])
def test_simulation_corrected_interval_covers_where_the_raw_one_does_not(theta_, q0, q1):
    """A small run of benchmarks/judge_sim.py: 400 sessions, 200 labels, 50 runs."""
    cell = load_sim().run_cell(7, theta_, q0, q1, 200, 50, 400)
    assert cell["cover"] >= 0.92
    assert abs(cell["bias"]) < 2
    assert cell["cover_raw"] < 0.7 and abs(cell["bias_raw"]) > 10


def test_corrected_tails_hand_worked():
    """A judge known almost exactly (a million items a count): the red-side p is the exact binomial
    tail of the judge's PASS count against π(t) = t·q1 + (1 − t)(1 − q0), plus the box's share γ."""
    from scipy.stats import binom

    from scarbook.stats.corrected_gate import NUISANCE_SHARE, CorrectedEvidence, p_above, p_below
    from scarbook.stats.judge_error import JudgeBasis, Share

    # W = .8·.9 + .2·.1 = .74; r_P = .72/.74, r_F = .08/.26: q0 = q1 = .9
    big = 1e6
    basis = JudgeBasis(Share(0.74 * big, big), Share(0.72 / 0.74 * big, big), Share(0.08 / 0.26 * big, big))
    ev = CorrectedEvidence(11, 9, 0, basis)
    pi = 0.8 * 0.9 + 0.2 * 0.1
    gamma = NUISANCE_SHARE * 0.05
    assert p_below(ev, 0.8, 0.05) == pytest.approx(binom.cdf(11, 20, pi) + gamma, abs=2e-3)
    assert p_above(ev, 0.8, 0.05) == pytest.approx(min(1.0, binom.sf(10, 20, pi) + gamma), abs=2e-3)


def test_the_gate_decides_on_the_corrected_rate_when_given():
    from scarbook.stats.decisions import CaseEvidence, GatePolicy, decide_cases

    raw = CaseEvidence("c", 156, 44, 0, 0.8)  # 78% raw: P(X <= 156 | 200, .8) = .24, undecided
    assert [d.decision for d in decide_cases([raw])] == ["undecided"]
    # a lenient judge (q0 about .5, q1 .97; 600 labels): about a quarter of its PASSes were FAILs
    lenient = estimate_error([Stratum("c", "PASS", 788, 224, 76), Stratum("c", "FAIL", 212, 17, 195)]).for_case("c")
    fixed = correct(156, 44, 0, lenient, threshold=0.8)
    judged = CaseEvidence("c", 156, 44, 0, 0.8, corrected=fixed.evidence)
    decision = decide_cases([judged])[0]
    assert decision.decision == "below" and decision.p_below < 0.05 and decision.runs_needed is None
    assert fixed.hi < 0.8
    assert decide_cases([judged], GatePolicy(mode="point"))[0].decision == "below"
    close = correct(33, 7, 0, lenient)  # 40 runs: the same judge leaves it open
    decided = decide_cases([CaseEvidence("c", 33, 7, 0, 0.8, corrected=close.evidence)])[0]
    assert decided.decision == "undecided"
    assert decided.why == "its rate corrected for the judge's error is too close to 80% to call: more runs would decide it"


def test_labels_go_where_they_shrink_an_open_interval_most():
    from scarbook.stats.label_plan import CaseTarget, allocate

    # "open": 30 labels, its interval spans 70%; "far": 300 labels of a good judge, decided above 30%
    strata = [Stratum("open", "PASS", 500, 18, 2), Stratum("open", "FAIL", 100, 1, 9),
              Stratum("far", "PASS", 500, 199, 1), Stratum("far", "FAIL", 100, 5, 95)]
    err = estimate_error(strata)
    open_ = CaseTarget("open", 40, 10, 0, 1, threshold=0.7)
    far = CaseTarget("far", 40, 10, 0, 1, threshold=0.3)
    assert open_.corrected(err.for_case("open")).lo < 0.7 < open_.corrected(err.for_case("open")).hi
    assert far.corrected(err.for_case("far")).lo > 0.3
    models = {"open": err.for_case("open"), "far": err.for_case("far")}
    labelled = {("open", "PASS"): 20, ("open", "FAIL"): 10, ("far", "PASS"): 200, ("far", "FAIL"): 100}
    plenty = {key: 100 for key in labelled}
    plan = allocate([open_, far], models, labelled, plenty, 20)
    assert sum(plan.values()) == 20
    assert plan.get(("open", "PASS"), 0) + plan.get(("open", "FAIL"), 0) >= 15
    capped = allocate([open_, far], models, labelled, {("open", "FAIL"): 2, ("far", "PASS"): 1}, 20)
    assert capped == {("open", "FAIL"): 2, ("far", "PASS"): 1}  # never more than a stratum has left


def test_corrected_evidence_decides_as_its_interval_reads():
    from scarbook.stats.decisions import CaseEvidence, decide_cases

    fixed = correct(280, 120, 0, estimate_error(perfect(200)).for_case("c"), threshold=0.8)
    assert fixed.hi < 0.8  # 70% with a near-perfect judge: the interval is below 80%
    assert fixed.level == pytest.approx(0.9) and fixed.ci_label == "≈90% CI"
    decision = decide_cases([CaseEvidence("c", 280, 120, 0, 0.8, corrected=fixed.evidence)])[0]
    assert decision.decision == "below"
    above = correct(280, 120, 0, estimate_error(perfect(200)).for_case("c"), threshold=0.6)
    assert above.lo > 0.6
    assert decide_cases([CaseEvidence("c", 280, 120, 0, 0.6, corrected=above.evidence)])[0].decision == "above"


def test_a_lone_case_shrunk_toward_itself_keeps_its_own_variance():
    """The pool holds the case's own labels: shrinking toward it must not shrink the variance too
    (it did: a lone case with 20 labels a stratum read 0.68 of its variance)."""
    strata = [Stratum("c", "PASS", 500, 15, 5), Stratum("c", "FAIL", 100, 4, 16)]
    err = estimate_error(strata)
    case, pooled = err.for_case("c"), err.pooled
    for mine, pool in zip(case.params, pooled.params, strict=True):
        assert mine.value == pytest.approx(pool.value) and mine.var == pytest.approx(pool.var)


def test_a_recorded_error_corrects_and_decides_as_the_measured_one():
    """JudgeError.to_record, through JSON and back (what a session records of its calibration, run/gate.py):
    the same corrected rate, interval and gate evidence, to the last bit; a case without its own model reads
    the pool's, as before."""
    import json

    error = estimate_error([Stratum("a", "PASS", 300, 21, 9), Stratum("a", "FAIL", 100, 2, 28),
                            Stratum("b", "PASS", 50, 10, 0), Stratum("b", "FAIL", 50, 1, 9)])
    back = JudgeError.from_record(json.loads(json.dumps(error.to_record(["a", "z"]))))
    assert set(back.per_case) == {"a"}
    for case in ("a", "z"):
        assert correct(14, 6, 2, back.for_case(case), items=2, threshold=0.6) == \
            correct(14, 6, 2, error.for_case(case), items=2, threshold=0.6)
    with pytest.raises(ValueError):
        JudgeError.from_record({"pooled": {**error.to_record()["pooled"], "counts": [[1, 2]]}})
