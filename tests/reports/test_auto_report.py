"""`--runs auto` reports what its rule read (issue 39.3, 39.8, 37.12): the rate, interval and counts
come from exactly the runs the sequential rule read (fails the machine caused are not evidence, as
in the runner) and from the rule that read them (the judge-aware one when the session's rule knew
the judge's error); the table's footer says what the columns are; the summary says what the runs
were spent on beside fixed-N tests."""

from __future__ import annotations

import pytest

from scarbook.config import Config, GatePolicy
from scarbook.models import Cause, RunRecord, SessionInfo
from scarbook.models.session_parts import GateRecord
from scarbook.reports.table import build_report, case_dict, format_summary, format_table
from scarbook.stats.sequential import SequentialRule, adjusted_rate, read_until_stop

INFRA = Cause("infra", "api-overloaded", "529 overloaded")


def _runs(sid: str, case: str, marks: str) -> list[RunRecord]:
    """p pass, f fail (the agent's), i fail the machine caused, e error, in launch (k) order."""
    out = []
    for k, m in enumerate(marks, 1):
        status = {"p": "pass", "f": "fail", "i": "fail", "e": "error"}[m]
        out.append(RunRecord(sid, case, k, status, status, cause=INFRA if m == "i" else None))
    return out


def _session(decision: str, cap: int, rates: dict | None = None) -> SessionInfo:
    gate = {**GatePolicy().to_dict(), "looks": [cap], **({"judge_rates": rates} if rates else {})}
    return SessionInfo("s1", case_ids=["c"], runs_per_case=cap, state="finished", decisions={"c": decision},
                       gate=GateRecord.read(gate))  # as session.json holds it


def test_infra_fails_are_left_out_of_the_reported_rate_as_the_rule_left_them_out() -> None:
    """12 passes with 2 machine-caused fails among them: the rule read 12/12 and said above; the
    report said 'adjusted from 12/14' with a rate under 100%."""
    marks = "pppppippppppip"  # 12 passes, two infra fails; the rule is above at its 12th pass
    cfg = Config()
    rep = build_report(_session("above", 40), _runs("s1", "c", marks), {}, cfg)
    (s,) = rep.stats
    assert (s.passes, s.fails, s.unread) == (12, 0, 2)
    assert s.rate_note == "adjusted from 12/12" and s.rate == 1.0
    d = case_dict(s)
    assert (d["passes"], d["fails"], d["unread"]) == (12, 0, 2)
    table = format_table(rep)
    row = next(line for line in table.splitlines() if line.startswith("c "))
    assert row.split()[1:3] == ["12", "0"]
    assert "--runs auto: pass and fail are the runs its rule read" in table
    assert "rate = passes / (passes + fails)" not in table
    summary = format_summary(rep)
    assert ("c: 2 runs with a verdict not read by --runs auto's rule (finished after it decided, or failed by the "
            "machine): not in its counts or rate") in summary


def _as_read(marks: str, infra_as: str = "infra") -> list[str]:
    return [{"p": "pass", "f": "fail", "i": infra_as, "e": "error"}[m] for m in marks]


def test_an_undecided_case_reports_the_runs_the_rule_read_not_a_prefix() -> None:
    """22 passes, 6 agent fails, 12 infra fails: the report read the runs as if the machine's fails
    were the agent's, stopped where the rule never stopped ('adjusted from 2/6') and printed that."""
    marks = "ppiiiipppfiipfppppfppiifpipiippfipfppppp"
    assert (marks.count("p"), marks.count("f"), marks.count("i")) == (22, 6, 12)
    rule = SequentialRule(0.8, max_runs=40)
    read = read_until_stop(rule, _as_read(marks))
    assert read != read_until_stop(rule, _as_read(marks, infra_as="fail"))  # what the report used to read
    rep = build_report(_session("undecided", 40), _runs("s1", "c", marks), {}, Config())
    (s,) = rep.stats
    assert (s.passes, s.fails) == read
    assert s.rate_note == f"adjusted from {read[0]}/{sum(read)}"
    assert s.rate == adjusted_rate(rule, *read)
    assert s.unread == 12 + 28 - sum(read)


def test_a_calibrated_rule_reports_with_the_rule_that_read_the_runs() -> None:
    """The judge-aware rule (q0 .9, q1 .95) ran on; the plain rule would have stopped earlier (the
    report printed 'rate 0.617 adjusted from 6/11' beside 'undecided at 27/40')."""
    marks = "ppppppfffffpppppppppfpppppfpfppfpfpfffpp"
    assert len(marks) == 40
    plain = SequentialRule(0.8, max_runs=40)
    judged = SequentialRule(0.8, max_runs=40, q0=0.9, q1=0.95)
    read = read_until_stop(judged, _as_read(marks))
    assert read_until_stop(plain, _as_read(marks)) != read
    decision = judged.decide(*read) or "undecided"
    rep = build_report(_session(decision, 40, {"c": [0.9, 0.95]}), _runs("s1", "c", marks), {}, Config())
    (s,) = rep.stats
    assert (s.passes, s.fails) == read
    assert s.rate_note == f"adjusted from {read[0]}/{sum(read)}; the judge's error taken out (q0 0.90, q1 0.95)"
    p = adjusted_rate(judged, *read)
    assert s.rate == pytest.approx(min(1.0, max(0.0, (p - 0.1) / 0.85)))  # on the true rate, as the rule's hypotheses
    assert s.lo <= s.rate <= s.hi


