"""Session diff numbers, checked against scipy and a published worked example."""

from __future__ import annotations

import math

import pytest

from scarbook.stats.compare import (
    Counts,
    compare_case,
    compare_sessions,
    comparison_notes,
    fisher_exact_p,
    format_comparison,
    newcombe_interval,
    runs_for_power,
)


def wilson_by_hand(c: int, n: int, z: float) -> tuple[float, float]:
    # Wilson 1927 as the roots of (p - p̂)^2 = z^2 p (1 - p) / n, solved independently here.
    p = c / n
    a = 1 + z * z / n
    b = -(2 * p + z * z / n)
    cc = p * p
    disc = math.sqrt(b * b - 4 * a * cc)
    return (-b - disc) / (2 * a), (-b + disc) / (2 * a)


def test_newcombe_matches_the_published_example():
    # Newcombe 1998 (Stat Med 17:873), table II example: 56/70 vs 48/80, method 10 gives
    # 0.0524 to 0.3339 for p1 - p2. Ours is after - before, so the roles are swapped.
    lo, hi = newcombe_interval(48, 80, 56, 70)
    assert lo == pytest.approx(0.0524, abs=5e-5)
    assert hi == pytest.approx(0.3339, abs=5e-5)


@pytest.mark.parametrize("c1,n1,c2,n2", [(9, 10, 3, 10), (0, 10, 0, 20), (20, 20, 17, 20), (5, 7, 11, 13), (1, 3, 29, 30)])
def test_newcombe_matches_an_independent_wilson_construction(c1, n1, c2, n2):
    from scipy.stats import norm

    z = norm.ppf(0.975)
    l1, u1 = wilson_by_hand(c1, n1, z)
    l2, u2 = wilson_by_hand(c2, n2, z)
    p1, p2 = c1 / n1, c2 / n2
    expected_lo = (p2 - p1) - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    expected_hi = (p2 - p1) + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    lo, hi = newcombe_interval(c1, n1, c2, n2)
    assert lo == pytest.approx(expected_lo, abs=1e-9)
    assert hi == pytest.approx(expected_hi, abs=1e-9)


def test_newcombe_refuses_an_empty_side():
    with pytest.raises(ValueError, match="at least one judged run on each side"):
        newcombe_interval(0, 0, 3, 5)


@pytest.mark.parametrize(
    "c1,n1,c2,n2",
    [(9, 10, 3, 10), (10, 10, 10, 10), (0, 5, 5, 5), (18, 20, 12, 20), (7, 12, 7, 12), (3, 4, 40, 50), (1, 1, 0, 1), (13, 40, 29, 40)],
)
def test_fisher_matches_scipy(c1, n1, c2, n2):
    from scipy.stats import fisher_exact

    expected = fisher_exact([[c1, n1 - c1], [c2, n2 - c2]], alternative="two-sided").pvalue
    assert fisher_exact_p(c1, n1, c2, n2) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_fisher_rejects_impossible_counts():
    with pytest.raises(ValueError, match="passes must lie between 0 and the number of judged runs"):
        fisher_exact_p(6, 5, 1, 5)


def test_power_matches_a_hand_worked_value():
    # 0.5 vs 0.7, alpha 0.05 two-sided, 80% power: (1.95996*sqrt(0.48) + 0.84162*sqrt(0.46))^2 / 0.04
    # = (1.35790 + 0.57082)^2 / 0.04 = 92.999 -> 93 per side (the textbook figure).
    assert runs_for_power(0.5, 0.7) == 93
    assert runs_for_power(0.7, 0.5) == 93
    # a bigger gap needs fewer runs; more power needs more
    assert runs_for_power(0.9, 0.5) < 93 < runs_for_power(0.5, 0.7, power=0.9)


def test_power_refuses_equal_rates():
    with pytest.raises(ValueError, match="there is no difference to detect"):
        runs_for_power(0.8, 0.8)


