"""'Needs about N more runs', the note on an undecided raw case (stats/decisions.py): the smallest number
N of further judged runs that, going as the runs so far did (passes + round(rate·N) of n + N), lets the
gate's exact test decide the case at level alpha toward the side its rate is on.

Rounding makes "decides" jump back and forth near the edge (26/28 against 80%: 2 more runs decide it, 3
do not), so the smallest N is found by trying every N, not by a bisection (which said 9). An exact tail
at every N (stats/exact.py's incomplete beta, about 20 µs) made one case near its line cost 25-250 ms.
The scan now *walks* the tail from one N to the next, a few multiplications a step. On the case's side
(Y its passes and p its threshold when its rate is above; its fails and 1 − threshold when below) the
test's p-value is P(Y >= k) for Y ~ Binomial(m, p), and one more run moves it by

    P_{m+1}(Y >= k)     = P_m(Y >= k) + p · pmf_m(k − 1)        when the count it needs stays k
    P_{m+1}(Y >= k + 1) = P_m(Y >= k) − (1 − p) · pmf_m(k)       when it grows by one

with pmf_{m+1} from pmf_m by a ratio. The walk starts from the exact tail (its pmf from lgamma) and
again every REANCHOR steps; a walked tail within NEAR of alpha is not trusted: the exact tail decides
that N, and the walk starts again there. A walked tail stays within 1e-9 of the exact one, relative (at
most 4e-10 measured, at 50,000 runs: lgamma's rounding; tests/stats/test_runs_needed.py holds it under
1e-8), a millionth of NEAR's 1e-3: so each N decides as its exact tail does, and the result is the scan
of exact tails' (the same test holds it to that scan over a grid, kept in tests/helpers as the oracle).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

from scarbook.stats.binomial import log_pmf
from scarbook.stats.exact import binom_ge, binom_le, first_true

MAX_RUNS_NEEDED = 100_000  # past this, "needs about N more runs" is not a useful thing to say
SCAN_LIMIT = 20_000  # every N up to this is tried; beyond it, the first of a steady run
REANCHOR = 512  # walked steps between two exact tails
NEAR = (1e-3, 1e-7)  # a walked tail within 1e-3 of alpha (relative) plus 1e-7 of it: the exact tail decides


def runs_to_decide(passes: int, fails: int, threshold: float, alpha: float) -> int | None:
    """The smallest number N of further judged runs that, going as the runs so far did (passes +
    round(rate·N) of n + N), lets the exact test decide the case at level `alpha` toward the side its
    rate is on. None when the rate equals the threshold (no number of runs is likely to decide it) or
    it would take more than MAX_RUNS_NEEDED. Every N up to SCAN_LIMIT is tried (not a bisection: see
    the module's docstring), each walked from the last, exact where the walk is not sure."""
    n = passes + fails
    if n == 0:
        return None
    rate = passes / n
    if rate == threshold:
        return None
    above = rate > threshold

    def tail(more: int) -> float:  # the exact test's p-value after `more` runs going as these did
        total, c = n + more, passes + round(rate * more)
        return binom_ge(c, total, threshold) if above else binom_le(c, total, threshold)

    # once the observed rate is this far from the line every larger N decides: an upper bound to scan to
    bound = first_true(lambda more: all(tail(more + j) < alpha for j in range(4)), MAX_RUNS_NEEDED)
    if bound is None:
        return None
    tails = itertools.islice(_tails(passes, n, threshold, alpha, tail), min(bound, SCAN_LIMIT))
    return next((more for more, value in enumerate(tails, 1) if value < alpha), bound)


def _tails(passes: int, n: int, threshold: float, alpha: float, tail: Callable[[int], float]) -> Iterator[float]:
    """Each N's tail, N = 1, 2, ...: walked from the last N's, or tail(N) (exact) where the walk starts
    (again) or comes within NEAR of alpha. Either way on the side of alpha tail(N) is on."""
    rate = passes / n
    above = rate > threshold
    p = threshold if above else 1.0 - threshold
    q = 1.0 - p
    walks = 0.0 < p < 1.0  # a threshold of 0 or 1: the exact tails are 0 or 1, nothing to walk
    near = NEAR[0] * alpha + NEAR[1]
    left = 0  # steps the walk may take before it starts again from an exact tail
    k, walked, pmf = 0, 0.0, 0.0  # the count the test needs on the case's side, its tail P(Y >= k), P(Y = k)
    for more in itertools.count(1):
        m = n + more
        c = passes + round(rate * more)
        was, k = k, (c if above else m - c)
        if left and k - was in (0, 1):
            if k == was:
                walked += pmf * k / (m - k) * q  # p · pmf_{m-1}(k - 1)
                pmf *= m / (m - k) * q
            else:
                walked -= q * pmf
                pmf *= p * m / k
            left -= 1
            if abs(walked - alpha) > near:
                yield walked
                continue
        walked = tail(more)
        yield walked
        pmf = math.exp(log_pmf(k, m, p)) if walks and 0 < k <= m else 0.0
        left = REANCHOR if pmf > 0.0 else 0
