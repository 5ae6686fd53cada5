"""Adaptive N (`--runs auto`): keep running a case until the evidence decides it, then stop.

Method: Wald's sequential probability ratio test (SPRT), truncated at `max_runs`.

    H0: p <= threshold - delta   (the case is below its line)
    H1: p >= threshold + delta   (the case is above its line)

After every judged run the log likelihood ratio of the runs so far is
    llr = passes * log(p1 / p0) + fails * log((1 - p1) / (1 - p0)),  p0 = t - delta, p1 = t + delta
and the rule says "above" once llr >= log((1 - beta) / alpha), "below" once
llr <= log(beta / (1 - alpha)), otherwise keeps running; at `max_runs` judged runs it says
"undecided".

Why the SPRT and not a confidence sequence: it is the test that needs the fewest runs on average
for a given pair of error rates (Wald & Wolfowitz 1948), which is what costs money here; its error
bound holds under looking after every run by construction — the boundaries are for the running
likelihood ratio, not a fixed-N interval re-checked; and its state is two counts, so `decide` is a
pure function of (passes, fails) that the CLI, the TUI and a resumed session all agree on. The
price is the indifference zone: between t - delta and t + delta it promises nothing about which
answer it gives (either is acceptable there), where a confidence sequence would keep running.

Error rates (Wald's inequality, which holds for any stopping rule that only says "above" when
llr >= log A, so it survives `min_runs` and truncation at `max_runs`):
    P(says "above" | p <= t - delta) <= alpha / (1 - beta)     (5.26% at alpha = beta = 0.05)
    P(says "below" | p >= t + delta) <= beta / (1 - alpha)
Truncation can only turn decisions into "undecided", never into wrong ones. Errors (runs with no
verdict) are not evidence: `decide` takes passes and fails only, so the caller must also cap
attempts that keep erroring.

With a judge whose error was measured (a fresh calibration, see docs/statistics.md), H0 and H1 are
about the true rate and the test runs on the judge PASS shares they imply, (1 - q0) + p (q0 + q1 - 1):
the same guarantees for the true rate, taking q0 and q1 as known, at the cost of more runs (the two
hypotheses are q0 + q1 - 1 times closer). A run a rule check failed counts as a FAIL seen by the
judge; that can only push toward "below".

`expected_fixed_n` gives the smallest fixed N (exact binomial test) with the same two error rates
at p0 and p1, so the CLI can report "runs spent vs fixed-N".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from scarbook.stats.rates import effective_threshold

Decision = Literal["above", "below", "undecided"]
EDGE = 0.01  # keep p0, p1 off 0 and 1: a hypothesis of p = 1 would let one failure decide alone


def _hypotheses(threshold: float, delta: float) -> tuple[float, float]:
    return max(threshold - delta, EDGE), min(threshold + delta, 1 - EDGE)


def _validate(threshold: float, alpha: float, beta: float, delta: float) -> None:
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    if not (0 < alpha < 0.5 and 0 < beta < 0.5):
        raise ValueError(f"alpha and beta must be between 0 and 0.5, got alpha={alpha}, beta={beta}")
    if delta <= 0:
        raise ValueError(f"delta (half the indifference zone) must be above 0, got {delta}")
    p0, p1 = _hypotheses(threshold, delta)
    if p0 >= p1:
        raise ValueError(f"threshold {threshold} ± delta {delta} leaves no room between the hypotheses")


@dataclass(frozen=True)
class SequentialRule:
    """Decide a case against its threshold from its pass/fail counts so far."""

    threshold: float
    alpha: float = 0.05  # bound (≈) on saying "above" when p <= threshold - delta
    beta: float = 0.05  # bound (≈) on saying "below" when p >= threshold + delta
    delta: float = 0.1
    max_runs: int = 40
    min_runs: int = 5  # never stop before this many judged runs: a human wants to see a few
    # the judge's measured run-level specificity and sensitivity (stats/judge_error.py); 1, 1: the
    # judge's verdicts are the truth. Otherwise H0 and H1 are about the true rate, and the test runs
    # on the judge's PASS share they imply: (1 - q0) + p (q0 + q1 - 1)
    q0: float = 1.0
    q1: float = 1.0

    def __post_init__(self) -> None:
        _validate(self.threshold, self.alpha, self.beta, self.delta)
        if not 1 <= self.min_runs <= self.max_runs:
            raise ValueError(f"need 1 <= min_runs <= max_runs, got min_runs={self.min_runs}, max_runs={self.max_runs}")
        if not (0 <= self.q0 <= 1 and 0 <= self.q1 <= 1 and self.q0 + self.q1 > 1):
            raise ValueError(f"the judge's q0 + q1 must be above 1 (better than chance), got q0={self.q0}, q1={self.q1}")

    def _judge_space(self, p: float) -> float:
        return (1 - self.q0) + p * (self.q0 + self.q1 - 1)

    @property
    def p0(self) -> float:
        return self._judge_space(_hypotheses(self.threshold, self.delta)[0])

    @property
    def p1(self) -> float:
        return self._judge_space(_hypotheses(self.threshold, self.delta)[1])

    @property
    def upper(self) -> float:
        """log A: at or above it the case is "above"."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        """log B: at or below it the case is "below"."""
        return math.log(self.beta / (1 - self.alpha))

    def log_likelihood_ratio(self, passes: int, fails: int) -> float:
        p0, p1 = self.p0, self.p1
        return passes * math.log(p1 / p0) + fails * math.log((1 - p1) / (1 - p0))

    def decide(self, passes: int, fails: int) -> Decision | None:
        """"above" / "below" once decided, "undecided" at max_runs, None = run again."""
        if passes < 0 or fails < 0:
            raise ValueError("passes and fails cannot be negative")
        n = passes + fails
        if n >= self.min_runs:
            llr = self.log_likelihood_ratio(passes, fails)
            # A tiny tolerance so an exact boundary hit is not lost to float rounding.
            if llr >= self.upper - 1e-12:
                return "above"
            if llr <= self.lower + 1e-12:
                return "below"
        return "undecided" if n >= self.max_runs else None

    def fixed_n(self) -> int:
        """The fixed number of runs that gives the same guarantee (see `expected_fixed_n`)."""
        return expected_fixed_n(self.threshold, self.alpha, self.beta, self.delta)


def _binom_sf(c: int, n: int, p: float) -> float:
    """P(X >= c) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(c, n + 1))


