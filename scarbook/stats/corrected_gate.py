"""The gate's test on a rate corrected for the judge's measured error: exact binomial tails, with the
judge's error rates bounded by Clopper–Pearson intervals (Berger & Boos 1994), so a false red stays
at most alpha whatever the true q0, q1 — not only when the calibration happens to be right.

A run the judge grades reads PASS with probability π(r) = r·q1 + (1 − r)·(1 − q0) when the case's
true rate is r. With q0, q1 known, "r ≥ t" is "π ≥ π(t)", and the exact binomial test on the judge's
PASS count decides it. q0 and q1 are not known: they come from labels (r_P, r_F: the person's PASS
share among the judge's PASSes and FAILs) and the judge's PASS share W in history, each a binomial
count. Berger & Boos: take a 1 − γ confidence box for (W, r_P, r_F) (Clopper–Pearson, Bonferroni
over the three), test at the worst point of the box, and add γ:

    p_below = max over the box of P(X ≤ passes | m, π_min(t)) + γ      (H0: r ≥ t)
    p_above = max over the box of P(X ≥ passes | n, π_max(t)) + γ      (H0: r < t)

P(p ≤ a) ≤ a for every true (q0, q1, r) in H0: either the box missed the truth (chance ≤ γ) or it
held it, and then the worst point's tail is at least the truth's. γ = NUISANCE_SHARE of the level,
divided by the suite's cases on the red side (Holm compares the smallest p with level / cases).

Runs a rule check failed are fails whatever the judge says (true rate r = (1 − f)·θ', θ' the true
rate among the runs the rule checks passed, f the rule-fail share):
  - above: they count as judge FAILs among all n runs (P(judge PASS) ≤ π(r): conservative);
  - below: the test is on the m runs the judge graded, against θ' ≥ t / (1 − f_lo), f_lo the
    Clopper–Pearson lower bound of f (a share of γ is spent on it).
Several rubric items: q1 of a run is q1^items (item errors independent); a truly failing run reads
PASS with probability between (1 − q0)^items and 1 − q0 — the test takes the end that is conservative
on each side.

The interval printed beside the decision inverts the same two tests at level alpha each (one-sided),
so it is a 1 − 2·alpha interval (90% at alpha 5%): the case is above exactly when the interval's
lower end is above the threshold, below (before Holm) exactly when its upper end is below it. It
is the worst Rogan–Gladen estimate over the box of the judge-PASS share's one-sided bound.

Pure numbers, no scipy (tests/stats check against scipy and by simulation: benchmarks/judge_sim.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from scarbook.stats.exact import binom_ge, binom_le, cp_lower, cp_upper, first_true
from scarbook.stats.judge_error import JudgeBasis, Share

NUISANCE_SHARE = 0.2  # γ: the share of the level spent on the box around the judge's error rates
RULE_SHARE = 0.1  # of γ on the red side: the share spent on the rule-fail share's bound
W_SHARE = 0.1  # of γ: the share spent on W (history holds many judged items; the labels are few)
FAR_SHARE = 0.1  # of r_P's (r_F's) share: the end of its interval that is not the worst where π is monotone
MAX_LABELS = 100_000  # past this, "about N more labels" is not a useful thing to say

Box = tuple[float, tuple[float, float], tuple[float, float]]  # W (at its worst end), r_P range, r_F range


@dataclass(frozen=True)
class CorrectedEvidence:
    """A judged case's runs and what its judge's error was measured from: the exact gate's input."""

    passes: int  # runs the judge passed (every check passed)
    judge_fails: int  # runs the judge failed (every rule check passed)
    rule_fails: int  # runs a rule check failed: fails whatever the judge says
    basis: JudgeBasis

    @property
    def graded(self) -> int:
        return self.passes + self.judge_fails

    @property
    def decided(self) -> int:
        return self.passes + self.judge_fails + self.rule_fails


def _div(a: float, b: float) -> float:
    return a / b if b > 1e-15 else math.nan


def _rates(w: float, r_pass: float, r_fail: float) -> tuple[float, float]:
    """(q0, q1) of a judge whose PASS share is w, with person-PASS shares r_pass, r_fail per verdict."""
    pp, pf = w * r_pass, (1 - w) * r_fail
    fp, ff = w * (1 - r_pass), (1 - w) * (1 - r_fail)
    return _div(ff, fp + ff), _div(pp, pp + pf)


