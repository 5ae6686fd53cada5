"""Compare two sessions (before / after a prompt edit or model switch), case by case.

Per case: both pass rates, the difference after - before with a 95% interval (Newcombe's hybrid
score interval, "method 10" of Newcombe 1998), a two-sided Fisher exact p-value, a plain verdict,
and — when the case is inconclusive — how many runs per side would detect a difference of the
observed size. Per-case verdicts across many cases are Holm-corrected (family-wise error at most
5%). Across cases: the mean per-case difference with a standard error that counts both the spread
between cases and each case's own sampling variance (Miller 2024, "Adding Error Bars to Evals",
the paired difference with resampled questions; see docs/statistics.md).

Errors stay out of every rate: rate = passes / (passes + fails); the error counts ride along so
the table can show them. Pure Python: no scipy at runtime (the tests check the numbers against it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal, NamedTuple, Protocol

from scarbook.models import RunStatus, SessionInfo
from scarbook.stats.rates import Z95, count_text, rate_of, wilson
from scarbook.stats.student import t_quantile
from scarbook.text import pct, plural

Verdict = Literal["improved", "regressed", "no detectable change"]
ALPHA = 0.05


class Counts(NamedTuple):
    """One case in one session: how its runs ended. `unjudged` runs (every verdict-bearing check
    skipped, e.g. --skip-judge) reached no verdict: like errors, they never enter the rate."""

    passes: int
    fails: int
    errors: int = 0
    unjudged: int = 0

    @property
    def judged(self) -> int:
        """Runs that reached a verdict: the rate's denominator (errors never count)."""
        return self.passes + self.fails

    @property
    def rate(self) -> float | None:
        """None without a judged run, or with any unjudged one (its passes could only be unjudged,
        so the fails alone would read as 0%, as in CaseStats)."""
        return rate_of(self.passes, self.fails, self.unjudged)


class Outcome(Protocol):
    """What counting needs of a run: a RunRecord, or history's lighter RunOutcome."""

    @property
    def case_id(self) -> str: ...

    @property
    def status(self) -> str: ...


def counts_by_case(runs: Iterable[Outcome]) -> dict[str, Counts]:
    """Tally a session's runs per case, the input `compare_sessions` takes."""
    tally: dict[str, list[int]] = {}
    for run in runs:
        slot = tally.setdefault(run.case_id, [0, 0, 0, 0])
        slot[_SLOT[run.status]] += 1
    return {case: Counts(*t) for case, t in sorted(tally.items())}


_SLOT: dict[str, int] = {RunStatus.PASS: 0, RunStatus.FAIL: 1, RunStatus.ERROR: 2, RunStatus.UNJUDGED: 3}


def partial_mismatch(a: SessionInfo, b: SessionInfo) -> str | None:
    """Why two sessions' rates are not comparable because only one graded its judge checks, or None.

    A --skip-judge (partial) session's rate counts rule checks only; a judged one's counts the
    judge too, so their difference would measure the judge, not the agent."""
    if a.partial and b.partial:
        return (f"sessions {a.id} and {b.id} both skipped their judge checks (--skip-judge: partial): their runs "
                "that passed the rule checks are unjudged, so neither has a pass rate to compare; compare two "
                "judged sessions (re-run without --skip-judge)")
    if a.partial == b.partial:
        return None
    skipped, judged = (a, b) if a.partial else (b, a)
    return (f"session {skipped.id} skipped its judge checks (--skip-judge: partial) and session {judged.id} "
            "graded them — their rates measure different checks; compare two judged sessions "
            "(re-run without --skip-judge), or pass --force")


def changed_cases(a: SessionInfo, b: SessionInfo) -> list[str]:
    """Cases both sessions ran whose checks/rubric changed in between (by case digest): comparing
    their rates would compare two different tests. A missing digest counts as unchanged."""
    shared = sorted(set(a.case_digests) & set(b.case_digests))
    return [c for c in shared if a.case_digests[c] and b.case_digests[c] and a.case_digests[c] != b.case_digests[c]]


