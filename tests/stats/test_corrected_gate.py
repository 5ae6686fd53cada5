"""The gate on a judge-corrected rate (issue 39.1, 39.2): an exact test with the judge's error rates
bounded keeps a false red at most alpha where the old normal tails did not, and the interval printed
beside a decision is at the decision's own level."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from scarbook.config import GatePolicy
from scarbook.stats import corrected_gate
from scarbook.stats.corrected import correct
from scarbook.stats.decisions import CaseEvidence, decide_cases
from scarbook.stats.judge_error import ErrorModel, Stratum, estimate_error


def calibrated(theta: float, q0: float, q1: float, labels: int, pool: int = 1000,
               rng: random.Random | None = None) -> ErrorModel:
    """A judge (q0, q1) calibrated on a pool of `pool` judged items, `labels` of them labelled half
    from its PASSes and half from its FAILs. With rng the pool and the labels are drawn; without, the
    expected counts (rounded)."""
    if rng is None:
        tp, fn = round(pool * theta * q1), round(pool * theta * (1 - q1))
        fp, tn = round(pool * (1 - theta) * (1 - q0)), round(pool * (1 - theta) * q0)
        want_f = min(labels // 2, fn + tn)
        want_p = min(labels - want_f, tp + fp)
        xp = round(want_p * tp / (tp + fp))
        xf = round(want_f * fn / (fn + tn))
        return estimate_error([Stratum("c", "PASS", tp + fp, xp, want_p - xp),
                               Stratum("c", "FAIL", fn + tn, xf, want_f - xf)]).for_case("c")
    truth = [rng.random() < theta for _ in range(pool)]
    says = [rng.random() < (q1 if t else 1 - q0) for t in truth]
    passed = [t for t, s in zip(truth, says, strict=True) if s]
    failed = [t for t, s in zip(truth, says, strict=True) if not s]
    want_p = min(labels // 2, len(passed))
    want_f = min(labels - want_p, len(failed))
    lab_p, lab_f = rng.sample(passed, want_p), rng.sample(failed, want_f)
    return estimate_error([Stratum("c", "PASS", len(passed), sum(lab_p), want_p - sum(lab_p)),
                           Stratum("c", "FAIL", len(failed), sum(lab_f), want_f - sum(lab_f))]).for_case("c")


def decision(passes: int, runs: int, model: ErrorModel, threshold: float) -> str:
    fixed = correct(passes, runs - passes, 0, model)  # the threshold only adds "labels to decide"
    assert fixed is not None
    return decide_cases([CaseEvidence("c", passes, runs - passes, 0, threshold, corrected=fixed.evidence)])[0].decision


def test_the_audits_example_8_of_10_against_95_is_not_called_below() -> None:
    """q0 = q1 = .99, 200 labels: 8/10 against 95% was called below (p .043, normal tails); the exact
    test on the judge's PASS count says P(X <= 8 | 10, π(.95)) is about 10%: undecided."""
    from scipy.stats import binom

    model = calibrated(0.95, 0.99, 0.99, 200)
    pi = 0.95 * 0.99 + 0.05 * 0.01
    assert binom.cdf(8, 10, pi) > 0.05
    assert decision(8, 10, model, 0.95) == "undecided"


@pytest.mark.parametrize(("t", "runs"), [(0.9, 10), (0.95, 10), (0.8, 50)])
def test_false_red_at_most_alpha_where_the_normal_tails_broke_it(t, runs) -> None:
    """q0 = q1 = .99, 200 labels, the true rate at the threshold: the old gate (normal tails around
    the Agresti–Coull centre) went red in 8.5% (t .9, 10 runs), 3.5% (.95, 10) and 6.1% (.8, 50 runs)
    of these sessions (the audit: up to 10.8%). Each calibration drawn, each session count summed exactly."""
    from scipy.stats import binom

    rng = random.Random(39)
    q0 = q1 = 0.99
    pi = t * q1 + (1 - t) * (1 - q0)
    red = 0.0
    draws = 60
    for _ in range(draws):
        model = calibrated(t, q0, q1, 200, rng=rng)
        red += sum(binom.pmf(x, runs, pi) for x in range(runs + 1) if decision(x, runs, model, t) == "below")
    assert red / draws <= 0.05


@pytest.mark.parametrize(("theta", "q0", "q1", "labels"), [(0.8, 0.9, 0.9, 200), (0.8, 0.95, 0.8, 40),
                                                           (0.6, 0.8, 0.95, 200)])
