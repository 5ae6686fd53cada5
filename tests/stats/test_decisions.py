"""The gate's three-way decisions (scarbook.stats.decisions) against scipy: the exact binomial tails,
the Holm step-down, the minimum number of verdicts, the range errors could span, and (by exact
enumeration, not simulation) the family-wise false-red rate of a small suite."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scarbook.config import GatePolicy
from scarbook.stats.decisions import (
    CaseEvidence,
    binom_cdf,
    binom_sf,
    decide_cases,
    error_range,
    holm_adjust,
    min_verdicts_for,
    point_false_red_chance,
    runs_to_decide,
)


@pytest.mark.parametrize("c,n,p", [(0, 1, 0.8), (8, 10, 0.8), (10, 10, 0.8), (3, 10, 0.5), (35, 40, 0.8),
                                   (0, 600, 0.3), (480, 600, 0.8), (590, 600, 0.99), (1, 2000, 0.001)])
def test_binomial_tails_match_scipy(c: int, n: int, p: float) -> None:
    from scipy.stats import binom

    assert binom_cdf(c, n, p) == pytest.approx(binom.cdf(c, n, p), rel=1e-9, abs=1e-300)
    assert binom_sf(c, n, p) == pytest.approx(binom.sf(c - 1, n, p), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("c,n,t", [(10, 10, 0.8), (5, 10, 0.8), (20, 20, 0.8), (30, 40, 0.9), (2, 10, 0.5)])
def test_one_sided_p_values_are_scipys_binomtest(c: int, n: int, t: float) -> None:
    from scipy.stats import binomtest

    [d] = decide_cases([CaseEvidence("x", c, n - c, 0, t)], GatePolicy(min_verdicts=1))
    assert d.p_above == pytest.approx(binomtest(c, n, t, alternative="greater").pvalue, rel=1e-9)
    assert d.p_below == pytest.approx(binomtest(c, n, t, alternative="less").pvalue, rel=1e-9)


def test_holm_matches_a_hand_computed_step_down() -> None:
    ps = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    assert holm_adjust(ps) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_three_way_decisions() -> None:
    cases = [CaseEvidence("sure", 20, 0, 0, 0.8), CaseEvidence("bad", 2, 8, 0, 0.8),
             CaseEvidence("close", 8, 2, 0, 0.8), CaseEvidence("nine", 9, 1, 0, 0.8)]
    got = {d.case_id: d.decision for d in decide_cases(cases)}
    assert got == {"sure": "above", "bad": "below", "close": "undecided", "nine": "undecided"}


def test_point_mode_is_the_old_rule() -> None:
    cases = [CaseEvidence("a", 8, 2, 0, 0.8), CaseEvidence("b", 7, 3, 0, 0.8)]
    got = [d.decision for d in decide_cases(cases, GatePolicy(mode="point"))]
    assert got == ["above", "below"]


def test_ten_cases_of_a_ninety_percent_agent_at_ten_runs_are_never_called_below() -> None:
    # The headline: point mode goes red in about half of these sessions. In evidence mode
    # the most extreme likely outcome (6/10 on one case, the others 9/10) is not enough for red.
    cases = [CaseEvidence(f"c{i}", 9, 1, 0, 0.8) for i in range(9)] + [CaseEvidence("c9", 6, 4, 0, 0.8)]
    assert {d.decision for d in decide_cases(cases)} == {"undecided"}
    assert {d.decision for d in decide_cases(cases, GatePolicy(mode="point"))} == {"above", "below"}


def test_undecided_says_how_many_more_runs() -> None:
    from scipy.stats import binom

    [d] = decide_cases([CaseEvidence("x", 10, 0, 0, 0.8)])
    assert d.decision == "undecided"
    # 0.8^14 = 0.044 < 0.05 and 0.8^13 = 0.055: four more clean runs decide it
    assert d.runs_needed == 4
    assert d.why == "needs about 4 more runs to show it meets 80%"
    [d] = decide_cases([CaseEvidence("x", 6, 4, 0, 0.8)])
    assert d.decision == "undecided" and d.why.endswith("to show it is below 80%")
    assert binom.cdf(round(0.6 * (10 + d.runs_needed)), 10 + d.runs_needed, 0.8) < 0.05
    [d] = decide_cases([CaseEvidence("x", 8, 2, 0, 0.8)])
    assert d.runs_needed is None and d.why == "its rate sits at its threshold 80%: more runs are unlikely to decide it"


def test_runs_to_decide_is_the_smallest_count_that_decides() -> None:
    from scipy.stats import binom

    extra = runs_to_decide(19, 1, 0.8, 0.05)
    n = 20 + extra
    assert binom.sf(round(0.95 * n) - 1, n, 0.8) < 0.05
    assert binom.sf(round(0.95 * (n - 1)) - 1, n - 1, 0.8) >= 0.05


@pytest.mark.parametrize("runs,expected", [(1, 1), (2, 2), (3, 3), (5, 3), (6, 3), (10, 5), (11, 6), (40, 20)])
def test_min_verdicts_default_is_half_the_runs_at_least_three_at_most_all(runs: int, expected: int) -> None:
    assert min_verdicts_for(runs) == expected
    assert min_verdicts_for(runs, 2) == 2


def test_one_pass_and_nine_errors_has_no_verdict_in_either_mode() -> None:
    for mode in ("evidence", "point"):
        [d] = decide_cases([CaseEvidence("x", 1, 0, 9, 0.8)], GatePolicy(mode=mode))
        assert d.decision == "no verdict"
        assert d.why == ("only 1 of its 10 runs reached a verdict; the gate needs at least 5 "
                         "(errors cannot count as evidence)")


def test_the_range_errors_could_span() -> None:
    assert error_range(8, 2, 30) == (0.2, 0.95)
    assert error_range(1, 0, 9) == (0.1, 1.0)
    assert error_range(8, 2, 0) is None


def test_a_case_with_unjudged_runs_has_no_verdict() -> None:
    [d] = decide_cases([CaseEvidence("x", 0, 0, 0, 0.8, unjudged=5)])
    assert d.decision == "no verdict" and d.why == "5 of its runs went unjudged (judge checks skipped)"


@pytest.mark.parametrize("bad,message", [
    ({"mode": "loose"}, "gate mode must be one of evidence, point, got 'loose'"),
    ({"alpha": 0.5}, "gate alpha must be between 0 and 0.5, got 0.5"),
    ({"undecided": "maybe"}, "gate undecided must be one of fail, pass, more, got 'maybe'"),
    ({"min_verdicts": 0}, "gate min_verdicts must be a whole number of at least 1, got 0"),
])
def test_bad_policies_say_why(bad: dict, message: str) -> None:
    with pytest.raises(ValueError) as err:
        GatePolicy(**bad)
    assert str(err.value) == message


def _family_false_red(m: int, n: int, p: float, t: float, mode: str) -> float:
    """Exact P(any case called below) for m independent cases at true rate p >= t, by enumerating
    every outcome of the m cases (scipy's pmf as the weights)."""
    from scipy.stats import binom

    pmf = binom.pmf(np.arange(n + 1), n, p)
    total = 0.0
    for outcome in itertools.product(range(n + 1), repeat=m):
        cases = [CaseEvidence(f"c{i}", c, n - c, 0, t) for i, c in enumerate(outcome)]
        if any(d.decision == "below" for d in decide_cases(cases, GatePolicy(mode=mode))):
            total += float(np.prod([pmf[c] for c in outcome]))
    return total


@pytest.mark.parametrize("m,n", [(1, 10), (2, 10), (3, 5), (1, 40)])
@pytest.mark.parametrize("p", [0.8, 0.9])
def test_family_false_red_is_at_most_alpha_exactly(m: int, n: int, p: float) -> None:
    assert _family_false_red(m, n, p, 0.8, "evidence") <= 0.05
    if m > 1 and p == 0.8:  # the old rule, for contrast: a case at its threshold is red a third of the time
        assert _family_false_red(m, n, p, 0.8, "point") > 0.3


def test_point_false_red_chance_at_observed_rates() -> None:
    from scipy.stats import binom

    cases = [CaseEvidence("a", 9, 1, 0, 0.8), CaseEvidence("b", 10, 0, 0, 0.8), CaseEvidence("c", 5, 5, 0, 0.8)]
    # b at 100% never reads below; c is observed below (its red would be true); a: P(X <= 7 | 10, 0.9)
    assert point_false_red_chance(cases) == pytest.approx(binom.cdf(7, 10, 0.9), rel=1e-9)


def _load_gate(project, text: str):
    from scarbook.config import load_config

    (project.root / "scarbook.yaml").write_text(text)
    return load_config(project.root / "scarbook.yaml").gate


def test_a_project_without_a_gate_key_gets_evidence_mode(project) -> None:
    assert _load_gate(project, "runs: 5\n") == GatePolicy("evidence", 0.05, "pass", None)
    assert _load_gate(project, "gate:\n  mode: point\n  alpha: 0.01\n  undecided: fail\n  min_verdicts: 4\n") \
        == GatePolicy("point", 0.01, "fail", 4)


@pytest.mark.parametrize("text,message", [
    ("gate:\n  mode: evidence\n  alfa: 0.1\n", "3: unknown key gate.alfa — gate takes: mode, alpha, undecided, "
     "min_verdicts, compare"),
    ("gate:\n  mode: strict\n", "2: gate.mode must be one of evidence, point, got 'strict' — write mode: evidence "
     "(or point, the rate >= threshold rule)"),
    ("runs: 3\ngate:\n  alpha: 0.5\n", "3: gate.alpha must be between 0 and 0.5, got 0.5 — write alpha: 0.05"),
    ("gate:\n  undecided: warn\n", "2: gate.undecided must be one of fail, pass, more, got 'warn' — write undecided: "
     "pass (or fail for a release gate, more to add runs)"),
    ("gate:\n  min_verdicts: 0\n", "2: gate.min_verdicts must be a whole number of at least 1, got 0 — write "
     "min_verdicts: 3, or leave it out (half the runs, at least 3)"),
    ("gate: strict\n", "1: gate must be a mapping, got 'strict' — write gate: {mode: evidence, alpha: 0.05, "
     "undecided: pass}"),
])
def test_bad_gate_settings_name_the_file_key_and_line(project, text: str, message: str) -> None:
    from scarbook.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        _load_gate(project, text)
    assert str(err.value) == f"{project.root / 'scarbook.yaml'}:{message}"


def test_a_sequential_decision_history_does_not_know_decides_nothing():
    """session.json's decisions are plain strings: a word the SPRT never writes (a damaged or edited
    file) reads as undecided, not as a decision of its own (it was passed through as the gate)."""
    from scarbook.stats.decisions import gate_stats
    from scarbook.stats.rates import summarize_counts

    stats = [summarize_counts("c", 10, 0, 0, 0.8), summarize_counts("d", 10, 0, 0, 0.8)]
    statuses = {"c": ["pass"] * 10, "d": ["pass"] * 10}
    out = gate_stats(stats, GatePolicy(), statuses, sequential={"c": "green", "d": "above"})
    assert [(s.case_id, s.gate) for s in out] == [("c", "undecided"), ("d", "above")]


@pytest.mark.parametrize("errors, why", [
    (1, "only 0 of its 1 run reached a verdict; the gate needs at least 1 (errors cannot count as evidence)"),
    (2, "only 0 of its 2 runs reached a verdict; the gate needs at least 2 (errors cannot count as evidence)")])
def test_a_case_of_one_errored_run_says_one_run(errors: int, why: str) -> None:
    [d] = decide_cases([CaseEvidence("x", 0, 0, errors, 0.8)], GatePolicy())
    assert (d.decision, d.why) == ("no verdict", why)