def newcombe_interval(c1: int, n1: int, c2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Interval for p2 - p1 (after minus before), Newcombe 1998 method 10 (hybrid Wilson score).

    With (l1, u1), (l2, u2) the Wilson intervals of p1 = c1/n1 and p2 = c2/n2 and d = p2 - p1:
        lo = d - sqrt((p2 - l2)^2 + (u1 - p1)^2)
        hi = d + sqrt((u2 - p2)^2 + (p1 - l1)^2)
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError("newcombe_interval needs at least one judged run on each side")
    p1, p2 = c1 / n1, c2 / n2
    # the score interval for one proportion, no continuity correction (n > 0 checked above)
    l1, u1 = wilson(c1, n1, z)
    l2, u2 = wilson(c2, n2, z)
    d = p2 - p1
    lo = d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    hi = d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return max(-1.0, lo), min(1.0, hi)


@functools.lru_cache(maxsize=4096)  # (pure in its counts: a suite, a simulation, asks the same tables again)
def fisher_exact_p(c1: int, n1: int, c2: int, n2: int) -> float:
    """Two-sided Fisher exact p-value for the table [[c1, n1-c1], [c2, n2-c2]].

    Same definition as scipy.stats.fisher_exact(alternative="two-sided"): the sum of the
    hypergeometric probabilities of every table with the same margins that is no more likely
    than the observed one (with scipy's relative tolerance of 1e-7 for ties). Computed in log space
    (log-gamma and log-sum-exp), so no count of runs overflows a float (exact integers did from
    about 520 judged runs per side).
    """
    if not (0 <= c1 <= n1 and 0 <= c2 <= n2):
        raise ValueError("passes must lie between 0 and the number of judged runs")
    total, passes = n1 + n2, c1 + c2
    if total == 0:
        return 1.0
    logs = _hypergeom_logs(passes, n1, total)
    cutoff = logs[c1] + math.log1p(1e-7)
    return min(1.0, math.exp(_log_sum([v for v in logs.values() if v <= cutoff])))


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _hypergeom_logs(passes: int, n1: int, total: int) -> dict[int, float]:
    """log P(X = x) for the passes x of side 1, with the margins fixed, over X's support."""
    lo, hi = max(0, n1 - (total - passes)), min(passes, n1)
    norm = _log_comb(total, n1)
    return {x: _log_comb(passes, x) + _log_comb(total - passes, n1 - x) - norm for x in range(lo, hi + 1)}


def _log_sum(logs: list[float]) -> float:
    top = max(logs)
    return top + math.log(sum(math.exp(v - top) for v in logs))


@functools.lru_cache(maxsize=4096)
def min_fisher_p(n1: int, n2: int, passes: int) -> float:
    """The smallest two-sided Fisher p-value any table with these margins can reach (the most
    extreme split of the passes). A case that cannot reach p < alpha / K cannot be significant in
    a family of K: Tarone (1990) leaves it out of the count."""
    total = n1 + n2
    if total == 0 or n1 == 0 or n2 == 0:
        return 1.0
    logs = _hypergeom_logs(passes, n1, total)
    lo, hi = min(logs), max(logs)
    return min(math.exp(_log_sum([v for v in logs.values() if v <= logs[x] + math.log1p(1e-7)])) for x in (lo, hi))


def tarone_family(min_ps: Sequence[float], alpha: float = ALPHA) -> list[int]:
    """Tarone's restriction: the indices of the testable cases. The smallest K such that at most K
    cases can reach p < alpha / K; those cases form the family Holm corrects over. Cases that
    could never be significant (e.g. 20/20 on both sides) no longer dilute the others."""
    m = len(min_ps)
    for k in range(1, m + 1):
        testable = [i for i, p in enumerate(min_ps) if p < alpha / k]
        if len(testable) <= k:
            return testable
    return list(range(m))


def runs_for_power(p1: float, p2: float, alpha: float = ALPHA, power: float = 0.8) -> int:
    """Runs per side for a two-sided test at `alpha` to detect p1 vs p2 with the given power.

    The standard normal-approximation formula for two independent proportions (Fleiss, no
    continuity correction), with p̄ = (p1 + p2) / 2:
        n = ( z_{1-α/2} * sqrt(2 p̄ (1-p̄)) + z_{power} * sqrt(p1(1-p1) + p2(1-p2)) )^2 / (p1-p2)^2
    rounded up.
    """
    if p1 == p2:
        raise ValueError("runs_for_power needs two different pass rates: there is no difference to detect")
    if not (0 <= p1 <= 1 and 0 <= p2 <= 1):
        raise ValueError("pass rates must lie between 0 and 1")
    normal = NormalDist()
    z_a, z_b = normal.inv_cdf(1 - alpha / 2), normal.inv_cdf(power)
    pbar = (p1 + p2) / 2
    root = z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return max(1, math.ceil(root * root / (p1 - p2) ** 2 - 1e-9))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm 1979 step-down adjusted p-values, in the input order.

    Sorted ascending p_(1) <= ... <= p_(m): adj_(i) = max over j <= i of min(1, (m - j + 1) p_(j)).
    Calling a case changed when its adjusted p < α keeps the chance of *any* false call among
    the m cases at most α, whatever the dependence between them."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def diff_variance(c1: int, n1: int, c2: int, n2: int) -> float:
    """Sampling variance of one case's difference p2 - p1, never 0 (Agresti & Caffo 2000).

    One pass and one fail are added to each side, p̃ = (c + 1) / (n + 2), and
        var = p̃1 (1 - p̃1) / (n1 + 2) + p̃2 (1 - p̃2) / (n2 + 2)
    The plain p̂(1 - p̂)/n is 0 at 0% and 100%, which would claim that 5/5 vs 5/5 pins the
    difference to exactly 0."""
    q1, q2 = (c1 + 1) / (n1 + 2), (c2 + 1) / (n2 + 2)
    return q1 * (1 - q1) / (n1 + 2) + q2 * (1 - q2) / (n2 + 2)


def mean_diff_se(diffs: Sequence[float], variances: Sequence[float]) -> float:
    """Standard error of the mean of per-case differences, with within-case noise counted.

    Miller 2024 (paired difference, questions resampled): Var(mean) = (ω² + E[σ²/K]) / m, with
    ω² the variance of the cases' true differences and σ²/K one case's sampling variance (here
    `variances`). The spread of the observed differences s² estimates ω² + E[σ²/K]; ω² is
    estimated as max(0, s² - mean(variances)), so
        SE = sqrt( max(s², mean(variances)) / m )
    With one case, or cases that happen to agree, SE falls back to the sampling variance alone
    instead of 0."""
    m = len(diffs)
    if m == 0 or m != len(variances):
        raise ValueError("mean_diff_se needs one variance per difference, and at least one case")
    within = sum(variances) / m
    spread = 0.0
    if m >= 2:
        mean = sum(diffs) / m
        spread = sum((d - mean) ** 2 for d in diffs) / (m - 1)
    return math.sqrt(max(spread, within) / m)


@dataclass
class CaseComparison:
    case_id: str
    before: Counts
    after: Counts
    rate_before: float | None
    rate_after: float | None
    diff: float | None  # rate_after - rate_before
    lo: float | None  # 95% Newcombe interval for diff
    hi: float | None
    p_value: float | None  # two-sided Fisher exact
    verdict: Verdict
    runs_needed: int | None  # per side, to detect `diff` at 80% power; only when inconclusive and more than either side has
    variance: float | None = None  # sampling variance of `diff` (diff_variance)
    p_holm: float | None = None  # Holm-adjusted over the cases compared together (= p_value alone)


def _counts(value: Counts | tuple[int, ...]) -> Counts:
    return value if isinstance(value, Counts) else Counts(*value)


def compare_case(before: Counts | tuple[int, ...], after: Counts | tuple[int, ...], case_id: str = "",
                 p_holm: float | None = None) -> CaseComparison:
    """Compare one case across two sessions. A change is called only when both the interval
    excludes zero and p < 0.05 (the Holm-adjusted p when the case is one of many), so a verdict
    never contradicts the numbers printed beside it."""
    b, a = _counts(before), _counts(after)
    rate_b, rate_a = b.rate, a.rate
    if rate_b is None or rate_a is None:
        # No verdict-reaching runs on one side (all errors, or none): nothing to compare.
        return CaseComparison(case_id, b, a, rate_b, rate_a, None, None, None, None, "no detectable change", None)
    diff = rate_a - rate_b
    lo, hi = newcombe_interval(b.passes, b.judged, a.passes, a.judged)
    p = fisher_exact_p(b.passes, b.judged, a.passes, a.judged)
    p_call = p if p_holm is None else max(p, p_holm)
    verdict: Verdict = "no detectable change"
    if p_call < ALPHA and lo > 0:
        verdict = "improved"
    elif p_call < ALPHA and hi < 0:
        verdict = "regressed"
    needed = None
    if verdict == "no detectable change" and diff != 0:
        needed = runs_for_power(rate_b, rate_a)
        if needed <= min(b.judged, a.judged):  # the runs are there: the family's correction (or the exact test) held it back
            needed = None
    return CaseComparison(case_id, b, a, rate_b, rate_a, diff, lo, hi, p, verdict, needed,
                          diff_variance(b.passes, b.judged, a.passes, a.judged), p_call)


@dataclass
class SessionComparison:
    cases: list[CaseComparison]
    mean_diff: float | None  # mean of per-case differences (cases with data on both sides)
    se: float | None  # mean_diff_se: between-case spread and within-case sampling noise
    regressed: list[str] = field(default_factory=list)
    improved: list[str] = field(default_factory=list)
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)
    family: list[str] | None = None  # the testable cases Holm corrected over (Tarone); None: every tested case

    @property
    def mean_interval(self) -> tuple[float, float] | None:
        """95% interval for the mean difference: Student's t with (cases - 1) degrees of freedom, as the suite
        row of `eval --agents` (head_to_head.suite_row) — 1.96 claimed more than a few cases show (three cases at
        8/8 both times: [-15, +15], where t gives [-33, +33]); one case is that case, its own interval."""
        if self.mean_diff is None or self.se is None:
            return None
        with_rates = [c for c in self.cases if c.diff is not None and c.lo is not None and c.hi is not None]
        if len(with_rates) == 1:
            return with_rates[0].lo, with_rates[0].hi  # type: ignore[return-value]
        half = (t_quantile(0.975, len(with_rates) - 1) if len(with_rates) > 1 else Z95) * self.se
        # A difference of rates cannot leave [-1, 1], so the interval is clipped there.
        return max(-1.0, self.mean_diff - half), min(1.0, self.mean_diff + half)


