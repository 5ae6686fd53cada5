"""Adaptive N: the SPRT keeps its stated error rate under looking after every run."""

from __future__ import annotations

import math
import random

import pytest

from scarbook.stats.sequential import SequentialRule, above_after_a_failure, expected_fixed_n

REPS = 3000


def simulate(rule: SequentialRule, true_rate: float, seed: int) -> tuple[dict[str, int], float]:
    """Run the rule to a decision REPS times on a coin with the given pass rate."""
    rng = random.Random(seed)
    outcomes = {"above": 0, "below": 0, "undecided": 0}
    spent = 0
    for _ in range(REPS):
        passes = fails = 0
        while (decision := rule.decide(passes, fails)) is None:
            if rng.random() < true_rate:
                passes += 1
            else:
                fails += 1
        outcomes[decision] += 1
        spent += passes + fails
    return outcomes, spent / REPS


RULE = SequentialRule(threshold=0.8)  # H0: p <= 0.7, H1: p >= 0.9, alpha = beta = 0.05
BOUND = 0.05 / (1 - 0.05)  # Wald: alpha / (1 - beta), the stated bound


@pytest.mark.parametrize("true_rate,wrong", [(0.95, "below"), (0.9, "below"), (0.7, "above"), (0.6, "above")])
def test_wrong_decision_rate_stays_within_the_stated_bound(true_rate, wrong):
    outcomes, _ = simulate(RULE, true_rate, seed=int(true_rate * 1000))
    assert outcomes[wrong] / REPS <= BOUND, outcomes


@pytest.mark.parametrize("true_rate", [0.95, 0.6])
def test_clear_cases_decide_in_fewer_runs_than_fixed_n_20(true_rate):
    outcomes, mean_runs = simulate(RULE, true_rate, seed=7)
    assert mean_runs < 20
    right = "above" if true_rate > 0.8 else "below"
    assert outcomes[right] / REPS >= 0.95


def test_indifference_zone_leans_the_right_way_and_is_often_undecided():
    # 0.85 lies inside (0.7, 0.9): no promise about which answer, but more "above" than "below",
    # and the cap leaves a visible share undecided rather than forcing a coin toss.
    outcomes, _ = simulate(RULE, 0.85, seed=85)
    assert outcomes["above"] > 2 * outcomes["below"]
    assert outcomes["undecided"] / REPS > 0.1


def test_decide_boundaries_by_hand():
    rule = SequentialRule(threshold=0.8, min_runs=1)
    # each pass adds log(0.9/0.7) = 0.2513, each fail log(0.1/0.3) = -1.0986; bounds ±log(19) = ±2.944
    assert rule.decide(11, 0) is None
    assert rule.decide(12, 0) == "above"  # 12 * 0.2513 = 3.016
    assert rule.decide(2, 0) is None
    assert rule.decide(0, 3) == "below"  # -3.296
    assert rule.decide(16, 1) is None  # 4.021 - 1.099 = 2.922, just short of 2.944
    assert rule.decide(17, 1) == "above"  # 4.272 - 1.099 = 3.174
    assert rule.log_likelihood_ratio(16, 1) == pytest.approx(16 * math.log(9 / 7) + math.log(1 / 3))


def test_min_runs_and_max_runs():
    rule = SequentialRule(threshold=0.8, min_runs=5, max_runs=10)
    assert rule.decide(0, 3) is None  # would be "below", but not before 5 runs
    assert rule.decide(1, 4) == "below"
    assert rule.decide(7, 2) is None
    assert rule.decide(8, 2) == "undecided"


def test_expected_fixed_n_is_the_smallest_exact_binomial_design():
    from scipy.stats import binom

    n = expected_fixed_n(0.8)
    assert RULE.fixed_n() == n

    def feasible(m: int) -> bool:
        # an independent search with scipy: some cut-off c keeps both error rates
        return any(binom.sf(c - 1, m, 0.7) <= 0.05 and binom.cdf(c - 1, m, 0.9) <= 0.05 for c in range(m + 1))

    assert feasible(n) and not feasible(n - 1)
    assert n > 20  # the SPRT beats a fixed design that carries the same guarantee by a wide margin


def test_hypotheses_stay_off_the_edges():
    rule = SequentialRule(threshold=0.95)
    assert rule.p0 == pytest.approx(0.85) and rule.p1 == pytest.approx(0.99)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"threshold": 1.5}, "threshold must be between 0 and 1, got 1.5"),
        ({"threshold": 0.8, "alpha": 0.7}, "alpha and beta must be between 0 and 0.5, got alpha=0.7, beta=0.05"),
        ({"threshold": 0.8, "delta": 0}, "delta (half the indifference zone) must be above 0, got 0"),
        ({"threshold": 0.8, "min_runs": 50}, "need 1 <= min_runs <= max_runs, got min_runs=50, max_runs=40"),
    ],
)
def test_bad_settings_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError) as info:
        SequentialRule(**kwargs)
    assert str(info.value) == message


def test_with_a_measured_judge_the_hypotheses_are_about_the_true_rate():
    """issue 23: a judge with q0 .8, q1 .95 reads a true 70% as .7*.95 + .3*.2 = 72.5% and a true
    90% as 87.5%: the test runs on those judge PASS shares, so its guarantees hold for the true rate."""
    rule = SequentialRule(threshold=0.8, q0=0.8, q1=0.95)
    assert (rule.p0, rule.p1) == (pytest.approx(0.725), pytest.approx(0.875))

    assert rule.decide(17, 3) is None
    rng = random.Random(4)
    wrong = 0
    for _ in range(2000):  # a true 70% case, graded by the lenient judge: called "above" at most ~5%
        passes = fails = 0
        while (d := rule.decide(passes, fails)) is None:
            truly = rng.random() < 0.7
            judged_pass = rng.random() < (0.95 if truly else 0.2)
            passes, fails = passes + judged_pass, fails + (not judged_pass)
        wrong += d == "above"
    assert wrong / 2000 <= 0.06
    with pytest.raises(ValueError, match="the judge's q0 \\+ q1 must be above 1"):
        SequentialRule(threshold=0.8, q0=0.5, q1=0.5)


@pytest.mark.parametrize(("threshold", "cap", "first"), [
    (1.0, 40, None), (1.0, 60, (56, 1)), (0.99, 60, (51, 1)), (0.99, 100, (51, 1)), (0.9, 40, (28, 1))])
def test_the_fewest_runs_at_which_the_rule_says_above_with_a_failure(threshold, cap, first) -> None:
    """What `eval --runs auto` warns of at a threshold of 99% or more: the margin's top is 99%, so a failure
    does not rule "above" out once enough passes follow, if the cap leaves room for them."""
    rule = SequentialRule(threshold, max_runs=cap)
    assert above_after_a_failure(rule) == first
    if first is not None:
        assert rule.decide(*first) == "above" and rule.decide(first[0] - 1, first[1]) is None
