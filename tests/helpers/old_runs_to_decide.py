"""The oracle for "needs about N more runs": stats/decisions.runs_to_decide as it was before it walked the
tails (an exact incomplete-beta tail at every N it scanned, 25-250 ms for a case near its line). The tests
hold today's function to it exactly (tests/stats/test_runs_needed.py), and benchmarks/report_bench.py
times the two."""

from __future__ import annotations

from scarbook.stats.exact import binom_ge, binom_le, first_true

MAX_RUNS_NEEDED = 100_000
SCAN_LIMIT = 20_000


def old_runs_to_decide(passes: int, fails: int, threshold: float, alpha: float) -> int | None:
    n = passes + fails
    if n == 0:
        return None
    rate = passes / n
    if rate == threshold:
        return None

    def decides(more: int) -> bool:
        total, c = n + more, passes + round(rate * more)
        return binom_ge(c, total, threshold) < alpha if rate > threshold else binom_le(c, total, threshold) < alpha

    bound = first_true(lambda more: all(decides(more + j) for j in range(4)), MAX_RUNS_NEEDED)
    if bound is None:
        return None
    return next((more for more in range(1, min(bound, SCAN_LIMIT) + 1) if decides(more)), bound)
