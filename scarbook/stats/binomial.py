"""Binomial tails, summed in log space: no overflow or underflow at any n.

P(X <= c) and P(X >= c) for X ~ Binomial(n, p) as sums: the gate's exact tests (`decisions`) and the
SPRT's fixed-N comparisons (`sequential`) read them from here. stats/exact.py has the same tails in the
incomplete-beta form, O(1) a tail, for what scans many n or searches a rate (the corrected gate's worst
point, "needs about N more runs"); tests/stats check both against scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def log_pmf(x: int, n: int, p: float) -> float:
    """log P(X = x) for X ~ Binomial(n, p), 0 <= x <= n."""
    if p <= 0.0:
        return 0.0 if x == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if x == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
            + x * math.log(p) + (n - x) * math.log1p(-p))


def _log_sum(logs: Sequence[float]) -> float:
    top = max(logs, default=-math.inf)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in logs))


def binom_cdf(c: int, n: int, p: float) -> float:
    """P(X <= c) for X ~ Binomial(n, p)."""
    if c < 0:
        return 0.0
    if c >= n:
        return 1.0
    return min(1.0, math.exp(_log_sum([log_pmf(x, n, p) for x in range(c + 1)])))


def binom_sf(c: int, n: int, p: float) -> float:
    """P(X >= c) for X ~ Binomial(n, p)."""
    if c <= 0:
        return 1.0
    if c > n:
        return 0.0
    return min(1.0, math.exp(_log_sum([log_pmf(x, n, p) for x in range(c, n + 1)])))


def smallest_cut(n: int, p: float, at_most: float) -> int:
    """The smallest c with P(X >= c) <= at_most for X ~ Binomial(n, p) (n + 1 when only the empty
    tail is that small). The tail grows from the top in one pass, in log space, so a search over every
    n up to a few thousand stays linear in n per n."""
    if at_most >= 1.0:
        return 0
    log_limit = math.log(at_most) if at_most > 0 else -math.inf
    log_tail = -math.inf  # log P(X >= n + 1)
    for c in range(n, -1, -1):
        log_tail = _log_add(log_tail, log_pmf(c, n, p))
        if log_tail > log_limit:
            return c + 1
    return 0


def _log_add(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    top = max(a, b)
    return top + math.log1p(math.exp(-abs(a - b)))
