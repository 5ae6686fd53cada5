""""Needs about N more runs" walks the tails from one N to the next (stats/runs_needed.py) and says what the
scan of exact tails said (tests/helpers/old_runs_to_decide.py, the function before the walk): for every
count of up to 20 judged runs against four thresholds at three levels, where rounding makes "decides"
jump back and forth (26/28 against 80%: 2 more runs decide it, 3 do not), and at the edges. It computes a
few exact tails where the scan computed one for every N it tried."""

from __future__ import annotations

import pytest

from scarbook.stats import exact
from scarbook.stats.decisions import runs_to_decide
from scarbook.stats.exact import binom_ge, binom_le
from scarbook.stats.runs_needed import REANCHOR, SCAN_LIMIT, _tails
from tests.helpers.old_runs_to_decide import old_runs_to_decide

LEVELS = (0.05, 0.05 / 3, 0.001)  # the default, a look of three, a strict gate


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9, 0.95])
@pytest.mark.parametrize("alpha", LEVELS)
def test_every_count_up_to_20_runs_says_what_the_scan_said(threshold: float, alpha: float) -> None:
    wrong = [(passes, n, got, want) for n in range(1, 21) for passes in range(n + 1)
             if (got := runs_to_decide(passes, n - passes, threshold, alpha))
             != (want := old_runs_to_decide(passes, n - passes, threshold, alpha))]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize(("passes", "fails", "threshold", "alpha", "expected"), [
    (26, 2, 0.8, 0.05, 2),  # 2 more runs decide it, 3 do not
    (32, 8, 0.9, 0.05, 1),  # 1 decides, 2 do not
    (2, 1, 0.8, 0.05, 26),  # 26 decides, 27 and 28 do not
    (81, 19, 0.8, 0.05, 4213),  # near the line: 4,213 N tried
    (35, 4, 0.9, 0.05, 37504),  # past SCAN_LIMIT: the first of a steady run
    (8001, 1999, 0.8, 0.05, None),  # more than MAX_RUNS_NEEDED
    (4030, 970, 0.8, 0.05, 6987),  # 5,000 runs so far
    (3, 37, 0.2, 0.001, 45),  # below the line, at a strict level
    (9, 1, 0.5, 1e-9, 42),  # a level far under the walk's absolute margin
    (5, 5, 0.0, 0.05, 1),  # thresholds of 0 and 1: nothing to walk
    (5, 5, 1.0, 0.05, 1),
    (8, 2, 0.8, 0.05, None),  # at the line
])
def test_the_edges_say_what_the_scan_said(passes: int, fails: int, threshold: float, alpha: float,
                                           expected: int | None) -> None:
    assert old_runs_to_decide(passes, fails, threshold, alpha) == expected
    assert runs_to_decide(passes, fails, threshold, alpha) == expected


@pytest.mark.parametrize(("passes", "fails", "threshold", "alpha"), [
    (81, 19, 0.8, 0.05), (77, 23, 0.8, 0.05), (161, 39, 0.8, 0.05), (35, 4, 0.9, 0.05), (17, 3, 0.8, 0.05)])
def test_a_case_near_its_line_costs_a_few_exact_tails(monkeypatch, passes: int, fails: int, threshold: float,
                                                      alpha: float) -> None:
    """The scan computed an exact tail (the incomplete beta) for every N it tried and about 50 more for
    its bound: 4,262 for 81/100 against 80%. The walk computes one every REANCHOR runs and where it comes
    near alpha, and the bound's."""
    calls = 0
    plain = exact.beta_inc

    def counted(*args: float) -> float:
        nonlocal calls
        calls += 1
        return plain(*args)

    monkeypatch.setattr(exact, "beta_inc", counted)
    needed = runs_to_decide(passes, fails, threshold, alpha)
    assert needed is not None
    assert calls <= 100 + 2 * min(needed, SCAN_LIMIT) // REANCHOR, (needed, calls)


@pytest.mark.parametrize(("passes", "fails", "threshold"), [
    (81, 19, 0.8), (201, 49, 0.8), (3, 7, 0.5), (30, 70, 0.2), (1, 99, 0.02), (40000, 10000, 0.8)])
def test_the_walk_stays_within_a_millionth_of_its_margin(passes: int, fails: int, threshold: float) -> None:
    """Every walked tail against the exact one, alpha out of the way (the walk then runs wherever the tail
    is over 1e-7): within 1e-8 of it relative (at most 4e-10 measured, at 50,000 runs), where the walk
    hands N to the exact tail within 1e-3 of alpha."""
    n = passes + fails
    rate = passes / n
    above = rate > threshold

    def tail(more: int) -> float:
        total, c = n + more, passes + round(rate * more)
        return binom_ge(c, total, threshold) if above else binom_le(c, total, threshold)

    worst = max(abs(walked - tail(more)) / tail(more)
                for more, walked in zip(range(1, 3001), _tails(passes, n, threshold, 0.0, tail), strict=False)
                if walked > 1e-7)
    assert worst < 1e-8