def compare_sessions(
    per_case_before: Mapping[str, Counts | tuple[int, ...]],
    per_case_after: Mapping[str, Counts | tuple[int, ...]],
) -> SessionComparison:
    """Compare every case both sessions ran; list the ones only one side ran. Verdicts are
    Holm-corrected over the testable cases (Tarone's restriction: cases whose margins could reach
    significance), so cases that cannot change do not spend alpha. A case left out of the family
    has its raw p as its adjusted one and cannot be called changed."""
    shared = sorted(set(per_case_before) & set(per_case_after))
    raw = [compare_case(per_case_before[c], per_case_after[c], case_id=c) for c in shared]
    tested = [c for c in raw if c.p_value is not None]
    family = [tested[i] for i in tarone_family(
        [min_fisher_p(c.before.judged, c.after.judged, c.before.passes + c.after.passes) for c in tested])]
    adjusted = dict(zip((c.case_id for c in family), holm_adjust([c.p_value for c in family if c.p_value is not None]),
                        strict=True))
    cases = [compare_case(c.before, c.after, c.case_id, adjusted.get(c.case_id, 1.0)) if c.p_value is not None
             else c for c in raw]
    # a case with a difference has its variance too (compare_case sets both or neither)
    compared = [(c.diff, c.variance) for c in cases if c.diff is not None and c.variance is not None]
    mean = sum(d for d, _ in compared) / len(compared) if compared else None
    se = mean_diff_se([d for d, _ in compared], [v for _, v in compared]) if compared else None
    return SessionComparison(
        cases=cases,
        mean_diff=mean,
        se=se,
        regressed=[c.case_id for c in cases if c.verdict == "regressed"],
        improved=[c.case_id for c in cases if c.verdict == "improved"],
        only_in_a=sorted(set(per_case_before) - set(per_case_after)),
        only_in_b=sorted(set(per_case_after) - set(per_case_before)),
        family=[c.case_id for c in family],
    )


