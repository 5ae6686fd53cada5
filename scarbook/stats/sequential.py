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
from functools import lru_cache

from scarbook.models import Decision, RunStatus
from scarbook.models.words import CauseKind
from scarbook.stats.binomial import binom_sf, smallest_cut
from scarbook.stats.rates import effective_threshold

EDGE = 0.01  # keep p0, p1 off 0 and 1: a hypothesis of p = 1 would let one failure decide alone
DELTA = 0.1  # half the indifference zone: the rule weighs threshold - DELTA against threshold + DELTA


def hypotheses(threshold: float, delta: float = DELTA) -> tuple[float, float]:
    """The two rates the rule weighs against each other (its margin's ends): "above" rules out the first."""
    return max(threshold - delta, EDGE), min(threshold + delta, 1 - EDGE)


def _validate(threshold: float, alpha: float, beta: float, delta: float) -> None:
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    if not (0 < alpha < 0.5 and 0 < beta < 0.5):
        raise ValueError(f"alpha and beta must be between 0 and 0.5, got alpha={alpha}, beta={beta}")
    if delta <= 0:
        raise ValueError(f"delta (half the indifference zone) must be above 0, got {delta}")
    p0, p1 = hypotheses(threshold, delta)
    if p0 >= p1:
        raise ValueError(f"threshold {threshold} ± delta {delta} leaves no room between the hypotheses")


@dataclass(frozen=True)
class SequentialRule:
    """Decide a case against its threshold from its pass/fail counts so far."""

    threshold: float
    alpha: float = 0.05  # bound (≈) on saying "above" when p <= threshold - delta
    beta: float = 0.05  # bound (≈) on saying "below" when p >= threshold + delta
    delta: float = DELTA
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
        return self._judge_space(hypotheses(self.threshold, self.delta)[0])

    @property
    def p1(self) -> float:
        return self._judge_space(hypotheses(self.threshold, self.delta)[1])

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
                return Decision.ABOVE
            if llr <= self.lower + 1e-12:
                return Decision.BELOW
        return Decision.UNDECIDED if n >= self.max_runs else None

    def fixed_n(self) -> int:
        """The fixed number of runs that gives the same guarantee (see `expected_fixed_n`)."""
        return expected_fixed_n(self.threshold, self.alpha, self.beta, self.delta)


def expected_fixed_n(threshold: float, alpha: float = 0.05, beta: float = 0.05, delta: float = DELTA, limit: int = 2000) -> int:
    """Smallest fixed N whose exact binomial test has the SPRT's error rates.

    That is the smallest n with some cut-off c such that P(X >= c | p0) <= alpha ("above" when
    the case is really at t - delta) and P(X < c | p1) <= beta ("below" when it is at t + delta).
    """
    _validate(threshold, alpha, beta, delta)
    p0, p1 = hypotheses(threshold, delta)
    for n in range(1, limit + 1):
        # The smallest cut-off that keeps the alpha side is the best one for the beta side.
        c = smallest_cut(n, p0, alpha)
        if c <= n and 1 - binom_sf(c, n, p1) <= beta:
            return n
    raise ValueError(f"no fixed N up to {limit} reaches alpha={alpha}, beta={beta} with delta={delta}")


def sequential_rules(cases, default_threshold: float, max_runs: int, judge_rates=None) -> dict[str, SequentialRule]:
    """`--runs auto`: one SPRT per case (by id) against its own threshold. `judge_rates`: case id -> the
    judge's run-level (q0, q1), for the cases a fresh calibration covers."""
    rates = judge_rates or {}
    return {c.id: SequentialRule(effective_threshold(c, default_threshold), max_runs=max_runs,
                                 **dict(zip(("q0", "q1"), rates.get(c.id, (1.0, 1.0)), strict=True)))
            for c in cases}