@lru_cache(maxsize=4096)
def _box(basis: JudgeBasis, gamma: float, red: bool) -> Box:
    """The 1 - gamma box (Bonferroni over W, r_P, r_F with W_SHARE of gamma on W): W at the end that
    is worst for the side (π grows with W: low for red, high for green); r_P and r_F both ways (π is
    not monotone in them everywhere), most of their share on the end that is worst where it is
    (π falls as either grows, for a judge better than chance: the high end for red, the low for green)."""
    on_w, on_r = W_SHARE * gamma, (1 - W_SHARE) * gamma / 2
    w = cp_lower(basis.w.x, basis.w.n, on_w) if red else cp_upper(basis.w.x, basis.w.n, on_w)
    worse, other = (1 - FAR_SHARE) * on_r, FAR_SHARE * on_r

    def both(s: Share) -> tuple[float, float]:
        return (cp_lower(s.x, s.n, other), cp_upper(s.x, s.n, worse)) if red else \
            (cp_lower(s.x, s.n, worse), cp_upper(s.x, s.n, other))
    return w, both(basis.r_pass), both(basis.r_fail)


def _run_rates(box_point: tuple[float, float, float], items: int) -> tuple[float, float, float] | None:
    """(P(PASS | true pass), P(PASS | true fail) low, P(PASS | true fail) high) for one run."""
    q0, q1 = _rates(*box_point)
    if math.isnan(q0) or math.isnan(q1):
        return None
    miss = 1 - q0
    return q1 ** items, min(miss ** items, miss * q1 ** (items - 1)), miss


def _extreme(fn: Callable[[float, float], float], rp: tuple[float, float], rf: tuple[float, float],
             maximize: bool) -> float:
    """The max (or min) of fn over the r_P x r_F rectangle: a 9 x 9 grid, then a pattern search
    from its best point with halving steps (fn is smooth; its extremes are on the edges or near them)."""
    sign = 1.0 if maximize else -1.0
    best, at = -math.inf, (rp[0], rf[0])
    for i in range(9):
        for j in range(9):
            a, b = rp[0] + (rp[1] - rp[0]) * i / 8, rf[0] + (rf[1] - rf[0]) * j / 8
            v = fn(a, b)
            if not math.isnan(v) and sign * v > best:
                best, at = sign * v, (a, b)
    step_a, step_b = (rp[1] - rp[0]) / 8, (rf[1] - rf[0]) / 8
    while step_a > 1e-7 or step_b > 1e-7:
        moved = False
        for da, db in ((step_a, 0), (-step_a, 0), (0, step_b), (0, -step_b)):
            a = min(rp[1], max(rp[0], at[0] + da))
            b = min(rf[1], max(rf[0], at[1] + db))
            v = fn(a, b)
            if not math.isnan(v) and sign * v > best:
                best, at, moved = sign * v, (a, b), True
        if not moved:
            step_a, step_b = step_a / 2, step_b / 2
    return sign * best if best > -math.inf else math.nan


@lru_cache(maxsize=65536)
def _worst_pass_share(basis: JudgeBasis, t: float, gamma: float, red: bool) -> float:
    """π_min(t) (red: the smallest judge-PASS share a true rate of at least t gives, over the box)
    or π_max(t) (green: the largest a true rate below t gives)."""
    w, rp, rf = _box(basis, gamma, red)

    def share(a: float, b: float) -> float:
        rates = _run_rates((w, a, b), basis.items)
        if rates is None:
            return math.nan
        hit, miss_lo, miss_hi = rates
        if red:  # H0: r in [t, 1]; π is linear in r
            return min(t * hit + (1 - t) * miss_lo, hit)
        return max(t * hit + (1 - t) * miss_hi, miss_hi)  # H0: r in [0, t)
    value = _extreme(share, rp, rf, maximize=not red)
    return (0.0 if red else 1.0) if math.isnan(value) else value


def _rule_bound(ev: CorrectedEvidence, gamma: float) -> float:
    """f_lo: the smallest rule-fail share not ruled out (0 when no run failed a rule check)."""
    return cp_lower(ev.rule_fails, ev.decided, gamma) if ev.rule_fails else 0.0