def test_the_interval_printed_is_the_decisions_own(theta, q0, q1, labels) -> None:
    """For every count: above exactly when the interval's lower end clears the threshold, below (one
    case: no Holm) exactly when its upper end does; 'labels to decide' only for an undecided case.
    The old block said above beside '≈95% CI 77–100%' around 80% and labels_to_decide 1."""
    model = calibrated(theta, q0, q1, labels)
    for runs, t in itertools.product((20, 60), (0.6, 0.8)):
        for x in range(runs + 1):
            fixed = correct(x, runs - x, 0, model, threshold=t)
            said = decide_cases([CaseEvidence("c", x, runs - x, 0, t, corrected=fixed.evidence)])[0].decision
            assert (said == "above") == (fixed.lo > t), (runs, t, x, fixed.lo, said)
            assert (said == "below") == (fixed.hi < t), (runs, t, x, fixed.hi, said)
            if said != "undecided":
                assert fixed.labels_to_decide is None and not fixed.judge_limited
            assert fixed.level == pytest.approx(0.9)
            assert fixed.lo <= fixed.rate <= fixed.hi + 1e-9


def test_judge_limited_means_the_runs_alone_would_decide() -> None:
    """Many runs, few labels: with the judge's error known exactly 450/500 would show 90% >= 80%;
    with 20 labels it cannot, and about N more labels would."""
    model = calibrated(0.9, 0.9, 0.9, 20)
    fixed = correct(410, 90, 0, model, threshold=0.8)
    assert fixed.lo <= 0.8 <= fixed.hi
    assert fixed.judge_limited and fixed.labels_to_decide is not None
    more = fixed.labels_to_decide
    bigger = model.basis(1).with_more_labels((20 + more) / 20)
    assert corrected_gate.decides(corrected_gate.CorrectedEvidence(410, 90, 0, bigger), 0.8, 0.05)
    smaller = model.basis(1).with_more_labels((20 + more - 1) / 20)
    assert not corrected_gate.decides(corrected_gate.CorrectedEvidence(410, 90, 0, smaller), 0.8, 0.05)
    runs_short = correct(9, 1, 0, calibrated(0.9, 0.9, 0.9, 2000), threshold=0.8)  # 10 runs cannot
    assert not runs_short.judge_limited and runs_short.labels_to_decide is None


def test_runs_a_rule_check_failed_push_below_without_the_judge() -> None:
    """Half the runs failed a rule check: the true rate is at most about 50%, whatever the judge."""
    model = calibrated(0.9, 0.8, 0.8, 40)
    fixed = correct(20, 0, 20, model, threshold=0.8)
    assert fixed.hi < 0.8
    ev = CaseEvidence("c", 20, 20, 0, 0.8, corrected=fixed.evidence)
    assert decide_cases([ev])[0].decision == "below"


def test_holm_over_the_suite_still_applies_on_the_red_side() -> None:
    model = calibrated(0.9, 0.95, 0.95, 400)
    fixed = correct(28, 22, 0, model, threshold=0.8)
    alone = decide_cases([CaseEvidence("c", 28, 22, 0, 0.8, corrected=fixed.evidence)])[0]
    assert alone.decision == "below"
    others = [CaseEvidence(f"o{i}", 50, 0, 0, 0.5) for i in range(40)]
    crowd = decide_cases([CaseEvidence("c", 28, 22, 0, 0.8, corrected=fixed.evidence), *others],
                         GatePolicy())[0]
    assert crowd.p_below_holm == pytest.approx(min(1.0, 41 * crowd.p_below))  # its own p is the smallest
    assert crowd.p_below < alone.p_below  # the box's share of the level is split over the suite
    assert crowd.decision == "undecided"  # among 41 cases the same evidence is not enough


def test_the_worst_point_of_the_box_is_found() -> None:
    """The grid-and-pattern search against a 201 x 201 brute force over the same box."""
    for theta, q0, q1, labels in [(0.9, 0.9, 0.9, 40), (0.6, 0.8, 0.95, 200), (0.95, 0.99, 0.99, 200)]:
        basis = calibrated(theta, q0, q1, labels).basis(1)
        for red in (True, False):
            gamma = 0.01
            w, rp, rf = corrected_gate._box(basis, gamma, red)
            found = corrected_gate._worst_pass_share(basis, theta, gamma, red)
            best = math.inf if red else -math.inf
            for i in range(201):
                for j in range(201):
                    a, b = rp[0] + (rp[1] - rp[0]) * i / 200, rf[0] + (rf[1] - rf[0]) * j / 200
                    rates = corrected_gate._run_rates((w, a, b), 1)
                    if rates is None:
                        continue
                    hit, lo, hi = rates
                    v = min(theta * hit + (1 - theta) * lo, hit) if red else max(theta * hit + (1 - theta) * hi, hi)
                    best = min(best, v) if red else max(best, v)
            assert (found <= best + 1e-9) if red else (found >= best - 1e-9)


