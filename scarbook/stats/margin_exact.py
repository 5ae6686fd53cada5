"""The exact one-sided test of "p2 - p1 > d0" at small run counts: what head_to_head's *non-inferior* call
takes when each side has at most EXACT_UP_TO judged runs.

Newcombe's interval read backwards (head_to_head.p_above) is an approximation, and at small n it claims
"not worse than the margin" more often than its level where the null is true. At the margin's boundary
(p2 = p1 + d0, the null's worst case) and the worst nuisance rate p1, a 5% call is wrong 22.6% of the time
with one run a side (0/1 against 1/1 was called non-inferior: a release gate under `undecided: fail` went
green on two runs), 8.8% with 3, 6.8% with 5, 6.3% with 10.

The exact unconditional test (Barnard's construction; Chan 1998 for a margin): the outcomes are ordered by
that same Newcombe p-value, and the p-value is the largest probability, over the nuisance rate p1 (a grid of
NUISANCE_POINTS), of an outcome at least as extreme as the one observed when p2 = p1 + d0. The call takes
the larger of the two p-values, so where this is computed it holds its level and is never bolder than the
interval. Pure numbers: no I/O; tests/stats/test_margin_exact.py enumerates every outcome to check the level.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

EXACT_UP_TO = 20  # runs a side up to which the exact test is computed (past it Newcombe's is within ~0.6 points)
NUISANCE_POINTS = 400

Statistic = Callable[[int, int, int, int, float], float]  # head_to_head.p_above's signature


@lru_cache(maxsize=4096)
def _pmf(n: int, p: float) -> tuple[float, ...]:
    return tuple(math.comb(n, x) * p ** x * (1 - p) ** (n - x) for x in range(n + 1))


@lru_cache(maxsize=256)
def _ordered(stat: Statistic, n1: int, n2: int, d0: float) -> tuple[tuple[float, int, int], ...]:
    """Every outcome (x1, x2) with its statistic, most extreme (smallest p) first."""
    return tuple(sorted((stat(x1, n1, x2, n2, d0), x1, x2) for x1 in range(n1 + 1) for x2 in range(n2 + 1)))


@lru_cache(maxsize=65536)
def exact_p_above(stat: Statistic, c1: int, n1: int, c2: int, n2: int, d0: float) -> float:
    """max over p1 of P(stat(X) <= stat(observed) | p1, p2 = p1 + d0): the exact p-value of "p2 - p1 > d0"."""
    observed = stat(c1, n1, c2, n2, d0)
    extreme = [(x1, x2) for p, x1, x2 in _ordered(stat, n1, n2, d0) if p <= observed * (1 + 1e-9) + 1e-15]
    lo, hi = max(0.0, -d0), min(1.0, 1.0 - d0)
    worst = 0.0
    for i in range(NUISANCE_POINTS + 1):
        p1 = lo + (hi - lo) * i / NUISANCE_POINTS
        f1, f2 = _pmf(n1, p1), _pmf(n2, min(1.0, max(0.0, p1 + d0)))
        worst = max(worst, sum(f1[x1] * f2[x2] for x1, x2 in extreme))
    return min(1.0, worst)
