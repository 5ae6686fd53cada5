"""The one binomial tail (stats/binomial.py), summed in log space: checked against scipy, and at sizes
where a sum of comb(n, x) * p**x * (1 - p)**(n - x) cannot be turned into a float."""

from __future__ import annotations

import pytest

from scarbook.stats import decisions, sequential
from scarbook.stats.binomial import binom_cdf, binom_sf, smallest_cut


@pytest.mark.parametrize(("c", "n", "p"), [(550, 1100, 0.5), (1, 5000, 0.001), (4990, 5000, 0.999), (0, 3, 0.2),
                                           (3, 3, 0.2), (4, 3, 0.2), (2000, 2500, 0.8)])
def test_tails_match_scipy_at_any_size(c: int, n: int, p: float) -> None:
    from scipy.stats import binom

    assert binom_sf(c, n, p) == pytest.approx(binom.sf(c - 1, n, p), rel=1e-9, abs=1e-300)
    assert binom_cdf(c, n, p) == pytest.approx(binom.cdf(c, n, p), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("n", "p", "at_most"), [(1100, 0.475, 0.05), (40, 0.7, 0.05), (10, 0.5, 1.0),
                                                 (10, 0.5, 0.0), (1, 0.9, 0.2), (300, 0.8, 1e-12)])
def test_smallest_cut_is_the_first_tail_under_the_limit(n: int, p: float, at_most: float) -> None:
    from scipy.stats import binom

    c = smallest_cut(n, p, at_most)
    assert 0 <= c <= n + 1
    assert c > n or binom.sf(c - 1, n, p) <= at_most * (1 + 1e-9)
    assert c == 0 or binom.sf(c - 2, n, p) > at_most * (1 - 1e-9)


def test_fixed_n_needing_more_than_a_thousand_runs_does_not_overflow() -> None:
    """expected_fixed_n at a threshold of 0.5 with delta 0.025 needs about 1,080 runs; the tail's
    comb(n, n/2) * 0.5**n overflowed a float there (OverflowError: int too large to convert to float)."""
    from scipy.stats import binom

    n = sequential.expected_fixed_n(0.5, delta=0.025)
    p0, p1 = 0.475, 0.525
    c = smallest_cut(n, p0, 0.05)
    assert c <= n and binom.sf(c - 1, n, p0) <= 0.05 and binom.cdf(c - 1, n, p1) <= 0.05
    # and it is the smallest such n
    c_before = smallest_cut(n - 1, p0, 0.05)
    assert c_before > n - 1 or binom.cdf(c_before - 1, n - 1, p1) > 0.05


def test_one_tail_for_the_gate_and_the_sequential_rule() -> None:
    assert decisions.binom_sf is binom_sf and decisions.binom_cdf is binom_cdf
    assert not hasattr(sequential, "_binom_sf")
    assert sequential.expected_fixed_n(0.8) == 41
