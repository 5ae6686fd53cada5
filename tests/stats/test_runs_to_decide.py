"""'needs about N more runs' is the smallest N (issue 39.7): every count of up to 30 judged runs at
thresholds 80% and 90%, against a scan with scipy's exact tails. The bisection it replaced said 9
for 26/28 against 80%, where 2 more runs (28/30) already decide it."""

from __future__ import annotations

import numpy as np
import pytest

from scarbook.stats.decisions import runs_to_decide


def smallest(passes: int, fails: int, t: float, alpha: float = 0.05, limit: int = 3000) -> int | None:
    """The first N in 1..limit whose exact test decides, every N tried (scipy, vectorised)."""
    from scipy.stats import binom

    n = passes + fails
    rate = passes / n
    if rate == t:
        return None
    more = np.arange(1, limit)
    c = passes + np.round(rate * more).astype(int)  # half to even, as Python's round in the product
    p = binom.sf(c - 1, n + more, t) if rate > t else binom.cdf(c, n + more, t)
    hits = np.nonzero(p < alpha)[0]
    return int(more[hits[0]]) if len(hits) else None


def test_26_of_28_against_80_needs_2_more() -> None:
    assert runs_to_decide(26, 2, 0.8, 0.05) == 2
    assert runs_to_decide(10, 0, 0.8, 0.05) == 4  # 14 straight passes show 80%


@pytest.mark.parametrize("t", [0.8, 0.9])
def test_the_smallest_n_on_a_grid(t) -> None:
    wrong = []
    for n in range(1, 31):
        for passes in range(n + 1):
            want = smallest(passes, n - passes, t)
            if want is None:
                continue
            got = runs_to_decide(passes, n - passes, t, 0.05)
            if got != want:
                wrong.append((passes, n, got, want))
    assert not wrong, wrong[:10]