def make_decider(cases, default_threshold: float, max_runs: int, judge_rates=None):
    """The rules of `sequential_rules` as the runner's `decide(case, p, f)`."""
    rules = sequential_rules(cases, default_threshold, max_runs, judge_rates)
    return lambda case, passes, fails: rules[case.id].decide(passes, fails)


# ---- After the stop: what the rule's own stopping does to the numbers -------------------------
#
# Every way the rule can end is a node (passes, fails) where it first says above/below, or where
# it reaches max_runs undecided. The number of paths to each node does not depend on p, so the
# chance of ending there is paths * p^s * (1-p)^f: an exact distribution, no simulation.

@lru_cache(maxsize=256)
def stop_nodes(rule: SequentialRule) -> tuple[tuple[int, int, str, int], ...]:
    """(passes, fails, decision, number of paths) for every node where the rule stops."""
    alive = {0: 1}  # passes -> paths, at n judged runs, not stopped yet
    nodes = []
    for n in range(rule.max_runs):
        nxt: dict[int, int] = {}
        for s, paths in alive.items():
            nxt[s + 1] = nxt.get(s + 1, 0) + paths
            nxt[s] = nxt.get(s, 0) + paths
        alive = {}
        for s, paths in nxt.items():
            decision = rule.decide(s, n + 1 - s)
            if decision is None:
                alive[s] = paths
            else:
                nodes.append((s, n + 1 - s, decision, paths))
    return tuple(nodes)


def above_after_a_failure(rule: SequentialRule) -> tuple[int, int] | None:
    """The fewest runs (passes, fails) at which the rule stops "above" with a failure among them, or None when
    it never does within its max_runs. At a threshold of 99% or more the margin's top (99%) is not above the
    threshold, so such a stop says "above" of a case whose runs already missed its line."""
    found = [(s + f, s, f) for s, f, decision, _ in stop_nodes(rule) if f and decision == Decision.ABOVE]
    return min(found)[1:] if found else None


def _weights(rule: SequentialRule, p: float) -> list[tuple[int, int, str, float]]:
    out = []
    for s, f, decision, paths in stop_nodes(rule):
        if p <= 0.0:
            w = float(paths) if s == 0 else 0.0
        elif p >= 1.0:
            w = float(paths) if f == 0 else 0.0
        else:
            w = math.exp(math.log(paths) + s * math.log(p) + f * math.log1p(-p))
        out.append((s, f, decision, w))
    return out


def decision_chances(rule: SequentialRule, p: float) -> dict[str, float]:
    """P(above), P(below), P(undecided) and the expected number of judged runs at true rate p."""
    out = {"above": 0.0, "below": 0.0, "undecided": 0.0, "runs": 0.0}
    for s, f, decision, w in _weights(rule, p):
        out[decision] += w
        out["runs"] += w * (s + f)
    return out