def p_above(ev: CorrectedEvidence, threshold: float, level: float) -> float:
    """The exact p-value for "the case's true rate is at least `threshold`" (small: it meets it)."""
    gamma = NUISANCE_SHARE * level
    pi = _worst_pass_share(ev.basis, threshold, gamma, red=False)
    return min(1.0, binom_ge(ev.passes, ev.decided, pi) + gamma)


def p_below(ev: CorrectedEvidence, threshold: float, level: float, family: int = 1) -> float:
    """The exact p-value for "the case's true rate is below `threshold`" (small: it is below), for a
    suite of `family` cases tested with Holm at `level`."""
    gamma = NUISANCE_SHARE * level / max(1, family)
    f_lo = _rule_bound(ev, RULE_SHARE * gamma)
    inner = threshold / (1 - f_lo) if f_lo < 1 else math.inf
    if inner > 1:  # the rule checks alone show the rate is below the threshold
        return gamma
    pi = _worst_pass_share(ev.basis, inner, (1 - RULE_SHARE) * gamma, red=True)
    return min(1.0, binom_le(ev.passes, ev.graded, pi) + gamma)


def decision_interval(ev: CorrectedEvidence, alpha: float) -> tuple[float, float]:
    """(lo, hi): the thresholds the case is shown above (t < lo) or below (t > hi) by the two tests at
    `alpha` each (a 1 - 2·alpha interval; before Holm on the red side)."""
    gamma = NUISANCE_SHARE * alpha
    return _lower_end(ev, alpha, gamma), _upper_end(ev, alpha, gamma)


def _lower_end(ev: CorrectedEvidence, alpha: float, gamma: float) -> float:
    if ev.passes == 0:
        return 0.0
    target = cp_lower(ev.passes, ev.decided, alpha - gamma)  # P(X >= passes | π) = alpha - gamma
    w, rp, rf = _box(ev.basis, gamma, red=False)

    def edge(a: float, b: float) -> float:  # the t at which π_max(t) reaches target at this point
        rates = _run_rates((w, a, b), ev.basis.items)
        if rates is None:
            return 0.0
        hit, _, miss = rates
        if miss >= target:
            return 0.0
        return (target - miss) / (hit - miss) if hit > miss else math.inf
    return min(1.0, max(0.0, _extreme(edge, rp, rf, maximize=False)))


def _upper_end(ev: CorrectedEvidence, alpha: float, gamma: float) -> float:
    f_lo = _rule_bound(ev, RULE_SHARE * gamma)
    if ev.graded == 0 or ev.passes >= ev.graded:
        return 1 - f_lo
    target = cp_upper(ev.passes, ev.graded, alpha - gamma)  # P(X <= passes | π) = alpha - gamma
    w, rp, rf = _box(ev.basis, (1 - RULE_SHARE) * gamma, red=True)

    def edge(a: float, b: float) -> float:  # the θ' above which π_min(θ') passes target here
        rates = _run_rates((w, a, b), ev.basis.items)
        if rates is None:
            return 1.0
        hit, miss, _ = rates
        if hit <= target:
            return 1.0
        return (target - miss) / (hit - miss) if hit > miss else -math.inf
    return (1 - f_lo) * min(1.0, max(0.0, _extreme(edge, rp, rf, maximize=True)))


def point_rate(ev: CorrectedEvidence) -> float:
    """The Rogan–Gladen rate at the calibration's point estimate (point mode's rate): s·θ, s the share
    of runs the rule checks passed, θ = (p + q0 − 1)/(q0 + q1 − 1) clipped, p the judge's PASS share."""
    if not ev.graded:
        return 0.0
    q0, q1 = _rates(ev.basis.w.value, ev.basis.r_pass.value, ev.basis.r_fail.value)
    q1 = q1 ** ev.basis.items
    den = q0 + q1 - 1
    if math.isnan(den) or den <= 1e-9:
        return ev.passes / ev.decided
    theta = min(1.0, max(0.0, (ev.passes / ev.graded + q0 - 1) / den))
    return theta * ev.graded / ev.decided


def _point_basis(basis: JudgeBasis) -> JudgeBasis:
    """The calibration taken as exact (a million labels with the same shares): what the runs alone can show."""
    def exact(s: Share) -> Share:
        return Share(s.value * 1e6, 1e6) if s.n > 0 else s
    return JudgeBasis(exact(basis.w), exact(basis.r_pass), exact(basis.r_fail), basis.items)


