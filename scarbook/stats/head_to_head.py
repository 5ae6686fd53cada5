"""Candidates against a baseline in one session, case by case and over the suite (issue 36).

Each row is one case (or the suite) and one candidate agent against the baseline agent, both run in
the same session on the same cases. Its numbers:

  - both rates (passes / judged) and the difference d = candidate - baseline with its 95% interval,
    Newcombe's hybrid score interval (method 10 of Newcombe 1998, stats/compare.py);
  - p_diff, the two-sided Fisher exact p-value of "the two rates differ";
  - p_same, the two one-sided tests (TOST) of "|d| < margin": the larger of the p-values of
    "d > -margin" and "d < margin";
  - p_worse, the one-sided p-value of "d < -margin" (the CI gate's question: worse by more than the
    margin), and p_not_worse of "d > -margin".

The one-sided tests against a margin are the Newcombe interval read backwards: the p-value of
"d > d0" is the one-sided level at which the interval's lower end reaches d0, so a call agrees with
the interval printed beside it at every level.

Calls, with the chance of any wrong one held at alpha across every case and candidate (Holm 1979):
  - *better* / *worse*: the Holm-adjusted p_diff is under alpha and the 95% interval is above / below 0
    (Holm over Tarone's family, as `scarbook diff`: a case whose margins could never reach
    significance, 10/10 against 10/10, spends no alpha; each suite row is in the family too);
  - *same* (within ±margin): the Holm-adjusted p_same is under alpha;
  - *undecided* otherwise; *no verdict* when a side has too few judged runs (stats/decisions.py's
    min_verdicts) or any unjudged run.
The gate's margin call: *inferior* when the row is called worse and its Holm-adjusted p_worse is under
alpha too (a red is always a "worse" the exact test showed, and each of its two tests is corrected like
the single-agent gate's below), *non-inferior* when p_not_worse is under alpha (green needs every row:
the intersection-union principle, no correction on that side), else *undecided*. Up to 20 runs a side
p_not_worse is also the exact unconditional test's (stats/margin_exact.py), whichever is larger: the
interval's own test called 0/1 against 1/1 non-inferior, wrong 22.6% of the time at the boundary.

The suite row: the mean of the per-case differences with a case-clustered standard error (Miller 2024,
"Adding Error Bars to Evals": each case's own sampling variance counted, stats/compare.mean_diff_se),
and Student's t with (cases - 1) degrees of freedom for its interval and tests (stats/student.py):
suites of ten cases are common, and 1.96 would claim more than ten cases show. A suite of one case is
that case: its row is the case's row.

The same judge grades every agent, so a judge whose measured error is the same on both agents'
artifacts moves both PASS shares towards chance by the same factor (q0 + q1 - 1): the sign of a
difference in judged PASS shares is the sign of the difference in true rates. The calls are made on
the judged counts; the reports print the judge-corrected rates beside them when a calibration exists.

Pure numbers: no I/O, no scipy (the tests check against it). `benchmarks/compare_sim.py` measures the
promises: the family-wise rate of a wrong better/worse under A/A, power, the equivalence-call rate,
and what `--runs auto` (looks, below) saves.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

from scarbook.models import MarginCall, RunStatus, Versus
from scarbook.stats.compare import (
    Counts,
    diff_variance,
    fisher_exact_p,
    holm_adjust,
    mean_diff_se,
    min_fisher_p,
    newcombe_interval,
    tarone_family,
)
from scarbook.stats.decisions import min_verdicts_for
from scarbook.stats.margin_exact import EXACT_UP_TO, exact_p_above
from scarbook.stats.rates import Z95
from scarbook.stats.student import t_quantile, t_two_sided_p, t_upper_p
from scarbook.text import plural

ALPHA = 0.05
MARGIN = 0.05
COMPARE_FIRST_LOOK = 10  # --runs auto with several agents: the first look, in blocks
SUITE = ""  # a row's case_id when it is the suite's

_NORMAL = NormalDist()


@functools.lru_cache(maxsize=65536)  # pure in its counts: a suite, a simulation, asks the same again
def p_above(c1: int, n1: int, c2: int, n2: int, d0: float) -> float:
    """One-sided p-value of "p2 - p1 > d0" (H0: p2 - p1 <= d0): the level a at which the lower end of
    Newcombe's (1 - 2a) interval reaches d0, found by bisection on z (the end falls as z grows).
    Above 0.5 when the observed difference is at or below d0 (1 minus the mirror test's p)."""
    d = c2 / n2 - c1 / n1
    if d <= d0:
        return 1.0 - p_below(c1, n1, c2, n2, d0) if d < d0 else 0.5
    return _invert(lambda z: newcombe_interval(c1, n1, c2, n2, z)[0] > d0)


@functools.lru_cache(maxsize=65536)
def p_below(c1: int, n1: int, c2: int, n2: int, d0: float) -> float:
    """One-sided p-value of "p2 - p1 < d0" (H0: p2 - p1 >= d0), the mirror of `p_above`."""
    d = c2 / n2 - c1 / n1
    if d >= d0:
        return 1.0 - p_above(c1, n1, c2, n2, d0) if d > d0 else 0.5
    return _invert(lambda z: newcombe_interval(c1, n1, c2, n2, z)[1] < d0)


def p_not_worse(c1: int, n1: int, c2: int, n2: int, margin: float) -> float:
    """One-sided p-value of "p2 - p1 > -margin" (the non-inferior call's): Newcombe's, and up to EXACT_UP_TO
    runs a side the exact unconditional test's if larger — Newcombe's alone claims too much at small n
    (stats/margin_exact.py)."""
    p = p_above(c1, n1, c2, n2, -margin)
    return max(p, exact_p_above(p_above, c1, n1, c2, n2, -margin)) if max(n1, n2) <= EXACT_UP_TO else p


def _invert(excludes) -> float:
    """The upper-tail normal probability at the largest z whose interval still excludes d0."""
    lo, hi = 0.0, 40.0
    if excludes(hi):
        return 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excludes(mid) else (lo, mid)
    return 1.0 - _NORMAL.cdf(lo)


@dataclass(frozen=True)
class VersusRow:
    """One case (case_id) or the suite (case_id == SUITE) and one candidate against the baseline."""

    case_id: str
    candidate: str
    baseline: Counts | None = None  # per case: each side's runs (None on the suite row)
    other: Counts | None = None
    diff: float | None = None  # candidate - baseline (the suite: the mean of the per-case differences)
    lo: float | None = None  # 95% interval for diff
    hi: float | None = None
    p_diff: float | None = None  # two-sided: the rates differ
    p_same: float | None = None  # TOST: |diff| < margin
    p_worse: float | None = None  # one-sided: diff < -margin
    p_not_worse: float | None = None  # one-sided: diff > -margin
    p_diff_holm: float | None = None
    p_same_holm: float | None = None
    p_worse_holm: float | None = None
    call: Versus = Versus.NO_VERDICT
    margin_call: MarginCall = MarginCall.NO_VERDICT
    why: str = ""  # no verdict: why not; undecided: what the interval still allows
    min_p: float = 0.0  # the smallest p_diff these margins could reach (Tarone's family)
    cases: int = 0  # the suite row: cases with a rate on both sides
    se: float | None = None  # the suite row: the case-clustered standard error of the mean difference

    @property
    def is_suite(self) -> bool:
        return self.case_id == SUITE

    @property
    def decided(self) -> bool:
        """A call (better, worse or same) was reached: --runs auto spends no more runs on it."""
        return self.call in (Versus.BETTER, Versus.WORSE, Versus.SAME)

    def to_dict(self) -> dict:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 6)
        out: dict = {"candidate": self.candidate, "diff": r(self.diff), "ci": [r(self.lo), r(self.hi)],
                     "p_diff": r(self.p_diff), "p_diff_holm": r(self.p_diff_holm), "p_same": r(self.p_same),
                     "p_same_holm": r(self.p_same_holm), "p_worse": r(self.p_worse),
                     "p_worse_holm": r(self.p_worse_holm), "p_not_worse": r(self.p_not_worse),
                     "decision": str(self.call), "margin_decision": str(self.margin_call), "why": self.why}
        if self.is_suite:
            out.update(cases=self.cases, se=r(self.se))
        else:
            out["case"] = self.case_id
        return out


