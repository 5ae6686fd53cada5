"""How the gate's numbers are shown (issue 22): a rate never rounds across its own threshold, k per
case, pass@k and pass^k with intervals, no interval without a rate in any output."""

from __future__ import annotations

import pytest

from scarbook.config import GatePolicy
from scarbook.models import SessionInfo
from scarbook.reports.github import step_summary
from scarbook.reports.html import render_html
from scarbook.reports.junit import build_junit
from scarbook.reports.table import SessionReport, case_dict, format_table
from scarbook.stats.decisions import gate_stats
from scarbook.stats.rates import summarize_counts
from scarbook.text import k_note, pct_beside


@pytest.mark.parametrize(("rate", "line", "shown"), [
    (39 / 49, 0.8, "79.6%"), (0.8, 0.8, "80%"), (0.9, 0.8, "90%"), (0.7996, 0.8, "79.96%"),
    (0.8004, 0.8, "80%"), (0.7949, 0.8, "79%"), (None, 0.8, "–"),
])
def test_a_rate_never_rounds_across_its_own_threshold(rate, line, shown) -> None:
    assert pct_beside(rate, line) == shown


def test_k_is_said_per_case_when_cases_differ() -> None:
    assert k_note({"a": 5, "b": 5}) == "k = 5"
    assert k_note({"a": 5, "b": 3}) == "k per case (its judged runs, at most 5): a 5, b 3"


def _report(*stats) -> SessionReport:
    session = SessionInfo("s1", case_ids=[s.case_id for s in stats], state="finished")
    statuses = {s.case_id: ["pass"] * s.passes + ["fail"] * s.fails + ["error"] * s.errors
                + ["unjudged"] * s.unjudged for s in stats}
    return SessionReport(session, gate_stats(list(stats), GatePolicy(), statuses), [])


def test_the_table_shows_79_6_and_each_cases_k() -> None:
    rep = _report(summarize_counts("close", 39, 10, 0, 0.8), summarize_counts("short", 2, 1, 0, 0.8))
    text = format_table(rep)
    row = next(line for line in text.splitlines() if line.startswith("close "))
    assert "79.6%" in row and " 80% " not in row
    assert "k per case (its judged runs, at most 5): close 5, short 3 for pass@k / pass^k" in text


def test_pass_at_k_and_pass_hat_k_intervals_are_the_wilson_interval_carried_through() -> None:
    from scipy.stats import binomtest

    s = summarize_counts("a", 9, 1, 0, 0.8)
    ci = binomtest(9, 10).proportion_ci(method="wilson")
    assert s.pass_hat_k_ci == pytest.approx((ci.low ** 5, ci.high ** 5))
    assert s.pass_at_k_ci == pytest.approx((1 - (1 - ci.low) ** 5, 1 - (1 - ci.high) ** 5))
    assert s.pass_hat_k_ci[0] <= s.pass_hat_k <= s.pass_hat_k_ci[1]


def test_no_interval_without_a_rate_in_any_output() -> None:
    rep = _report(summarize_counts("none", 0, 0, 3, 0.8), summarize_counts("unj", 0, 1, 0, 0.8, unjudged=2))
    for s in rep.stats:
        assert s.rate is None
        d = case_dict(s)
        assert (d["lo"], d["hi"], d["pass_at_k_ci"], d["pass_hat_k_ci"]) == (None, None, None, None)
    assert "–" in next(line for line in format_table(rep).splitlines() if line.startswith("none "))
    props = {p.get("name"): p.get("value") for tc in build_junit(rep).findall("testcase")
             for p in tc.find("properties")}
    assert props["interval"] == "" and props["pass_hat_k_interval"] == ""
    md = step_summary(rep)
    assert "| `none` | – | – |" in md
    page = render_html(rep)
    assert "[0–100%]" not in page and "stroke-width=\"5\"" not in page