def test_the_summary_says_why_auto_can_spend_more_than_fixed_n() -> None:
    marks = "p" * 12  # above at its 12th pass, then 3 more runs that had already started
    rep = build_report(_session("above", 40), _runs("s1", "c", marks + "ppf"), {}, Config())
    summary = format_summary(rep)
    line = next(x for x in summary.splitlines() if x.startswith("adaptive (--runs auto)"))
    (s,) = rep.stats
    assert (s.passes, s.fails, s.unread) == (12, 0, 3)
    assert "15 runs spent — 12 read by the rule, 3 it did not read" in line
    assert "fixed-N tests right as often at threshold ± 10 points as this rule would take 19 (19 a case;" in line
    assert "more on cases near their threshold" in line


def test_k_says_why_a_case_with_2_runs_has_k_1_and_leaves_out_cases_without_a_rate() -> None:
    """'k per case' said 1 for a case with 2 runs (one errored) with nothing saying why, and listed a
    case with no rate at all."""
    from scarbook.stats.rates import summarize_counts

    stats = [summarize_counts("full", 9, 1, 0, 0.8), summarize_counts("two", 1, 0, 1, 0.8),
             summarize_counts("none", 0, 0, 2, 0.8)]
    rep = build_report(SessionInfo("s1", case_ids=[], state="finished"), [], {}, Config())
    rep.stats = stats
    text = format_table(rep)
    assert "k per case (its judged runs, at most 5): full 5, two 1 for pass@k" in text


def test_a_session_with_no_rate_says_there_is_no_k() -> None:
    """Every run unjudged (--skip-judge) or errored: no case has a rate, and the footer said 'k = 0 for
    pass@k / pass^k' as if pass@0 had been measured."""
    from scarbook.reports.github import step_summary
    from scarbook.stats.rates import summarize_counts

    rep = build_report(SessionInfo("s1", case_ids=[], state="finished"), [], {}, Config())
    rep.stats = [summarize_counts("c", 0, 0, 2, 0.8)]
    assert "k = – (no case has a rate) for pass@k / pass^k" in format_table(rep)
    assert "pass^k with k = – (no case has a rate)." in step_summary(rep)
    assert "k = 0" not in format_table(rep) + step_summary(rep)


def test_a_case_without_a_verdict_has_no_band_after_the_stop() -> None:
    """Issue 39.8 on --runs auto: the rule said above at its 12th pass, but 22 of the 34 runs errored,
    so the case has no verdict; its band was coloured by the rule's rate (green beside 'no verdict')."""
    marks = "pee" * 11 + "p"  # 12 passes, 22 errors: 12 judged runs of 34, the gate needs 17
    rep = build_report(_session("above", 40), _runs("s1", "c", marks), {}, Config())
    (s,) = rep.stats
    assert (s.passes, s.errors, s.decision) == (12, 22, "no verdict")
    assert s.band == "none" and case_dict(s)["band"] == "none"
    row = next(line for line in format_table(rep).splitlines() if line.startswith("c "))
    assert "green" not in row, row


def test_the_json_report_keeps_a_margin_only_for_a_case_the_rule_decided() -> None:
    """A case --runs auto decided below (5 fails of 5 at 80%: its interval stays under 80%) has its margin with
    no note; a case undecided at the cap, and a case of a fixed-N session, have none (null)."""
    (below,) = build_report(_session("below", 40), _runs("s1", "c", "fffff"), {}, Config()).stats
    assert below.hi < 0.8
    assert case_dict(below)["margin"] == {
        "points": 10, "hypotheses": [0.7, 0.9], "rules_out": 0.9,
        "words": "below 80% (within its 10-point margin: its runs rule out 90% or more)", "note": None}
    marks = "ppiiiipppfiipfppppfppiifpipiippfipfppppp"  # undecided at 40 (the test above)
    (undecided,) = build_report(_session("undecided", 40), _runs("s1", "c", marks), {}, Config()).stats
    fixed = SessionInfo("s2", case_ids=["c"], runs_per_case=30, state="finished")
    (above,) = build_report(fixed, _runs("s2", "c", "p" * 30), {}, Config()).stats
    assert (undecided.gate, above.gate) == ("undecided", "above")
    assert case_dict(undecided)["margin"] is None and case_dict(above)["margin"] is None