def test_compare_case_calls_a_clear_regression():
    cmp = compare_case((19, 1, 0), (6, 14, 2), case_id="write-one-line")
    assert cmp.rate_before == pytest.approx(0.95)
    assert cmp.rate_after == pytest.approx(0.3)  # errors stay out of the denominator
    assert cmp.diff == pytest.approx(-0.65)
    assert cmp.hi < 0 and cmp.p_value < 0.05
    assert cmp.verdict == "regressed"
    assert cmp.runs_needed is None
    assert cmp.after.errors == 2


def test_compare_case_inconclusive_reports_runs_needed():
    cmp = compare_case(Counts(8, 2), Counts(7, 3))
    assert cmp.verdict == "no detectable change"
    assert cmp.lo < 0 < cmp.hi
    assert cmp.runs_needed == runs_for_power(0.8, 0.7)
    assert compare_case((5, 0), (5, 0)).runs_needed is None  # nothing to detect


def test_compare_case_improvement():
    assert compare_case((2, 18), (17, 3)).verdict == "improved"


def test_compare_case_with_only_errors_on_one_side():
    cmp = compare_case((0, 0, 5), (4, 1, 0))
    assert cmp.verdict == "no detectable change"
    assert cmp.rate_before is None and cmp.diff is None and cmp.p_value is None


def test_compare_sessions_names_the_regressed_case_and_uses_cases_as_the_unit():
    before = {"a": (19, 1, 0), "b": (10, 10, 0), "c": (15, 5, 1), "gone": (3, 0, 0)}
    after = {"a": (4, 16, 0), "b": (11, 9, 0), "c": (15, 5, 0), "new": (1, 1, 0)}
    cmp = compare_sessions(before, after)
    assert [c.case_id for c in cmp.cases] == ["a", "b", "c"]
    assert cmp.regressed == ["a"]
    assert [c.verdict for c in cmp.cases[1:]] == ["no detectable change"] * 2
    diffs = [-0.75, 0.05, 0.0]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    assert cmp.mean_diff == pytest.approx(mean)
    assert cmp.se == pytest.approx(sd / math.sqrt(3))
    assert cmp.only_in_a == ["gone"] and cmp.only_in_b == ["new"]


def test_compare_sessions_single_case_se_is_its_own_sampling_noise():
    cmp = compare_sessions({"a": (3, 1)}, {"a": (2, 2)})
    # Agresti-Caffo: (3+1)/(4+2) and (2+1)/(4+2), each p(1-p)/(n+2)
    expected = math.sqrt((4 / 6) * (2 / 6) / 6 + 0.5 * 0.5 / 6)
    assert cmp.se == pytest.approx(expected)
    # one case is that case: the mean's interval is its own (Newcombe), as the suite row of eval --agents
    assert cmp.mean_interval == (cmp.cases[0].lo, cmp.cases[0].hi)


def test_format_comparison_shows_rates_errors_verdicts_and_summary():
    before = {"a": (19, 1, 0), "b": (10, 10, 0)}
    after = {"a": (4, 16, 3), "b": (11, 9, 0)}
    text = format_comparison(compare_sessions(before, after), label_a="prompt-v1", label_b="prompt-v2")
    lines = text.splitlines()
    assert "prompt-v1" in lines[0] and "prompt-v2" in lines[0]
    row_a = next(line for line in lines if line.startswith("a "))
    assert " 95%  19/20" in row_a and " 20%   4/20  +3 err" in row_a
    assert "-75 [" in row_a and "<0.001" in row_a and row_a.endswith("regressed")
    row_b = next(line for line in lines if line.startswith("b "))
    assert "no detectable change (~" in row_b and "runs/side to detect 5 pts)" in row_b
    assert "regressed: a" in lines
    assert any(line.startswith("mean difference over 2 cases: -35 pts (SE ") for line in lines)


def test_mean_interval_is_clipped_to_possible_differences():
    cmp = compare_sessions({"a": (20, 0), "b": (0, 20), "c": (20, 0)}, {"a": (0, 20), "b": (0, 20), "c": (0, 20)})
    lo, hi = cmp.mean_interval
    assert lo == -1.0 and -1.0 < hi < 1.0


