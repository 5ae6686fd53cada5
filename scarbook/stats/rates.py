"""The numbers of one case: pass rate, 95% Wilson interval, pass@k, pass^k, band.

Errors are kept apart: rate = passes / (passes + fails); the error count stands beside it.
Unjudged runs (rule checks passed, judge skipped) are kept apart too, and a case with any has no
rate at all: its passes could only ever be unjudged, so the fails alone would read as 0%.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from scarbook.models import Case, RunRecord, RunStatus
from scarbook.models.words import Decision

Z95 = 1.959963984540054


def wilson(c: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for c successes in n trials; (0, 1) when n == 0."""
    if n == 0:
        return 0.0, 1.0
    p = c / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k (Chen et al. 2021): chance at least one of k draws without replacement passes."""
    if n == 0 or k > n or k < 1:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass^k: chance all k draws without replacement pass, C(c,k)/C(n,k)."""
    if n == 0 or k > n or k < 1:
        return None
    return math.comb(c, k) / math.comb(n, k)


def rate_of(passes: int, fails: int, unjudged: int = 0) -> float | None:
    """The one rule for every rate scarbook shows: passes / (passes + fails), and none at all (None)
    without a judged run (all errors, or no runs) or with any unjudged run — no verdict, no rate."""
    judged = passes + fails
    return passes / judged if judged and not unjudged else None


def count_text(passes: int, fails: int, unjudged: int = 0, short: bool = False) -> str:
    """The counts beside a rate: "8/10" (passes/judged) when there is a rate; without one no
    fraction (0/1 would read as 0%): "1 fail, 9 unjudged" ("9 unj" short), or "–" with no verdict at all."""
    if rate_of(passes, fails, unjudged) is not None:
        return f"{passes}/{passes + fails}"
    if short:
        return f"{unjudged} unj" if unjudged else "–"
    parts = [f"{n} {word}" for n, word in ((passes, "pass"), (fails, "fail"), (unjudged, "unjudged")) if n]
    return ", ".join(parts) if parts else "no verdict"


def effective_threshold(case: Case | None, default: float) -> float:
    """The case's own threshold when it sets one, else the project's (scarbook.yaml `threshold`)."""
    return case.threshold if case is not None and case.threshold is not None else default


def band(rate: float | None, threshold: float, green: float = 0.9) -> str:
    """red below the passing line, whatever green says (a case's threshold may be above bands.green, or
    bands.green under scarbook.yaml's threshold: then there is no yellow); green from green up; yellow between."""
    if rate is None:
        return "none"
    if rate < threshold:
        return "red"
    if rate >= green:
        return "green"
    return "yellow"


def gate_band(rate: float | None, corrected_rate: float | None, decision: str, threshold: float, green: float) -> str:
    """The band the gate's own rate falls in: the judge-corrected rate when there is one (the gate
    decides on it), none without a verdict (1 pass and 9 errors is no green)."""
    if decision == Decision.NO_VERDICT:
        return "none"
    return band(corrected_rate if corrected_rate is not None else rate, threshold, green)


@dataclass
class CaseStats:
    case_id: str
    passes: int
    fails: int
    errors: int
    rate: float | None
    lo: float
    hi: float
    pass_at_k: float | None
    pass_hat_k: float | None
    k: int
    band: str
    threshold: float
    unjudged: int = 0
    corrected: Any = None  # stats.corrected.Corrected: the rate corrected for the judge's measured error
    # The gate's decision (scarbook.stats.decisions.gate_stats): above / below / undecided / no verdict.
    # "" until a gate has decided; then `gate` falls back to the point rule rate >= threshold.
    decision: str = ""
    gate_note: str = ""  # no verdict: why; undecided: what would decide it
    runs_needed: int | None = None  # undecided: about how many more judged runs would decide it
    error_span: tuple[float, float] | None = None  # the rates the errored runs could have produced
    rate_note: str = ""  # "adjusted": --runs auto's rate, bias-adjusted for stopping early
    unread: int = 0  # --runs auto: runs with a verdict its rule did not read (after its stop, or failed by the machine)
    green: float = 0.9  # the band's green line this case was drawn with
    # 95% intervals for pass@k and pass^k: the Wilson interval of the rate carried through the
    # monotone maps 1 - (1 - p)^k and p^k (a valid interval for a monotone function of p)
    pass_at_k_ci: tuple[float, float] | None = None
    pass_hat_k_ci: tuple[float, float] | None = None

    @property
    def gate(self) -> Decision | str:
        """above / below / undecided / no verdict: the gate's decision, else the point rule."""
        if self.decision:
            return self.decision
        if self.rate is None:
            return Decision.NO_VERDICT
        rate = self.corrected.rate if self.corrected is not None else self.rate
        return Decision.ABOVE if rate >= self.threshold else Decision.BELOW

    @property
    def judged(self) -> int:
        return self.passes + self.fails

    @property
    def total(self) -> int:
        return self.passes + self.fails + self.errors + self.unjudged

    @property
    def meets_threshold(self) -> bool | None:
        """True above, False below; None when undecided or without a verdict (see `gate`). With a
        rate corrected for the judge's measured error (a fresh calibration covers the judge), the
        gate decides on it."""
        gate = self.gate
        return True if gate == Decision.ABOVE else False if gate == Decision.BELOW else None

    def to_dict(self) -> dict:
        corrected = self.corrected
        self.corrected = None
        try:
            d = asdict(self)
        finally:
            self.corrected = corrected
        d["corrected"] = corrected.to_dict() if corrected is not None else None
        return d


def summarize_counts(case_id: str, passes: int, fails: int, errors: int, threshold: float,
                     green: float = 0.9, k: int | None = None, unjudged: int = 0) -> CaseStats:
    n = passes + fails
    rate = rate_of(passes, fails, unjudged)
    lo, hi = wilson(passes, n)
    k = k or min(n, 5) or 1
    at_k, hat_k = (pass_at_k(n, passes, k), pass_hat_k(n, passes, k)) if rate is not None else (None, None)
    at_k_ci = (1 - (1 - lo) ** k, 1 - (1 - hi) ** k) if at_k is not None else None
    hat_k_ci = (lo**k, hi**k) if hat_k is not None else None
    return CaseStats(case_id, passes, fails, errors, rate, lo, hi, at_k, hat_k, k, band(rate, threshold, green),
                     threshold, unjudged, pass_at_k_ci=at_k_ci, pass_hat_k_ci=hat_k_ci, green=green)


def count_statuses(runs: Iterable[RunRecord]) -> dict[RunStatus, int]:
    """pass / fail / error / unjudged counts; a status history does not know is counted as an error."""
    counts = dict.fromkeys(RunStatus, 0)
    for run in runs:
        counts[run.status if run.status in counts else RunStatus.ERROR] += 1
    return counts


def summarize(case_id: str, runs: Iterable[RunRecord], threshold: float, green: float = 0.9,
              k: int | None = None) -> CaseStats:
    c = count_statuses(runs)
    return summarize_counts(case_id, c[RunStatus.PASS], c[RunStatus.FAIL], c[RunStatus.ERROR], threshold, green, k,
                            c[RunStatus.UNJUDGED])
