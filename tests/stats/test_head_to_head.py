"""Candidates against a baseline in one session (issue 36): the numbers checked against scipy and
independent constructions, the calls on hand-made suites, --runs auto's looks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scarbook.models import MarginCall, Versus
from scarbook.stats.compare import Counts
from scarbook.stats.head_to_head import (
    CompareExtender,
    auto_looks,
    case_row,
    compare_agents,
    compare_in_looks,
    look_alphas,
    p_above,
    p_below,
    p_not_worse,
    suite_row,
)
from scarbook.stats.margin_exact import exact_p_above
from scarbook.stats.student import t_quantile, t_two_sided_p, t_upper_p


def newcombe_by_scipy(c1: int, n1: int, c2: int, n2: int, confidence: float) -> tuple[float, float]:
    """Newcombe's method 10 from scipy's own Wilson intervals (no continuity correction)."""
    from scipy.stats import binomtest

    w1 = binomtest(c1, n1).proportion_ci(confidence_level=confidence, method="wilson")
    w2 = binomtest(c2, n2).proportion_ci(confidence_level=confidence, method="wilson")
    p1, p2 = c1 / n1, c2 / n2
    d = p2 - p1
    return (d - math.sqrt((p2 - w2.low) ** 2 + (w1.high - p1) ** 2),
            d + math.sqrt((w2.high - p2) ** 2 + (p1 - w1.low) ** 2))


def holm_by_hand(ps: list[float]) -> list[float]:
    """Holm 1979 as statsmodels' multipletests(method='holm') computes it, written out again."""
    m = len(ps)
    order = np.argsort(ps, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * np.asarray(ps)[order]))
    out = np.empty(m)
    out[order] = adjusted
    return list(out)


@pytest.mark.parametrize(("c1", "n1", "c2", "n2", "d0"), [
    (9, 10, 3, 10, -0.05), (18, 20, 12, 20, 0.0), (45, 50, 44, 50, -0.1), (30, 40, 35, 40, 0.05),
    (10, 10, 2, 10, -0.05), (5, 12, 11, 13, 0.1)])
def test_the_margin_tests_read_the_newcombe_interval_backwards(c1, n1, c2, n2, d0):
    """p_above(d0) is the one-sided level at which the interval's lower end is d0: the (1 - 2p) interval
    built from scipy's Wilson intervals ends exactly there (and p_below mirrors it at the upper end)."""
    d = c2 / n2 - c1 / n1
    if d > d0:
        p = p_above(c1, n1, c2, n2, d0)
        assert 0 < p < 0.5
        lo, _ = newcombe_by_scipy(c1, n1, c2, n2, 1 - 2 * p)
        assert lo == pytest.approx(d0, abs=1e-6)
        assert p_below(c1, n1, c2, n2, d0) == pytest.approx(1 - p)
    else:
        p = p_below(c1, n1, c2, n2, d0)
        assert 0 < p <= 0.5
        _, hi = newcombe_by_scipy(c1, n1, c2, n2, 1 - 2 * p)
        assert hi == pytest.approx(d0, abs=1e-6)


def test_a_margin_the_interval_never_reaches_has_p_zero():
    # 1/1 against 0/1 can never show a difference below -0.9 ... but 0/10 vs 10/10 shows > -0.5 at any level
    assert p_above(10, 10, 0, 10, -0.99) > 0
    assert p_above(0, 10, 10, 10, -0.5) == 0.0


def test_a_case_row_matches_scipy():
    from scipy.stats import fisher_exact

    row = case_row("c", "cand", Counts(18, 2), Counts(9, 11), margin=0.05)
    assert row.p_diff == pytest.approx(fisher_exact([[18, 2], [9, 11]]).pvalue, rel=1e-9)
    lo, hi = newcombe_by_scipy(18, 20, 9, 20, 0.95)
    assert (row.lo, row.hi) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))
    assert row.diff == pytest.approx(-0.45)
    # up to 20 runs a side "not worse" is also tested exactly (stats/margin_exact.py): the larger p counts
    not_worse = max(p_above(18, 20, 9, 20, -0.05), exact_p_above(p_above, 18, 20, 9, 20, -0.05))
    assert not_worse == p_not_worse(18, 20, 9, 20, 0.05)
    assert row.p_same == pytest.approx(max(not_worse, p_below(18, 20, 9, 20, 0.05)))


