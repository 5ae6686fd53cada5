"""The regularized incomplete beta function and what rests on it: Clopper–Pearson bounds (for
real-valued counts too: a share shrunk toward a pool has effective counts x + m·r, n + m), and the
binomial tails in the incomplete-beta form, which cost the same at any n:

    P(X <= c | n, p) = I_{1-p}(n - c, c + 1)      P(X >= c | n, p) = I_p(c, n - c + 1)
    Clopper–Pearson lower bound at tail a: the p with I_p(x, n - x + 1) = a

stats/binomial.py sums the tails in log space, exact down to 1e-300 at any n: the gate's tests on raw
counts and the SPRT read it. This form is for what that cannot do cheaply: tails at a rate found by
a search (the corrected gate's worst point), and "needs about N more runs", which tries every N up to
thousands (a log-space sum is O(n) a tail). The tests check both against scipy.
"""

from __future__ import annotations

import math
from functools import lru_cache

_TINY = 1e-300


def _continued_fraction(a: float, b: float, x: float) -> float:
    """Lentz's evaluation of the incomplete beta function's continued fraction (Numerical Recipes 6.4)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), a, b > 0."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return min(1.0, front * _continued_fraction(a, b, x) / a)
    return max(0.0, 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b)


def binom_le(c: int, n: int, p: float) -> float:
    """P(X <= c) for X ~ Binomial(n, p)."""
    if c < 0:
        return 0.0
    if c >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return beta_inc(n - c, c + 1, 1.0 - p)


def binom_ge(c: int, n: int, p: float) -> float:
    """P(X >= c) for X ~ Binomial(n, p)."""
    if c <= 0:
        return 1.0
    if c > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return beta_inc(c, n - c + 1, p)


def _solve(f, target: float) -> float:
    """The p in [0, 1] where the increasing function f crosses target (bisection to 1e-12)."""
    lo, hi = 0.0, 1.0
    for _ in range(45):
        mid = (lo + hi) / 2
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@lru_cache(maxsize=65536)
def cp_lower(x: float, n: float, tail: float) -> float:
    """Clopper–Pearson: the smallest rate not ruled out at one-sided level `tail` by x of n (0 when x = 0)."""
    if x <= 0 or n <= 0:
        return 0.0
    x = min(x, n)
    return _solve(lambda p: beta_inc(x, n - x + 1, p), tail)


@lru_cache(maxsize=65536)
def cp_upper(x: float, n: float, tail: float) -> float:
    """Clopper–Pearson: the largest rate not ruled out at one-sided level `tail` by x of n (1 when x = n)."""
    if n <= 0 or x >= n:
        return 1.0
    x = max(x, 0.0)
    return _solve(lambda p: beta_inc(x + 1, n - x, p), 1.0 - tail)


def first_true(pred, limit: int) -> int | None:
    """The smallest k >= 1 with pred(k), for a pred that stays true once true (doubling, then
    bisection); None past `limit`."""
    lo, hi = 0, 1
    while not pred(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid, hi)
    return hi
