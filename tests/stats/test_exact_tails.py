"""stats/exact.py against scipy: the incomplete beta function, binomial tails at large n and extreme
rates, Clopper–Pearson bounds for whole and effective (real-valued) counts."""

from __future__ import annotations

import random

import pytest

from scarbook.stats.exact import beta_inc, binom_ge, binom_le, cp_lower, cp_upper


def test_incomplete_beta_matches_scipy() -> None:
    from scipy.stats import beta

    rng = random.Random(3)
    for _ in range(2000):
        a, b, x = rng.uniform(0.05, 500), rng.uniform(0.05, 500), rng.random()
        assert beta_inc(a, b, x) == pytest.approx(beta.cdf(x, a, b), abs=1e-11)


@pytest.mark.parametrize("n", [1, 7, 40, 600, 5000])
@pytest.mark.parametrize("p", [1e-4, 0.05, 0.5, 0.8, 0.9999])
def test_binomial_tails_match_scipy(n, p) -> None:
    from scipy.stats import binom

    for c in range(0, n + 1, max(1, n // 23)):
        assert binom_le(c, n, p) == pytest.approx(binom.cdf(c, n, p), abs=1e-11)
        assert binom_ge(c, n, p) == pytest.approx(binom.sf(c - 1, n, p), abs=1e-11)


@pytest.mark.parametrize(("x", "n"), [(0, 10), (3, 10), (10, 10), (2.5, 20.5), (99.9, 105.0), (0.4, 3.0)])
@pytest.mark.parametrize("tail", [0.025, 0.0017])
def test_clopper_pearson_matches_scipy_for_whole_and_effective_counts(x, n, tail) -> None:
    from scipy.stats import beta

    lo = 0.0 if x == 0 else beta.ppf(tail, x, n - x + 1)
    hi = 1.0 if x == n else beta.ppf(1 - tail, x + 1, n - x)
    assert cp_lower(x, n, tail) == pytest.approx(lo, abs=1e-10)
    assert cp_upper(x, n, tail) == pytest.approx(hi, abs=1e-10)