def test_counts_by_case_keeps_errors_apart():
    from scarbook.models import RunRecord
    from scarbook.stats.compare import counts_by_case

    runs = [RunRecord("s", case, k, status, "") for k, (case, status) in enumerate(
        [("a", "pass"), ("a", "fail"), ("a", "error"), ("b", "pass"), ("a", "pass")])]
    assert counts_by_case(runs) == {"a": Counts(2, 1, 1), "b": Counts(1, 0, 0)}
    assert counts_by_case(runs)["a"].rate == pytest.approx(2 / 3)


def test_changed_cases_names_cases_whose_checks_changed():
    from scarbook.models import SessionInfo
    from scarbook.stats.compare import changed_cases

    a = SessionInfo("s1", case_digests={"x": "d1", "y": "d2", "gone": "d3", "old": ""})
    b = SessionInfo("s2", case_digests={"x": "d1", "y": "CHANGED", "new": "d4", "old": "d5"})
    assert changed_cases(a, b) == ["y"]


# --- issue 12: the across-case SE counts within-case noise; verdicts across cases are Holm-corrected ---


def test_agreeing_cases_do_not_print_a_zero_standard_error():
    # Repro: every case 8/8 before and after. Each case's own interval is about ±32 points, yet the
    # spread of the per-case differences is 0, so the old line read "+0 pts (SE 0.0, 95% CI [+0,+0])".
    before = {"a": (8, 0), "b": (8, 0), "c": (8, 0)}
    cmp = compare_sessions(before, dict(before))
    case_lo, case_hi = cmp.cases[0].lo, cmp.cases[0].hi
    assert case_lo == pytest.approx(-0.3244, abs=1e-4) and case_hi == pytest.approx(0.3244, abs=1e-4)
    per_case_var = 2 * (9 / 10) * (1 / 10) / 10  # Agresti-Caffo, both sides
    assert cmp.se == pytest.approx(math.sqrt(per_case_var / 3))
    text = format_comparison(cmp)
    summary = next(line for line in text.splitlines() if line.startswith("mean difference"))
    # t with 2 degrees of freedom (4.30 SE), not 1.96: [-15, +15] claimed more than three cases show
    assert summary.startswith("mean difference over 3 cases: +0 pts (SE 7.7, 95% CI [-33, +33]; "
                              "the SE counts each case's run-to-run noise")
    assert "SE 0.0" not in text


def test_equal_differences_keep_the_sampling_noise():
    # Two cases with the same observed difference: s^2 = 0, so only within-case noise remains.
    cmp = compare_sessions({"a": (5, 5), "b": (5, 5)}, {"a": (6, 4), "b": (6, 4)})
    within = (6 / 12) * (6 / 12) / 12 + (7 / 12) * (5 / 12) / 12
    assert cmp.mean_diff == pytest.approx(0.1)
    assert cmp.se == pytest.approx(math.sqrt(within / 2))


def test_mean_diff_se_is_the_method_of_moments_estimate():
    from scarbook.stats.compare import mean_diff_se

    diffs, variances = [-0.5, 0.3, 0.1, 0.0], [0.01, 0.02, 0.015, 0.005]
    s2 = sum((d - sum(diffs) / 4) ** 2 for d in diffs) / 3
    omega2 = max(0.0, s2 - sum(variances) / 4)  # spread of the true differences, Miller 2024
    assert mean_diff_se(diffs, variances) == pytest.approx(math.sqrt((omega2 + sum(variances) / 4) / 4))
    # the spread never makes the SE smaller than the sampling noise alone
    assert mean_diff_se([0.0, 0.0], [0.04, 0.04]) == pytest.approx(math.sqrt(0.04 / 2))
    with pytest.raises(ValueError, match="one variance per difference"):
        mean_diff_se([0.1], [])


def test_diff_variance_is_never_zero_at_the_extremes():
    from scarbook.stats.compare import diff_variance

    assert diff_variance(5, 5, 5, 5) == pytest.approx(2 * (6 / 7) * (1 / 7) / 7)
    assert diff_variance(0, 10, 0, 10) > 0


def test_holm_adjust_by_hand():
    from scarbook.stats.compare import holm_adjust

    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm_adjust([0.02]) == [0.02]
    assert holm_adjust([]) == []