def _bisect(fn, target: float, increasing: bool = True) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if (fn(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def expected_rate(rule: SequentialRule, p: float) -> float:
    """E[passes / judged] at the stop, at true rate p (biased: stopping follows lucky streaks)."""
    return sum(w * s / (s + f) for s, f, _, w in _weights(rule, p))


def adjusted_rate(rule: SequentialRule, passes: int, fails: int) -> float:
    """The bias-adjusted rate after the rule stopped at (passes, fails): the p whose expected
    stopped rate is the observed one (Whitehead 1986). 0 and 1 stay 0 and 1."""
    observed = passes / (passes + fails)
    if observed in (0.0, 1.0):
        return observed
    return _bisect(lambda p: expected_rate(rule, p), observed)


def stopped_interval(rule: SequentialRule, passes: int, fails: int, level: float = 0.95) -> tuple[float, float]:
    """An exact interval valid after the rule's stopping: the stopping points are ordered by their
    rate (MLE ordering), and the bounds are the p at which the observed one or a more extreme one
    has chance (1 - level) / 2. A Wilson interval at the stop ignores the stopping and covers less."""
    observed = passes / (passes + fails)
    tail = (1 - level) / 2

    def upper_tail(p: float) -> float:  # P(rate at the stop >= observed)
        return sum(w for s, f, _, w in _weights(rule, p) if s / (s + f) >= observed - 1e-12)

    def lower_tail(p: float) -> float:  # P(rate at the stop <= observed)
        return sum(w for s, f, _, w in _weights(rule, p) if s / (s + f) <= observed + 1e-12)
    lo = 0.0 if observed == 0 else _bisect(upper_tail, tail, increasing=True)
    hi = 1.0 if observed == 1 else _bisect(lower_tail, tail, increasing=False)
    return lo, hi


@dataclass(frozen=True)
class AfterTheStop:
    """What --runs auto reports for a case: exactly the runs its rule read and the rule that read them."""

    passes: int  # read by the rule (launch order, up to its stop)
    fails: int
    rate: float  # bias-adjusted (Whitehead), on the true rate when the rule knew the judge's error
    lo: float  # exact after the stop
    hi: float
    unread: int  # runs with a pass or fail the rule did not read: finished after it stopped, or failed by the machine
    q0: float = 1.0
    q1: float = 1.0

    @property
    def note(self) -> str:
        judge = (f"; the judge's error taken out (q0 {self.q0:.2f}, q1 {self.q1:.2f})"
                 if (self.q0, self.q1) != (1.0, 1.0) else "")
        return f"adjusted from {self.passes}/{self.passes + self.fails}{judge}"


def after_the_stop(rule: SequentialRule, statuses) -> AfterTheStop | None:
    """The rate, interval and counts --runs auto reports, from the runs the rule read (`statuses` in
    launch order; "infra" for a fail the machine caused, which the runner never feeds it) with the
    rule that read them. With the judge's q0, q1 the rule ran on the judge's PASS share: its adjusted
    rate and interval are mapped back to the true rate ((p − (1 − q0)) / (q0 + q1 − 1), clipped). None
    when the rule read nothing."""
    statuses = list(statuses)
    passes, fails = read_until_stop(rule, statuses)
    if passes + fails == 0:
        return None
    lo, hi = stopped_interval(rule, passes, fails)
    judged = sum(1 for s in statuses if s in (RunStatus.PASS, RunStatus.FAIL, CauseKind.INFRA))
    den = rule.q0 + rule.q1 - 1

    def true_rate(p: float) -> float:
        return min(1.0, max(0.0, (p - (1 - rule.q0)) / den))
    return AfterTheStop(passes, fails, true_rate(adjusted_rate(rule, passes, fails)), true_rate(lo), true_rate(hi),
                        judged - passes - fails, rule.q0, rule.q1)


def read_until_stop(rule: SequentialRule, statuses) -> tuple[int, int]:
    """The (passes, fails) the rule had read when it stopped, reading run statuses in launch order
    (errors and fails the machine caused, "infra", are not evidence); all of them when it did not stop."""
    passes = fails = 0
    for status in statuses:
        if status == RunStatus.PASS:
            passes += 1
        elif status == RunStatus.FAIL:
            fails += 1
        else:
            continue
        if rule.decide(passes, fails) is not None:
            break
    return passes, fails


def matched_fixed_n(rule: SequentialRule, limit: int = 2000) -> int:
    """The smallest fixed N whose exact binomial test is right at least as often as this (truncated)
    rule at both of its hypotheses: says below at p0 and above at p1 with at least the rule's
    chances. Wald's alpha/beta are not what the truncated rule achieves (undecided is not right),
    so comparing with expected_fixed_n(alpha, beta) would compare unlike tests."""
    right0 = decision_chances(rule, rule.p0)["below"]
    right1 = decision_chances(rule, rule.p1)["above"]
    for n in range(1, limit + 1):
        c = smallest_cut(n, rule.p0, 1 - right0)
        if c <= n and binom_sf(c, n, rule.p1) >= right1:
            return n
    raise ValueError(f"no fixed N up to {limit} is right as often as the sequential rule")
