"""stats/margin_exact.py: the non-inferior call holds its level at small n. Every outcome of two agents on the
margin's boundary (p2 = p1 - 5 points) is enumerated at each nuisance rate; the chance that the call says
non-inferior must stay at most 5%. Newcombe's one-sided test alone (head_to_head.p_above) reached 22.6%
with one run a side, 8.8% with three, 6.3% with ten."""

from __future__ import annotations

from math import comb

import pytest

from scarbook.models import MarginCall
from scarbook.stats.compare import Counts
from scarbook.stats.head_to_head import compare_agents, p_above
from scarbook.stats.margin_exact import exact_p_above

MARGIN = 0.05


def worst_false_non_inferior(n1: int, n2: int, *, exact: bool = True) -> float:
    """The largest chance, over the baseline's rate, of a non-inferior call when the candidate is exactly the
    margin worse (with `exact` False: of Newcombe's own test at 5%)."""
    called = set()
    for c1 in range(n1 + 1):
        for c2 in range(n2 + 1):
            if exact:
                row = compare_agents({"x": {"a": Counts(c1, n1 - c1), "b": Counts(c2, n2 - c2)}}, "a", ["b"]).rows[0]
                if row.margin_call == MarginCall.NON_INFERIOR:
                    called.add((c1, c2))
            elif p_above(c1, n1, c2, n2, -MARGIN) < 0.05:
                called.add((c1, c2))
    worst = 0.0
    for i in range(5, 101):
        p1 = i / 100
        p2 = p1 - MARGIN
        worst = max(worst, sum(comb(n1, c1) * p1 ** c1 * (1 - p1) ** (n1 - c1) * comb(n2, c2) * p2 ** c2 * (1 - p2) ** (n2 - c2)
                               for c1, c2 in called))
    return worst


def test_newcombe_alone_claimed_too_much_at_small_n() -> None:
    assert worst_false_non_inferior(1, 1, exact=False) == pytest.approx(0.2256, abs=1e-4)
    assert worst_false_non_inferior(3, 3, exact=False) > 0.08


@pytest.mark.parametrize(("n1", "n2"), [(1, 1), (2, 2), (3, 3), (5, 5), (10, 10), (3, 7), (12, 9), (20, 20)])
def test_the_non_inferior_call_holds_its_level(n1, n2) -> None:
    assert worst_false_non_inferior(n1, n2) <= 0.05


def test_the_exact_p_value_is_a_probability_of_the_observed_or_more_extreme() -> None:
    # 0/1 against 1/1: the only outcome as extreme is itself, (1 - p1)(p1 - 0.05) at most at p1 = 0.525
    assert exact_p_above(p_above, 0, 1, 1, 1, -MARGIN) == pytest.approx(0.475 ** 2, abs=1e-4)
    assert exact_p_above(p_above, 0, 10, 10, 10, -MARGIN) < 1e-5  # 0/10 against 10/10: nowhere near the boundary