@dataclass(frozen=True)
class AgentsComparison:
    """Every row of one session's comparison: per case per candidate, then one suite row per candidate."""

    baseline: str
    candidates: tuple[str, ...]
    margin: float
    alpha: float
    rows: list[VersusRow]  # per case, in case order, each case's candidates in order
    suites: list[VersusRow]  # one per candidate, in order
    family: int = 0  # rows the better/worse Holm correction covered (Tarone's testable ones)

    def row(self, case_id: str, candidate: str) -> VersusRow | None:
        for row in (*self.rows, *self.suites):
            if row.case_id == case_id and row.candidate == candidate:
                return row
        return None

    def suite(self, candidate: str) -> VersusRow | None:
        return self.row(SUITE, candidate)

    @property
    def inferior(self) -> list[VersusRow]:
        """Rows shown worse than the baseline by more than the margin: the gate goes red on any."""
        return [r for r in (*self.rows, *self.suites) if r.margin_call == MarginCall.INFERIOR]

    @property
    def open(self) -> list[VersusRow]:
        """Case rows the gate could not decide either way (undecided or no verdict)."""
        return [r for r in self.rows if r.margin_call in (MarginCall.UNDECIDED, MarginCall.NO_VERDICT)]


def _no_verdict(base: Counts, other: Counts, min_verdicts: int | None) -> str | None:
    for name, side in (("the baseline", base), ("the candidate", other)):
        if side.unjudged:
            return f"{side.unjudged} of {name}'s runs went unjudged (judge checks skipped)"
        total = side.judged + side.errors + side.unjudged
        needed = min_verdicts_for(total, min_verdicts)
        if side.judged < needed:
            errored = f" ({plural(side.errors, 'error')})" if side.errors else ""
            return (f"only {side.judged} of {name}'s {plural(total, 'run')} reached a verdict{errored}; a comparison needs "
                    f"at least {needed} on each side (errors cannot count as evidence)")
    return None


