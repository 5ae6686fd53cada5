"""Stats against values computed independently: scipy's Wilson interval, and pass@k / pass^k by
enumerating every k-subset of a concrete list of outcomes."""

from __future__ import annotations

from itertools import combinations

import pytest

from scarbook.models import RunRecord
from scarbook.stats.rates import band, pass_at_k, pass_hat_k, summarize, summarize_counts, wilson


@pytest.mark.parametrize("c,n", [(0, 1), (1, 1), (9, 10), (7, 10), (0, 10), (10, 10), (3, 7), (37, 40), (1, 200)])
def test_wilson_matches_scipy(c: int, n: int) -> None:
    from scipy.stats import binomtest

    ref = binomtest(c, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson(c, n)
    assert lo == pytest.approx(ref.low, abs=1e-9)
    assert hi == pytest.approx(ref.high, abs=1e-9)


def test_wilson_with_no_runs_is_the_whole_range() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def _brute(n: int, c: int, k: int) -> tuple[float, float]:
    """Over every k-subset of n outcomes (c of them passes): share with any pass, share with all passes."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    return (sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets))


@pytest.mark.parametrize("n,c,k", [(10, 9, 1), (10, 9, 5), (10, 7, 3), (10, 0, 2), (10, 10, 10), (8, 2, 4),
                                   (12, 5, 6), (5, 4, 5), (6, 1, 1)])
def test_pass_at_k_and_pass_hat_k_by_enumeration(n: int, c: int, k: int) -> None:
    any_pass, all_pass = _brute(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(any_pass, abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(all_pass, abs=1e-12)


def test_pass_hat_k_is_not_p_to_the_k() -> None:
    # 9/10 passes, k=5: unbiased C(9,5)/C(10,5) = 0.5, while 0.9**5 would be 0.59.
    assert pass_hat_k(10, 9, 5) == pytest.approx(0.5)


@pytest.mark.parametrize("n,c,k", [(0, 0, 1), (3, 3, 4), (5, 2, 0)])
def test_pass_at_k_undefined(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) is None
    assert pass_hat_k(n, c, k) is None


@pytest.mark.parametrize("rate,threshold,green,expected", [
    (0.95, 0.8, 0.9, "green"), (0.9, 0.8, 0.9, "green"), (0.89, 0.8, 0.9, "yellow"), (0.8, 0.8, 0.9, "yellow"),
    (0.79, 0.8, 0.9, "red"), (None, 0.8, 0.9, "none"), (0.7, 0.6, 0.75, "yellow"), (0.75, 0.6, 0.75, "green"),
    # a case's threshold above green (0.95), or scarbook.yaml's bands.green under its threshold: below the passing
    # line is red, whatever green says (92% at 95% and 70% at 80% were drawn green beside 'below')
    (0.92, 0.95, 0.9, "red"), (0.95, 0.95, 0.9, "green"), (0.7, 0.8, 0.5, "red"), (0.8, 0.8, 0.5, "green"),
])
def test_band(rate, threshold, green, expected) -> None:
    assert band(rate, threshold, green) == expected


def _run(k: int, status: str) -> RunRecord:
    return RunRecord(session_id="s", case_id="c", k=k, status=status, reason="")


def test_summarize_keeps_errors_out_of_the_rate() -> None:
    from scipy.stats import binomtest

    runs = [_run(i, "pass") for i in range(1, 8)] + [_run(8, "fail"), _run(9, "error"), _run(10, "error")]
    s = summarize("c", runs, threshold=0.8, green=0.9)
    assert (s.passes, s.fails, s.errors) == (7, 1, 2)
    assert s.rate == pytest.approx(7 / 8)
    ref = binomtest(7, 8).proportion_ci(method="wilson")
    assert (s.lo, s.hi) == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert s.band == "yellow" and s.meets_threshold is True
    assert s.k == 5 and s.pass_hat_k == pytest.approx(_brute(8, 7, 5)[1])


def test_summarize_only_errors_has_no_verdict() -> None:
    s = summarize_counts("c", 0, 0, 3, threshold=0.8)
    assert s.rate is None and s.meets_threshold is None and s.band == "none"
    assert s.pass_at_k is None