@pytest.mark.parametrize(("threshold", "decision", "marks", "margin"), [
    (0.08, "above", "pfffffffffp", {"points": 7, "hypotheses": [0.01, 0.18], "rules_out": 0.01,
                                    "words": "above 8% (within its 7-point margin: its runs rule out 1% or less)"}),
    (0.95, "below", "ppppppppppff", {"points": 4, "hypotheses": [0.85, 0.99], "rules_out": 0.99,
                                     "words": "below 95% (within its 4-point margin: its runs rule out 99% or more)"}),
    (0.95, "above", "p" * 20, {"points": 10, "hypotheses": [0.85, 0.99], "rules_out": 0.85,
                               "words": "above 95% (within its 10-point margin: its runs rule out 85% or less)"}),
])
def test_the_margin_is_the_true_distance_where_the_rule_clips_its_hypothesis(threshold, decision, marks, margin) -> None:
    """At 8% the rule's lower hypothesis is kept off 0 (1%, not −2%) and at 95% its upper one off 1 (99%, not
    105%): the margin a decision rules out is 7 or 4 points, not 10. `rules_out` had the true rate, but `points`
    and the words said 10."""
    rep = build_report(_session(decision, 40), _runs("s1", "c", marks), {}, Config(threshold=threshold))
    (s,) = rep.stats
    assert s.gate == decision
    assert {k: v for k, v in case_dict(s)["margin"].items() if k != "note"} == margin


def test_the_step_summary_names_a_below_decision_within_its_margin_in_its_gate_cell() -> None:
    """The rule said below at 10 passes of 15 (90% ruled out), and the interval after the stop, 43–89%, reaches
    over 80%: the gate cell said a bare "**below**" with the margin only in a paragraph under the table."""
    from scarbook.reports.github import step_summary

    rep = build_report(_session("below", 40), _runs("s1", "c", "ppppfffpppfpppf"), {}, Config())
    md = step_summary(rep).splitlines()
    row = next(i for i, line in enumerate(md) if line.startswith("| `c` |"))
    assert md[row] == "| `c` | 73% | 43–89% | 8% | red | **below** (10-pt margin) | 10 / 5 / 0 |"
    assert md.index("c: below 80% (within its 10-point margin: its runs rule out 90% or more) — its 95% interval "
                    "43–89% still reaches over 80%") > row


def test_the_table_names_a_below_decision_within_its_margin_in_its_gate_column() -> None:
    """Below at 10 of 15, its interval 43–89% reaching over 80%: the text table's gate column said a bare "BELOW",
    the margin only in the summary's line; it now says "BELOW (10-pt margin)", the runs strip under its heading."""
    rep = build_report(_session("below", 40), _runs("s1", "c", "ppppfffpppfpppf"), {}, Config())
    lines = format_table(rep).splitlines()
    assert lines[0].index("runs") == lines[2].index("✓")
    assert lines[2] == ("c                          10    5    0   73%   43– 89%      100%     8%  red    BELOW (10-pt margin) "
                        "✓✓✓✓✗✗✗✓✓✓✗✓✓✓✗")


def test_an_annotation_for_a_case_above_within_its_margin_carries_the_margin() -> None:
    """Above at 12 of 12 with one errored run: the case's one annotation is the errored run's warning, with the
    margin after it; without the error it is a notice (tests/reports/test_ci_outputs.py, a real session)."""
    from scarbook.reports.github import case_annotations

    rep = build_report(_session("above", 40), _runs("s1", "c", "p" * 12 + "e"), {}, Config())
    assert case_annotations(rep, None, {"c": "cases/c/case.yaml"}) == [
        "::warning file=cases/c/case.yaml,title=scarbook%3A c needs attention::1 run errored (harness could not "
        "reach a verdict; not in the rate); above 80%25 (within its 10-point margin: its runs rule out 70%25 or "
        "less) — its 95%25 interval 74–100%25 still reaches under 80%25"]


@pytest.mark.parametrize(("thresholds", "words"), [
    ([0.8], "threshold ± 10 points"),
    ([0.08], "threshold − 7 and + 10 points"),
    ([0.95], "threshold − 10 and + 4 points"),
    ([0.8, 0.08, 0.95], "each case's threshold − 7 to 10 and + 4 to 10 points"),
])
def test_the_fixed_n_comparison_names_the_margin_the_rule_weighed(thresholds: list[float], words: str) -> None:
    """At 8% the rule weighs 1% against 18% (its lower hypothesis kept off 0): the summary said 'threshold ± 10
    points' whatever the thresholds."""
    from scarbook.models import Case

    ids = [f"c{i}" for i in range(len(thresholds))]
    cases = {cid: Case(id=cid, task="t", threshold=t) for cid, t in zip(ids, thresholds, strict=True)}
    gate = {**GatePolicy().to_dict(), "looks": [40]}
    session = SessionInfo("s1", case_ids=ids, runs_per_case=40, state="finished",
                          decisions={cid: "above" for cid in ids}, gate=GateRecord.read(gate))
    runs = [r for cid in ids for r in _runs("s1", cid, "p" * 30)]
    line = next(x for x in format_summary(build_report(session, runs, cases, Config())).splitlines()
                if x.startswith("adaptive (--runs auto)"))
    assert f"fixed-N tests right as often at {words} as this rule would take" in line