def decides(ev: CorrectedEvidence, threshold: float, alpha: float) -> bool:
    lo, hi = decision_interval(ev, alpha)
    return lo > threshold or hi < threshold


def labels_to_decide(ev: CorrectedEvidence, threshold: float, alpha: float) -> int | None:
    """About how many more labels (the same shares, spread as the labels so far) would decide the case
    with these runs; None when it is decided already, or when labels alone cannot (the runs' own noise
    spans the threshold: more runs are needed), or past MAX_LABELS."""
    if decides(ev, threshold, alpha):
        return None
    exact = CorrectedEvidence(ev.passes, ev.judge_fails, ev.rule_fails, _point_basis(ev.basis))
    if not decides(exact, threshold, alpha):
        return None
    labels = ev.basis.r_pass.n + ev.basis.r_fail.n
    if labels <= 0:
        return None

    def enough(more: int) -> bool:
        scaled = CorrectedEvidence(ev.passes, ev.judge_fails, ev.rule_fails,
                                   ev.basis.with_more_labels((labels + more) / labels))
        return decides(scaled, threshold, alpha)
    return first_true(enough, MAX_LABELS)


def judge_limited(ev: CorrectedEvidence, threshold: float, alpha: float) -> bool:
    """Undecided, but decided were the judge's error known exactly: more labels, not more runs, decide it."""
    exact = CorrectedEvidence(ev.passes, ev.judge_fails, ev.rule_fails, _point_basis(ev.basis))
    return not decides(ev, threshold, alpha) and decides(exact, threshold, alpha)


@dataclass(frozen=True)
class Unbounded:
    """Why a case's interval is the whole range 0–100%: each end, the judge's error the box allows that
    accounts for the runs on its own — `false_pass`, the largest share of truly failing runs the judge
    could pass (every judge PASS could be one; None: no run passed, the runs alone leave 0), and `missed`,
    the largest share of truly passing runs it could fail (every judge FAIL could be one; None: every run
    passed) — and what the runs alone bound: the interval were the judge's error known exactly (`exact`),
    and about how many more labels, in the same shares, would bound both ends (`labels`; None when
    labels alone cannot, or past MAX_LABELS)."""

    false_pass: float | None
    missed: float | None
    exact: tuple[float, float]
    labels: int | None


def _bounded(lo: float, hi: float) -> bool:
    return lo > 0 and hi < 1


def why_unbounded(ev: CorrectedEvidence, alpha: float) -> Unbounded | None:
    """What makes the gate's interval 0–100% (decision_interval), None when it is not."""
    lo, hi = decision_interval(ev, alpha)
    if lo > 0 or hi < 1:
        return None
    gamma = NUISANCE_SHARE * alpha
    false_pass = missed = None
    if ev.passes:  # the green box's largest 1 - q0: the lower end is 0 where it reaches the runs' bound
        w, rp, rf = _box(ev.basis, gamma, red=False)
        false_pass = _extreme(lambda a, b: _miss(w, a, b, ev.basis.items), rp, rf, maximize=True)
    if ev.passes < ev.graded:  # the red box's smallest q1^items: the upper end is 1 where it falls to theirs
        w, rp, rf = _box(ev.basis, (1 - RULE_SHARE) * gamma, red=True)
        missed = 1 - _extreme(lambda a, b: _hit(w, a, b, ev.basis.items), rp, rf, maximize=False)
    exact = decision_interval(CorrectedEvidence(ev.passes, ev.judge_fails, ev.rule_fails, _point_basis(ev.basis)),
                              alpha)
    labels = None
    have = ev.basis.r_pass.n + ev.basis.r_fail.n
    if _bounded(*exact) and have > 0:
        def enough(more: int) -> bool:
            scaled = CorrectedEvidence(ev.passes, ev.judge_fails, ev.rule_fails,
                                       ev.basis.with_more_labels((have + more) / have))
            return _bounded(*decision_interval(scaled, alpha))
        labels = first_true(enough, MAX_LABELS)
    return Unbounded(false_pass, missed, exact, labels)


def _miss(w: float, a: float, b: float, items: int) -> float:
    rates = _run_rates((w, a, b), items)
    return 1.0 if rates is None else rates[2]


def _hit(w: float, a: float, b: float, items: int) -> float:
    rates = _run_rates((w, a, b), items)
    return 0.0 if rates is None else rates[0]