def test_the_suite_row_is_the_case_clustered_mean_with_t():
    from scipy.stats import t as student_t

    cases = [(18, 20, 15, 20), (20, 20, 19, 20), (10, 20, 12, 20), (15, 20, 9, 20), (19, 20, 19, 20)]
    rows = [case_row(f"c{i}", "b", Counts(c1, n1 - c1), Counts(c2, n2 - c2), 0.05) for i, (c1, n1, c2, n2) in enumerate(cases)]
    s = suite_row("b", rows, 0.05)
    diffs = np.array([c2 / n2 - c1 / n1 for c1, n1, c2, n2 in cases])
    # Miller 2024 with Agresti-Caffo variances, computed again here
    var = np.array([((c1 + 1) / (n1 + 2)) * (1 - (c1 + 1) / (n1 + 2)) / (n1 + 2)
                    + ((c2 + 1) / (n2 + 2)) * (1 - (c2 + 1) / (n2 + 2)) / (n2 + 2) for c1, n1, c2, n2 in cases])
    se = math.sqrt(max(diffs.var(ddof=1), var.mean()) / len(cases))
    assert s.diff == pytest.approx(diffs.mean())
    assert s.se == pytest.approx(se)
    half = student_t.ppf(0.975, len(cases) - 1) * se
    assert (s.lo, s.hi) == (pytest.approx(diffs.mean() - half), pytest.approx(diffs.mean() + half))
    assert s.p_diff == pytest.approx(2 * student_t.sf(abs(diffs.mean()) / se, len(cases) - 1))
    assert s.p_worse == pytest.approx(student_t.cdf((diffs.mean() + 0.05) / se, len(cases) - 1))
    assert s.cases == 5


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 10, 29, 30, 57])
def test_student_t_matches_scipy(df):
    from scipy.stats import t as student_t

    for x in (0.0, 0.3, 1.0, 1.96, 2.7, 4.0, 12.0):
        assert t_two_sided_p(x, df) == pytest.approx(2 * student_t.sf(x, df), abs=1e-12)
        assert t_upper_p(-x, df) == pytest.approx(student_t.sf(-x, df), abs=1e-12)
    for level in (0.9, 0.95, 0.975, 0.995):
        assert t_quantile(level, df) == pytest.approx(student_t.ppf(level, df), rel=1e-9)


def _counts(pairs):
    return {cid: {"base": Counts(b, n - b), "cand": Counts(c, n - c)} for cid, (b, c, n) in pairs.items()}


def test_a_clearly_worse_candidate_is_called_worse_and_fails_the_margin():
    result = compare_agents(_counts({"a": (38, 22, 40), "b": (34, 30, 40), "c": (40, 40, 40)}), "base", ["cand"])
    calls = {r.case_id: r.call for r in result.rows}
    assert calls == {"a": Versus.WORSE, "b": Versus.UNDECIDED, "c": Versus.UNDECIDED}
    a = result.row("a", "cand")
    assert a is not None and a.margin_call == MarginCall.INFERIOR and a.hi is not None and a.hi < -0.05
    # 40/40 against 40/40 cannot reach significance: Tarone leaves it out of the family, so the family
    # is a, b and the suite row, and a's Holm p is at most 3 times its own
    assert result.family == 3
    assert a.p_diff_holm is not None and a.p_diff is not None and a.p_diff_holm <= 3 * a.p_diff
    assert [r.case_id for r in result.inferior] == ["a"]
    # three cases are t with 2 degrees of freedom: one case far worse does not make the suite worse
    assert result.suite("cand").call == Versus.UNDECIDED


def test_holm_runs_over_cases_and_candidates_together():
    counts = {f"c{i}": {"base": Counts(30, 10), "x": Counts(30 - i, 10 + i), "y": Counts(31, 9)} for i in range(4)}
    result = compare_agents(counts, "base", ["x", "y"])
    rows = [*result.rows, *result.suites]
    family = [r for r in rows if r.p_diff_holm is not None and r.min_p < 1]
    ps = [r.p_diff for r in family]
    assert [r.p_diff_holm for r in family] == pytest.approx(holm_by_hand(ps))
    assert len(rows) == 4 * 2 + 2


def test_two_agents_at_the_same_high_rate_with_many_runs_are_the_same_within_the_margin():
    result = compare_agents(_counts({"a": (990, 992, 1000), "b": (985, 988, 1000)}), "base", ["cand"])
    assert [r.call for r in result.rows] == [Versus.SAME, Versus.SAME]
    assert all(r.margin_call == MarginCall.NON_INFERIOR for r in result.rows)
    assert not result.inferior