def case_row(case_id: str, candidate: str, base: Counts, other: Counts, margin: float,
             min_verdicts: int | None = None) -> VersusRow:
    """One case's raw numbers (no call yet: `compare_agents` makes the calls over the family)."""
    why = _no_verdict(base, other, min_verdicts)
    if why is not None:
        return VersusRow(case_id, candidate, base, other, why=why)
    diff, lo, hi, p_diff, p_same, p_worse, p_not_worse, min_p = _numbers(
        base.passes, base.judged, other.passes, other.judged, margin)
    return VersusRow(case_id, candidate, base, other, diff, lo, hi, p_diff=p_diff, p_same=p_same, p_worse=p_worse,
                     p_not_worse=p_not_worse, min_p=min_p)


@functools.lru_cache(maxsize=65536)
def _numbers(c1: int, n1: int, c2: int, n2: int, margin: float) -> tuple[float, ...]:
    lo, hi = newcombe_interval(c1, n1, c2, n2)
    not_worse = p_not_worse(c1, n1, c2, n2, margin)
    return (c2 / n2 - c1 / n1, lo, hi, fisher_exact_p(c1, n1, c2, n2),
            max(not_worse, p_below(c1, n1, c2, n2, margin)), p_below(c1, n1, c2, n2, -margin), not_worse,
            min_fisher_p(n1, n2, c1 + c2))


def suite_row(candidate: str, rows: Sequence[VersusRow], margin: float) -> VersusRow:
    """The mean per-case difference of one candidate over the cases with a rate on both sides, with a
    case-clustered standard error and t with (cases - 1) degrees of freedom (one case: the normal)."""
    diffs, variances = [], []
    for r in rows:
        if r.diff is not None and r.baseline is not None and r.other is not None:
            diffs.append(r.diff)
            variances.append(diff_variance(r.baseline.passes, r.baseline.judged, r.other.passes, r.other.judged))
    if not diffs:
        return VersusRow(SUITE, candidate, why="no case has a rate on both sides")
    m = len(diffs)
    mean, se = sum(diffs) / m, mean_diff_se(diffs, variances)
    if m == 1:  # the suite is its one case: that case's row decides (a normal test on 3 runs a side would not hold)
        one = next(r for r in rows if r.diff is not None)
        return VersusRow(SUITE, candidate, diff=one.diff, lo=one.lo, hi=one.hi, cases=1, se=se,
                         why="one case: its own row decides")
    df = m - 1

    def upper(t: float) -> float:  # P(T >= t)
        return t_upper_p(t, df) if df else 1 - _NORMAL.cdf(t)

    half = (t_quantile(0.975, df) if df else Z95) * se
    p_diff = t_two_sided_p(mean / se, df) if df else 2 * (1 - _NORMAL.cdf(abs(mean) / se))
    not_worse = upper((mean + margin) / se)
    return VersusRow(SUITE, candidate, diff=mean, lo=max(-1.0, mean - half), hi=min(1.0, mean + half),
                     p_diff=min(1.0, p_diff), p_same=max(not_worse, upper((margin - mean) / se)),
                     p_worse=upper(-(mean + margin) / se), p_not_worse=not_worse, cases=m, se=se)