def expected_fixed_n(threshold: float, alpha: float = 0.05, beta: float = 0.05, delta: float = 0.1, limit: int = 2000) -> int:
    """Smallest fixed N whose exact binomial test has the SPRT's error rates.

    That is the smallest n with some cut-off c such that P(X >= c | p0) <= alpha ("above" when
    the case is really at t - delta) and P(X < c | p1) <= beta ("below" when it is at t + delta).
    """
    _validate(threshold, alpha, beta, delta)
    p0, p1 = _hypotheses(threshold, delta)
    for n in range(1, limit + 1):
        # The smallest cut-off that keeps the alpha side is the best one for the beta side.
        c = next(c for c in range(n + 2) if c > n or _binom_sf(c, n, p0) <= alpha)
        if c <= n and 1 - _binom_sf(c, n, p1) <= beta:
            return n
    raise ValueError(f"no fixed N up to {limit} reaches alpha={alpha}, beta={beta} with delta={delta}")


def make_decider(cases, default_threshold: float, max_runs: int, judge_rates=None):
    """`--runs auto`: one SPRT per case against its own threshold, as the runner's `decide(case, p, f)`.
    `judge_rates`: case id -> the judge's run-level (q0, q1), for the cases a fresh calibration covers."""
    rates = judge_rates or {}
    rules = {c.id: SequentialRule(effective_threshold(c, default_threshold), max_runs=max_runs,
                                  **dict(zip(("q0", "q1"), rates.get(c.id, (1.0, 1.0)), strict=True)))
             for c in cases}
    return lambda case, passes, fails: rules[case.id].decide(passes, fails)