def test_a_side_without_enough_verdicts_has_no_verdict_and_says_why():
    counts = {"a": {"base": Counts(9, 1), "cand": Counts(1, 0, 9)}, "b": {"base": Counts(5, 0, 0, 5), "cand": Counts(5, 5)}}
    result = compare_agents(counts, "base", ["cand"])
    a, b = result.rows
    assert a.call == Versus.NO_VERDICT and a.why == (
        "only 1 of the candidate's 10 runs reached a verdict (9 errors); a comparison needs at least 5 on each side "
        "(errors cannot count as evidence)")
    assert b.why == "5 of the baseline's runs went unjudged (judge checks skipped)"
    assert result.suite("cand").why == "no case has a rate on both sides"
    assert len(result.open) == 2


def test_looks_spend_alpha_in_proportion_and_keep_what_they_decided():
    looks = auto_looks(10, 50)
    assert looks == (10, 20, 40, 50)
    assert sum(look_alphas(looks, 0.05)) == pytest.approx(0.05)
    # case a is decided worse at the first look (10/10 against 0/10); its later runs cannot undo it
    statuses = {"a": {"base": ["pass"] * 10 + ["fail"] * 10, "cand": ["fail"] * 10 + ["pass"] * 10},
                "b": {"base": ["pass", "fail"] * 10, "cand": ["fail", "pass"] * 10}}
    result = compare_in_looks(statuses, "base", ["cand"], [10, 20], plan=looks)
    assert result.row("a", "cand").call == Versus.WORSE
    assert result.row("a", "cand").other == Counts(0, 10)
    extend = CompareExtender("base", ("cand",), looks)
    assert extend(statuses) == {"b": 40}  # a is decided: no more runs; b goes on to the next look
    assert CompareExtender("base", ("cand",), (10,))(statuses) == {}


@pytest.mark.parametrize("seed", range(3))
def test_a_a_makes_no_call_at_the_cases_scale(seed):
    from scipy.stats import binomtest

    rng = np.random.default_rng(seed)
    wrong = 0
    for _ in range(200):
        counts = {f"c{i}": {"base": Counts(int(b := rng.binomial(20, 0.8)), 20 - b),
                            "cand": Counts(int(c := rng.binomial(20, 0.8)), 20 - c)} for i in range(10)}
        result = compare_agents(counts, "base", ["cand"])
        wrong += any(r.call in (Versus.BETTER, Versus.WORSE) for r in (*result.rows, *result.suites))
    # at most alpha of sessions: 200 sessions, exact 99% bound
    assert binomtest(wrong, 200, 0.05, alternative="greater").pvalue > 0.01


def test_normal_helper_agrees():
    from scipy.stats import norm

    assert norm.ppf(0.975) == pytest.approx(1.959963984540054)


def test_a_suite_of_one_case_is_that_case() -> None:
    """3/3 against 0/3: Fisher cannot show it (p = 0.1); a normal test on the suite's mean would have called
    it worse (z = 3.9). With one case the suite row is the case's row, and no test of its own."""
    result = compare_agents(_counts({"a": (3, 0, 3)}), "base", ["cand"])
    case, suite = result.rows[0], result.suite("cand")
    assert case.call == Versus.UNDECIDED and suite.call == Versus.UNDECIDED
    assert (suite.diff, suite.lo, suite.hi, suite.p_diff) == (case.diff, case.lo, case.hi, case.p_diff)
    assert suite.cases == 1 and suite.why == "one case: its own row decides"
    # the suite row spends no alpha of its own, and 3 runs a side can never reach p < 0.05 (Tarone: no family)
    assert result.family == 0


@pytest.mark.parametrize("errors, why", [
    (1, "only 0 of the candidate's 1 run reached a verdict (1 error); a comparison needs at least 1 on each side "
        "(errors cannot count as evidence)"),
    (2, "only 0 of the candidate's 2 runs reached a verdict (2 errors); a comparison needs at least 2 on each side "
        "(errors cannot count as evidence)")])
def test_a_side_of_one_errored_run_says_one_run(errors: int, why: str):
    counts = {"a": {"base": Counts(errors, 0), "cand": Counts(0, 0, errors)}}
    [row] = compare_agents(counts, "base", ["cand"]).rows
    assert (row.call, row.why) == (Versus.NO_VERDICT, why)