def _holm(ps: Sequence[float | None], done: Sequence[bool]) -> list[float | None]:
    """Holm over the rows with a p-value; a row already decided at an earlier look counts as p = 0
    (it was rejected then; given no false call before, it is a false null), so it spends no alpha."""
    idx = [i for i, p in enumerate(ps) if p is not None]
    adjusted = holm_adjust([0.0 if done[i] else float(ps[i] or 0.0) for i in idx])
    out: list[float | None] = [None] * len(ps)
    for i, a in zip(idx, adjusted, strict=True):
        out[i] = a
    return out


def _call(row: VersusRow, alpha: float, p_diff_holm: float | None, p_same_holm: float | None,
          p_worse_holm: float | None) -> VersusRow:
    """The row with its Holm-adjusted p-values and the calls they make."""
    if row.p_diff is None or row.lo is None or row.hi is None:
        return replace(row, call=Versus.NO_VERDICT, margin_call=MarginCall.NO_VERDICT)
    significant = p_diff_holm is not None and p_diff_holm < alpha
    call = Versus.UNDECIDED
    if significant and row.lo > 0:
        call = Versus.BETTER
    elif significant and row.hi < 0:
        call = Versus.WORSE
    elif p_same_holm is not None and p_same_holm < alpha:
        call = Versus.SAME
    margin_call = MarginCall.UNDECIDED
    if call == Versus.WORSE and p_worse_holm is not None and p_worse_holm < alpha:
        margin_call = MarginCall.INFERIOR
    elif row.p_not_worse is not None and row.p_not_worse < alpha:
        margin_call = MarginCall.NON_INFERIOR
    why = ""
    if call == Versus.UNDECIDED:
        why = "the interval of the difference still holds 0" if row.lo <= 0 <= row.hi else \
            "the difference is not yet significant after the correction for the family"
    return replace(row, p_diff_holm=p_diff_holm, p_same_holm=p_same_holm, p_worse_holm=p_worse_holm, call=call,
                   margin_call=margin_call, why=why)


def compare_agents(counts: Mapping[str, Mapping[str, Counts]], baseline: str, candidates: Sequence[str], *,
                   margin: float = MARGIN, alpha: float = ALPHA, min_verdicts: int | None = None,
                   decided: Mapping[tuple[str, str], VersusRow] | None = None) -> AgentsComparison:
    """Every case's (and the suite's) calls for each candidate. `counts[case][agent]`: that agent's runs
    of the case. `decided`: rows decided at an earlier look of --runs auto, kept as they were."""
    kept = decided or {}
    raw = [case_row(cid, cand, by_agent.get(baseline, Counts(0, 0)), by_agent.get(cand, Counts(0, 0)),
                    margin, min_verdicts)
           for cid, by_agent in counts.items() for cand in candidates]
    rows = [kept.get((r.case_id, r.candidate), r) for r in raw]
    suites = [suite_row(cand, [r for r in raw if r.candidate == cand], margin) for cand in candidates]
    everything = rows + suites
    was = [(r.case_id, r.candidate) in kept for r in everything]
    # Tarone's family over the better/worse tests: the suite rows (continuous: min p 0) are always in it
    tested = [i for i, r in enumerate(everything) if r.p_diff is not None]
    family = {tested[j] for j in tarone_family([everything[i].min_p for i in tested], alpha)}
    diff_ps = [r.p_diff if i in family else None for i, r in enumerate(everything)]
    holm_diff = _holm(diff_ps, [w and r.call in (Versus.BETTER, Versus.WORSE) for w, r in zip(was, everything, strict=True)])
    holm_same = _holm([r.p_same for r in everything], [w and r.call == Versus.SAME for w, r in zip(was, everything, strict=True)])
    holm_worse = _holm([r.p_worse for r in everything],
                       [w and r.margin_call == MarginCall.INFERIOR for w, r in zip(was, everything, strict=True)])
    out = []
    for i, r in enumerate(everything):
        if was[i]:
            out.append(r)
            continue
        outside = None if r.p_diff is None else 1.0  # outside Tarone's family: it could never be called
        out.append(_call(r, alpha, holm_diff[i] if i in family else outside, holm_same[i], holm_worse[i]))
    cases, suites = out[:len(rows)], out[len(rows):]
    for i, suite in enumerate(suites):
        if suite.cases == 1 and suite.p_diff is None:  # one case: the suite row says what that case's row says
            one = next(r for r in cases if r.candidate == suite.candidate and r.diff is not None)
            suites[i] = replace(one, case_id=SUITE, baseline=None, other=None, cases=1, se=suite.se, why=suite.why)
    return AgentsComparison(baseline, tuple(candidates), margin, alpha, cases, suites, len(family))