def test_holm_turns_a_lone_borderline_regression_into_no_detectable_change():
    # 19/20 -> 13/20 alone: Fisher p = 0.044 < 0.05, regressed. Among six cases, Holm multiplies
    # the smallest p by 6: 0.26, so the family cannot call it.
    alone = compare_sessions({"a": (19, 1)}, {"a": (13, 7)})
    assert alone.cases[0].p_value == pytest.approx(0.0436, abs=1e-4)
    assert alone.regressed == ["a"]
    others = {c: (10, 10) for c in "bcdef"}
    family = compare_sessions({"a": (19, 1), **others}, {"a": (13, 7), **others})
    case_a = family.cases[0]
    assert case_a.p_value == pytest.approx(0.0436, abs=1e-4)
    assert case_a.p_holm == pytest.approx(6 * case_a.p_value)
    assert case_a.verdict == "no detectable change" and family.regressed == []
    text = format_comparison(family)
    assert "p (Holm)" in text.splitlines()[0]
    # (the wording names Tarone's testable family since issue 22; all six can reach significance here)
    assert ("verdicts are Holm-corrected over the 6 testable of 6 cases (Tarone: a case that could not reach "
            "significance spends no alpha): the chance of any false regressed/improved is at most 5%") in text
    # a clear regression survives the correction
    clear = compare_sessions({"a": (19, 1), **others}, {"a": (4, 16), **others})
    assert clear.regressed == ["a"]


def test_counts_by_case_keeps_unjudged_runs_out_of_the_rate():
    from scarbook.models import RunRecord
    from scarbook.stats.compare import counts_by_case

    runs = [RunRecord("s", "a", k, status, "") for k, status in enumerate(["pass", "unjudged", "fail", "unjudged"])]
    counts = counts_by_case(runs)["a"]
    # issue 22: with unjudged runs there is no rate (the passes could only be unjudged), as in CaseStats
    assert counts == Counts(1, 1, 0, 2) and counts.rate is None
    # (issue 26.12: the side names its counts, no fraction — was "n/a   1/2   +2 unjudged")
    assert "  n/a 1 pass, 1 fail, 2 unjudged" in format_comparison(compare_sessions({"a": counts}, {"a": counts}))


# -- issue 22: diff with its real alpha -------------------------------------------------------------


def test_fisher_in_log_space_matches_scipy_at_600_runs_per_side():
    from scipy.stats import fisher_exact

    from scarbook.stats.compare import fisher_exact_p

    for c1, c2 in [(540, 500), (600, 598), (300, 320), (0, 600)]:
        ref = fisher_exact([[c1, 600 - c1], [c2, 600 - c2]]).pvalue
        assert fisher_exact_p(c1, 600, c2, 600) == pytest.approx(ref, rel=1e-6, abs=1e-300)
    cmp = compare_sessions({"a": (540, 60)}, {"a": (500, 100)})  # crashed with OverflowError before
    assert cmp.regressed == ["a"]


def test_min_fisher_p_is_the_most_extreme_tables_p():
    from scipy.stats import fisher_exact

    from scarbook.stats.compare import min_fisher_p

    assert min_fisher_p(20, 20, 40) == 1.0  # 20/20 on both sides: nothing could ever differ
    assert min_fisher_p(20, 20, 32) == pytest.approx(fisher_exact([[20, 0], [12, 8]]).pvalue, rel=1e-9)


def test_tarone_leaves_cases_that_cannot_change_out_of_the_family():
    # the example: 20/20 -> 12/20 among 29 cases at 20/20 on both sides
    same = {f"c{i}": (20, 0) for i in range(29)}
    cmp = compare_sessions({"drop": (20, 0), **same}, {"drop": (12, 8), **same})
    assert cmp.regressed == ["drop"] and cmp.family == ["drop"]
    text = format_comparison(cmp)
    assert "Holm-corrected over the 1 testable of 30 cases" in text


def test_tarone_family_is_the_smallest_k_with_at_most_k_testable():
    from scarbook.stats.compare import tarone_family

    # k=1: 3 below 0.05 > 1; k=2: 3 below 0.025 > 2; k=3: 2 below 0.0167 <= 3
    assert tarone_family([1e-6, 1e-6, 0.02, 1.0]) == [0, 1]
    # k=1: 2 below 0.05 > 1; k=2: only 0.001 below 0.025
    assert tarone_family([0.001, 0.03, 1.0, 1.0]) == [0]