def _brute_interval(basis, passes: int, runs: int, k: int = 121) -> tuple[float, float]:
    """The two tests at alpha 5% inverted over a k x k grid of the gate's box, with scipy's binomial tails, on a
    grid of 1,001 thresholds: (the largest t called above, the smallest t called below) — the gate's interval."""
    import numpy as np
    from scipy import stats

    alpha, gamma = 0.05, corrected_gate.NUISANCE_SHARE * 0.05
    ts = np.linspace(0, 1, 1001)
    ends = []
    for red in (False, True):
        w, rp, rf = corrected_gate._box(basis, (1 - corrected_gate.RULE_SHARE) * gamma if red else gamma, red)
        worst = np.full(ts.shape, np.inf if red else -np.inf)
        for a, b in itertools.product(np.linspace(*rp, k), np.linspace(*rf, k)):
            q0, q1 = corrected_gate._rates(w, a, b)
            pi = ts * q1 + (1 - ts) * (1 - q0)
            worst = np.minimum(worst, np.minimum(pi, q1)) if red else np.maximum(worst, np.maximum(pi, 1 - q0))
        if red:
            below = ts[stats.binom.cdf(passes, runs, worst) + gamma <= alpha]
            ends.append(float(below.min()) if len(below) else 1.0)
        else:
            above = ts[stats.binom.sf(passes - 1, runs, worst) + gamma <= alpha]
            ends.append(float(above.max()) if len(above) else 0.0)
    return ends[0], ends[1]


def test_a_whole_range_interval_is_the_box_worst_judge_and_says_why() -> None:
    """100 labels (45 of 50 judge PASSes and 5 of 50 judge FAILs person PASS: q0 = q1 = .9), W 500 of 1,000, and
    10 judge PASSes in 20 runs: the ≈90% interval is 0–100%. Not a 0/0 or a fallback: a brute force over the box
    inverts the two tests to 0–100% as well — the box's worst judges pass up to 32% of failing runs (10 of 20 PASSes
    reach that low: every pass could be a false one) and fail up to 32% of passing runs. The runs alone bound it:
    with q0, q1 known exactly, 24–76% (the brute force at a box of one point agrees), and 27 more labels in the same
    shares bound both ends (26 do not)."""
    model = estimate_error([Stratum("c", "PASS", 500, 45, 5), Stratum("c", "FAIL", 500, 5, 45)]).for_case("c")
    fixed = correct(10, 10, 0, model, threshold=0.8)
    assert fixed is not None and fixed.evidence is not None
    assert (fixed.lo, fixed.hi) == (0.0, 1.0)
    assert _brute_interval(model.basis(1), 10, 20) == (0.0, 1.0)
    why = fixed.unbounded
    assert why is not None
    assert (round(why.false_pass, 3), round(why.missed, 3)) == (0.317, 0.32)
    assert (round(why.exact[0], 3), round(why.exact[1], 3)) == (0.238, 0.762)
    exact = corrected_gate._point_basis(model.basis(1))
    lo, hi = _brute_interval(exact, 10, 20, k=2)
    assert abs(lo - why.exact[0]) <= 1e-3 and abs(hi - why.exact[1]) <= 1e-3
    assert why.labels == 27
    ev = fixed.evidence
    for more, bounded in ((26, False), (27, True)):
        scaled = corrected_gate.CorrectedEvidence(10, 10, 0, ev.basis.with_more_labels((100 + more) / 100))
        lo, hi = corrected_gate.decision_interval(scaled, 0.05)
        assert (lo > 0 and hi < 1) is bounded
    # a bounded interval has no such note; nor one whose 0 or 100% is the runs' own (0 of 5, 5 of 5 passed)
    assert correct(15, 5, 0, model).unbounded is None
    assert correct(0, 5, 0, model).unbounded is None and correct(5, 0, 0, model).unbounded is None


def test_a_number_of_labels_no_one_labels_is_said_to_be_one() -> None:
    """A judge-limited case this close to its threshold needs thousands of labels: the report said "about 5319 more
    labels will", as if that were a plan. The count is grouped, and past PRACTICAL_LABELS the words say why no one
    labels that many and what narrows it faster; a count a person can label is said as before."""
    from scarbook.stats.corrected import PRACTICAL_LABELS, more_labels_words

    near = correct(390, 110, 0, calibrated(0.9, 0.9, 0.9, 20), threshold=0.8)
    assert near.judge_limited and near.labels_to_decide > PRACTICAL_LABELS
    assert more_labels_words(near.labels_to_decide, "will") == (
        f"about {near.labels_to_decide:,} more labels will — more than anyone labels: the case sits this close to its "
        "threshold for the judge's measured error, and a judge that errs less narrows it faster")
    usual = correct(410, 90, 0, calibrated(0.9, 0.9, 0.9, 20), threshold=0.8)
    assert more_labels_words(usual.labels_to_decide, "will") == f"about {usual.labels_to_decide} more labels will"
    assert more_labels_words(1, "would do") == "about 1 more label would do"