# ---- --runs auto: looks at N, 2N, 4N, ... up to the cap ------------------------------------------
#
# Each look decides every row at its share of alpha: look l of sizes N_1 < ... < N_L spends
# alpha * N_l / (N_1 + ... + N_L), most where most runs are (the shares sum to alpha). A row decided at a
# look keeps its call, and its case gets no more runs once every candidate's row of it is decided; each
# look's Holm counts the rows decided before as rejected. Any wrong call needs some case's test at some
# look to reject at its share, so over the looks the family-wise rate is at most alpha (the union
# bound, as the single-agent `undecided: more`). The suite rows are read at the last look.


def look_alphas(looks: Sequence[int], alpha: float) -> list[float]:
    """Each look's share of alpha, in proportion to its size."""
    total = sum(looks)
    return [alpha * size / total for size in looks]


def counts_of(statuses: Sequence[str]) -> Counts:
    """A side's Counts from its runs' statuses (launch order); a word history does not know is an error."""
    runs = list(statuses)
    passes, fails, unjudged = runs.count(RunStatus.PASS), runs.count(RunStatus.FAIL), runs.count(RunStatus.UNJUDGED)
    return Counts(passes, fails, len(runs) - passes - fails - unjudged, unjudged)


Kept = dict[tuple[str, str], VersusRow]


def look_once(statuses: Mapping[str, Mapping[str, Sequence[str]]], baseline: str, candidates: Sequence[str],
              size: int, level: float, kept: Kept, *, margin: float = MARGIN,
              min_verdicts: int | None = None) -> AgentsComparison:
    """One look at `size` blocks, at `level`: the rows decided before it stay as they were, the rows it
    decides join `kept` (the runner's looks and the simulation's go through here)."""
    counts = {cid: {a: counts_of(list(s)[:size]) for a, s in by.items()} for cid, by in statuses.items()}
    result = compare_agents(counts, baseline, candidates, margin=margin, alpha=level, min_verdicts=min_verdicts,
                            decided=kept)
    for row in result.rows:
        if row.decided:
            kept.setdefault((row.case_id, row.candidate), row)
    return result


def compare_in_looks(statuses: Mapping[str, Mapping[str, Sequence[str]]], baseline: str, candidates: Sequence[str],
                     looks: Sequence[int], *, plan: Sequence[int] | None = None, margin: float = MARGIN,
                     alpha: float = ALPHA, min_verdicts: int | None = None) -> AgentsComparison:
    """The comparison after the looks so far. `statuses[case][agent]`: that agent's run statuses of the
    case in k order (block k holds one run of each agent). `plan`: every look the session may make
    (its alpha shares); by default the looks made."""
    sizes = list(looks) or [max((len(s) for by in statuses.values() for s in by.values()), default=0)]
    kept: Kept = {}
    last: AgentsComparison | None = None
    for size, level in zip(sizes, look_alphas(list(plan or sizes), alpha), strict=False):
        last = look_once(statuses, baseline, candidates, size, level, kept, margin=margin, min_verdicts=min_verdicts)
    assert last is not None
    return replace(last, alpha=alpha)


@dataclass
class CompareExtender:
    """For the runner under --runs auto: given every case's statuses per agent so far, the number of
    blocks each case still open should be brought to next ({} once the last look is done)."""

    baseline: str
    candidates: tuple[str, ...]
    looks: tuple[int, ...]
    margin: float = MARGIN
    alpha: float = ALPHA
    min_verdicts: int | None = None
    last: AgentsComparison | None = None  # the comparison at the look just made (its decided rows are final)

    def __call__(self, statuses: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, int]:
        have = max((len(s) for by in statuses.values() for s in by.values()), default=0)
        done = [size for size in self.looks if size <= have]
        if not done or len(done) >= len(self.looks):
            return {}
        result = compare_in_looks(statuses, self.baseline, self.candidates, done, plan=self.looks,
                                  margin=self.margin, alpha=self.alpha, min_verdicts=self.min_verdicts)
        self.last = result
        open_cases = {r.case_id for r in result.rows if not r.decided}
        return {cid: self.looks[len(done)] for cid in statuses if cid in open_cases}


def auto_looks(first: int, cap: int) -> tuple[int, ...]:
    """The blocks per case at which --runs auto looks: first, 2 first, 4 first, ..., cap."""
    looks = [max(1, min(first, cap))]
    while looks[-1] < cap:
        looks.append(min(cap, looks[-1] * 2))
    return tuple(looks)
