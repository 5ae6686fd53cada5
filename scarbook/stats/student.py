"""Student's t distribution for a whole number of degrees of freedom, exactly, without scipy.

The suite-level comparison of two agents (stats/head_to_head.py) averages the per-case differences of
a handful of cases — 10 is common — so its interval uses t with (cases - 1) degrees of freedom, not
the normal's 1.96, which would claim more than 10 cases can show. For a whole number of degrees of
freedom the two-sided tail has a finite closed form (Abramowitz & Stegun 26.7.3-4): with
theta = atan(t / sqrt(df)),

    df odd:  P(|T| < t) = (2/pi) (theta + sin theta cos theta (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...))
    df even: P(|T| < t) = sin theta (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...)

the series stopping at cos^(df-3) (odd) or cos^(df-2) (even). The tests check both against scipy.
"""

from __future__ import annotations

import functools
import math


def t_within(t: float, df: int) -> float:
    """P(|T| < t) for T ~ Student t with `df` (a whole number >= 1) degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be a whole number of at least 1, got {df}")
    t = abs(t)
    if math.isinf(t):
        return 1.0
    theta = math.atan(t / math.sqrt(df))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2:
        total, term = 0.0, 1.0
        for j in range(1, (df - 1) // 2 + 1):  # terms cos^0 .. cos^(df-3)
            total += term
            term *= cos2 * (2 * j) / (2 * j + 1)
        series = sin * math.cos(theta) * total if df > 1 else 0.0
        return min(1.0, 2 / math.pi * (theta + series))
    total, term = 0.0, 1.0
    for j in range(1, df // 2 + 1):  # terms cos^0 .. cos^(df-2)
        total += term
        term *= cos2 * (2 * j - 1) / (2 * j)
    return min(1.0, sin * total)


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|): the two-sided p-value of a t statistic."""
    return max(0.0, 1.0 - t_within(t, df))


def t_upper_p(t: float, df: int) -> float:
    """P(T >= t): the one-sided p-value of a t statistic against the upper side."""
    half = t_two_sided_p(t, df) / 2
    return half if t >= 0 else 1.0 - half


@functools.lru_cache(maxsize=1024)
def t_quantile(level: float, df: int) -> float:
    """The t with P(T <= t) = level (0.5 < level < 1), by bisection on the exact tail."""
    if not 0.5 < level < 1:
        raise ValueError(f"level must be between 0.5 and 1, got {level}")
    lo, hi = 0.0, 1.0
    while t_upper_p(hi, df) > 1 - level:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_upper_p(mid, df) > 1 - level:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2