def format_side(c: Counts) -> str:
    """"80%   8/10 ", or without a rate no fraction either (0/1 would read as 0%): "  n/a 1 fail, 9 unjudged"."""
    if c.rate is None:
        text = f"  n/a {count_text(c.passes, c.fails, c.unjudged)}"
    else:
        text = f"{c.rate:5.0%} {c.passes:>3}/{c.judged:<3}"
    return text + (f" +{c.errors} err" if c.errors else "")


def _pts(x: float | None, signed: bool = False) -> str:
    """Percentage points, bare (the columns say "pts")."""
    return pct(x, signed=signed, unit="", none="—")


def format_p(p: float | None) -> str:
    return "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def tested_count(cmp: SessionComparison) -> int:
    """The family the Holm correction covers: the testable cases (Tarone), else every case with a p-value."""
    if cmp.family is not None:
        return len(cmp.family)
    return sum(c.p_value is not None for c in cmp.cases)


def comparison_notes(cmp: SessionComparison) -> list[str]:
    """The sentences under a comparison table in the Markdown and HTML reports: the mean difference
    and the family the Holm correction covered (plain text, no agent-written content)."""
    notes = []
    mean_ci = cmp.mean_interval  # set when mean_diff and se are
    if cmp.mean_diff is not None and cmp.se is not None and mean_ci is not None:
        lo, hi = mean_ci
        notes.append(f"Mean difference over {plural(sum(c.diff is not None for c in cmp.cases), 'case')}: "
                     f"{_pts(cmp.mean_diff, True)} pts (SE {cmp.se * 100:.1f}, 95% CI [{_pts(lo, True)}, {_pts(hi, True)}]).")
    compared = sum(c.p_value is not None for c in cmp.cases)
    notes.append("No case can be called regressed or improved at these run counts (not even its most lopsided outcome "
                 "would be significant): more runs a side decide." if compared and not tested_count(cmp) else
                 f"Verdicts are Holm-corrected over {tested_count(cmp)} testable of {plural(compared, 'case')} (Tarone: "
                 f"cases that could reach significance): at most {ALPHA:.0%} chance of any false regressed/improved.")
    return notes