def test_two_sessions_without_a_rate_refuse_to_compare_rates():
    from scarbook.models import SessionInfo
    from scarbook.stats.compare import partial_mismatch

    a, b = SessionInfo("s1", partial=True), SessionInfo("s2", partial=True)
    assert partial_mismatch(a, b) == (
        "sessions s1 and s2 both skipped their judge checks (--skip-judge: partial): their runs that passed the rule "
        "checks are unjudged, so neither has a pass rate to compare; compare two judged sessions (re-run without "
        "--skip-judge)")
    cmp = compare_sessions({"a": (0, 2, 0, 8)}, {"a": (0, 8, 0, 2)})
    assert cmp.cases[0].rate_before is None and cmp.cases[0].diff is None and cmp.regressed == []


def test_one_rule_no_verdict_no_rate_and_no_fraction():
    # Issue 26.12: every screen takes its rate and counts from stats.rates (rate_of, count_text)
    from scarbook.stats.rates import count_text, rate_of, summarize_counts

    assert rate_of(8, 2) == 0.8 and count_text(8, 2) == "8/10"
    assert rate_of(0, 1, unjudged=9) is None and count_text(0, 1, 9) == "1 fail, 9 unjudged"
    assert count_text(0, 1, 9, short=True) == "9 unj"
    assert rate_of(0, 0) is None and count_text(0, 0) == "no verdict" and count_text(0, 0, short=True) == "–"
    assert Counts(0, 1, 0, 9).rate is None and summarize_counts("c", 0, 1, 0, 0.8, unjudged=9).rate is None


def test_diff_prints_no_fraction_for_a_side_without_a_rate():
    # Issue 26.12: `diff --force` printed "n/a   0/1 +9 unjudged" (a fraction read as 0%) for 1 fail, 9 unjudged
    from scarbook.stats.compare import format_side

    assert format_side(Counts(0, 1, 0, 9)) == "  n/a 1 fail, 9 unjudged"
    assert format_side(Counts(0, 0, 3, 0)) == "  n/a no verdict +3 err"
    assert format_side(Counts(8, 2, 1, 0)) == "  80%   8/10  +1 err"
    cmp = compare_sessions({"c": Counts(10, 0)}, {"c": Counts(0, 1, 0, 9)})
    assert cmp.cases[0].diff is None and cmp.mean_diff is None
    row = next(line for line in format_comparison(cmp).splitlines() if line.startswith("c "))
    assert row.split() == ["c", "100%", "10/10", "n/a", "1", "fail,", "9", "unjudged", "—", "—", "no", "detectable",
                           "change"]


def test_no_runs_needed_hint_that_the_runs_already_exceed():
    """4/4 against 0/4, one case of two: Holm lifts p from 0.029 to 0.057, so no detectable change — and
    before, the hint said '~2 runs/side to detect 100 pts' beside 4 runs a side (seen failing)."""
    cmp = compare_case((4, 0), (0, 4), p_holm=0.057)
    assert cmp.verdict == "no detectable change"
    assert runs_for_power(1.0, 0.0) == 2 and cmp.runs_needed is None


def test_a_comparison_no_case_of_which_can_be_decided_says_so() -> None:
    """`scarbook diff` of two one-case sessions of 5 runs said "verdicts are Holm-corrected over the 0 testable of 1
    case (Tarone: …)": no case could reach significance (5/5 against 5/5), and the line did not say so."""
    cmp = compare_sessions({"a": (5, 0)}, {"a": (5, 0)})
    assert ("no case can be called regressed or improved at these run counts (not even its most lopsided outcome "
            "would be significant, e.g. 3/3 against 0/3) — more runs a side decide") in format_comparison(cmp).splitlines()
    assert comparison_notes(cmp)[-1] == ("No case can be called regressed or improved at these run counts (not even "
                                         "its most lopsided outcome would be significant): more runs a side decide.")
