"""Session diff numbers, checked against scipy and a published worked example."""

from __future__ import annotations

import math

import pytest
from scipy.stats import fisher_exact, norm

from scarbook.compare import (
    Counts,
    compare_case,
    compare_sessions,
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


def test_compare_sessions_single_case_has_no_standard_error():
    cmp = compare_sessions({"a": (3, 1)}, {"a": (2, 2)})
    assert cmp.se is None and cmp.mean_interval is None


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
    cmp = compare_sessions({"a": (20, 0), "b": (0, 20)}, {"a": (0, 20), "b": (0, 20)})
    lo, hi = cmp.mean_interval
    assert lo == -1.0 and -1.0 < hi < 1.0


def test_counts_by_case_keeps_errors_apart():
    from scarbook.compare import counts_by_case
    from scarbook.models import RunRecord

    runs = [RunRecord("s", case, k, status, "") for k, (case, status) in enumerate(
        [("a", "pass"), ("a", "fail"), ("a", "error"), ("b", "pass"), ("a", "pass")])]
    assert counts_by_case(runs) == {"a": Counts(2, 1, 1), "b": Counts(1, 0, 0)}
    assert counts_by_case(runs)["a"].rate == pytest.approx(2 / 3)


def test_changed_cases_names_cases_whose_checks_changed():
    from scarbook.compare import changed_cases
    from scarbook.models import SessionInfo

    a = SessionInfo("s1", case_digests={"x": "d1", "y": "d2", "gone": "d3", "old": ""})
    b = SessionInfo("s2", case_digests={"x": "d1", "y": "CHANGED", "new": "d4", "old": "d5"})
    assert changed_cases(a, b) == ["y"]