def format_comparison(cmp: SessionComparison, label_a: str = "A", label_b: str = "B") -> str:
    """The plain-text table `scarbook diff` prints."""
    family = tested_count(cmp)
    head = ["case", f"{label_a} (rate passes/judged)", f"{label_b} (rate passes/judged)",
            "diff [95% CI] pts", "p (Fisher)", *(["p (Holm)"] if family > 1 else []), "verdict"]
    rows = []
    for c in cmp.cases:
        interval = "—" if c.diff is None else f"{_pts(c.diff, True)} [{_pts(c.lo, True)}, {_pts(c.hi, True)}]"
        verdict: str = c.verdict
        if c.runs_needed is not None and c.diff is not None:
            verdict += f" (~{c.runs_needed} runs/side to detect {_pts(abs(c.diff))} pts)"
        holm = [format_p(c.p_holm)] if family > 1 else []
        rows.append([c.case_id, format_side(c.before), format_side(c.after), interval, format_p(c.p_value), *holm, verdict])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if cmp.mean_diff is not None:
        summary = (f"mean difference over {plural(sum(c.diff is not None for c in cmp.cases), 'case')}: "
                   f"{_pts(cmp.mean_diff, True)} pts")
        mean_ci = cmp.mean_interval  # set when se is
        if cmp.se is not None and mean_ci is not None:
            lo, hi = mean_ci
            summary += (f" (SE {cmp.se * 100:.1f}, 95% CI [{_pts(lo, True)}, {_pts(hi, True)}]; "
                        "the SE counts each case's run-to-run noise, not only the spread between cases)")
        lines += ["", summary]
    compared = sum(c.p_value is not None for c in cmp.cases)
    if compared and not family:  # ("Holm-corrected over the 0 testable of 1 case" said it in a riddle)
        lines.append("no case can be called regressed or improved at these run counts (not even its most lopsided "
                     "outcome would be significant, e.g. 3/3 against 0/3) — more runs a side decide")
    elif family > 1 or compared > family:
        lines.append(f"verdicts are Holm-corrected over the {family} testable of {plural(compared, 'case')} (Tarone: a case "
                     f"that could not reach significance spends no alpha): the chance of any false "
                     f"regressed/improved is at most {ALPHA:.0%}")
    lines.append("regressed: " + (", ".join(cmp.regressed) if cmp.regressed else "none"))
    if cmp.improved:
        lines.append("improved: " + ", ".join(cmp.improved))
    if cmp.only_in_a:
        lines.append(f"only in {label_a}: " + ", ".join(cmp.only_in_a))
    if cmp.only_in_b:
        lines.append(f"only in {label_b}: " + ", ".join(cmp.only_in_b))
    return "\n".join(lines)
