"""The gate's promises by simulation (issue 22), with small cells of benchmarks/gate_sim.py (the
product's own decision functions) and scipy as the oracle: the family-wise false-red rate stays
under alpha, with a binomial upper confidence bound from scipy, not a point estimate."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.paths import load_benchmark


def load_sim():
    return load_benchmark("gate_sim")


def _at_most(share: float, trials: int, bound: float) -> bool:
    """The share's exact one-sided 99% lower confidence bound does not exceed `bound` (scipy):
    a test that fails only when the data say the true rate is above it."""
    from scipy.stats import binomtest

    k = round(share * trials)
    return binomtest(k, trials, bound, alternative="greater").pvalue > 0.01


@pytest.mark.parametrize(("m", "p", "n"), [(1, 0.8, 10), (10, 0.8, 20), (10, 0.9, 10), (30, 0.8, 20),
                                           (30, 0.95, 40)])
def test_family_false_red_is_at_most_alpha(m: int, p: float, n: int) -> None:
    sim = load_sim()
    cell = sim.suite_cell(m, p, n, 0.8, 4000, np.random.default_rng(1))
    assert _at_most(cell.red_evidence, 4000, 0.05), cell
    if (m, p, n) == (10, 0.9, 10):  # the headline: point mode goes red about half the time
        assert 0.45 < cell.red_point < 0.58 and cell.red_evidence == 0.0


def test_the_bulk_engine_decides_as_decide_cases() -> None:
    sim = load_sim()
    assert sim.check_against_decide_cases(10, 0.85, 20, 0.8, 150, np.random.default_rng(2)) == 0
    assert sim.check_against_decide_cases(3, 0.7, 10, 0.8, 150, np.random.default_rng(3)) == 0


def test_a_truly_below_case_is_caught_with_enough_runs() -> None:
    from scipy.stats import binom

    cell = load_sim().suite_cell(1, 0.6, 40, 0.8, 2000, np.random.default_rng(4))
    # exact power of one case at 60% against 80%: P(X <= c) at 0.6 for the largest c with P(X <= c | 0.8) < 0.05
    cut = max(c for c in range(41) if binom.cdf(c, 40, 0.8) < 0.05)
    assert cell.below_share == pytest.approx(binom.cdf(cut, 40, 0.6), abs=0.025)
    assert cell.below_share > 0.8


@pytest.mark.parametrize("concurrency", [4, 16])
def test_sprt_wrong_above_stays_near_its_bound_with_slow_failures(concurrency: int) -> None:
    cell = load_sim().sprt_cell(0.7, concurrency, 600, np.random.default_rng(5))
    assert _at_most(cell.wrong_launch, 600, 0.053)  # alpha / (1 - beta)
    assert cell.wrong_finish > 0.12  # reading in finish order was the bug


def test_diff_false_flags_stay_under_alpha_with_tarone() -> None:
    cell = load_sim().diff_cell(10, 20, 250, np.random.default_rng(6))
    assert _at_most(cell.false_tarone, 250, 0.05)
    assert cell.false_tarone >= cell.false_holm_all  # a smaller family never flags less
