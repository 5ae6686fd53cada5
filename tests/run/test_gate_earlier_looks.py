"""`undecided: more` with a calibrated judge: every look's Holm family holds each calibrated case's
corrected evidence from its runs up to that look — what the runner's extender (run/runner._more_extender)
decided that look on — never the judge's raw verdicts.

Before, the report (run/gate.decide_gate -> stats/decisions.decide_in_looks) rebuilt each look but the
last from raw counts: a calibrated case whose biased judge missed passes brought a tiny raw p_below into
that look's family, which lowered a raw case's Holm-adjusted p and called it below at a look where the
runner, testing the calibrated case on its corrected rate, had not called it and gave it more runs."""

from __future__ import annotations

from scarbook.config import GatePolicy
from scarbook.models import RunRecord, SessionInfo
from scarbook.models.session_parts import GateRecord
from scarbook.run.gate import decide_gate
from scarbook.stats.binomial import binom_cdf
from scarbook.stats.corrected import correct
from scarbook.stats.corrected_gate import p_below
from scarbook.stats.decisions import CaseEvidence, decide_cases, make_extender
from scarbook.stats.judge_error import Stratum, estimate_error
from scarbook.stats.rates import summarize_counts
from tests.judge.test_label_files import judged_run
from tests.stats.test_corrected_gate import calibrated

MORE = GatePolicy.from_record({**GatePolicy().to_dict(), "undecided": "more"})
SID = "20261201-000001-000a"
LOOKS = [20, 40]
LEVEL = MORE.alpha / len(LOOKS)  # each look's Holm at .025


def test_an_earlier_looks_family_holds_the_corrected_evidence_the_runner_used() -> None:
    """c: calibrated, threshold 80%, a judge that misses 40% of true passes (q0 .95, q1 .6, 200 labels);
    it passed 10 of c's 20 runs at the first look: raw P(X <= 10 | 20, .8) = .0026, corrected it is far
    from below. x: raw, threshold 70%, 9 of 20 at the first look: P = .017, under .025 but over .025 / 2.
    With c raw in look 1's family, Holm calls x below there (max(2 x .0026, .017) < .025); with c
    corrected, as the runner tested it, x's Holm p is 2 x .017 = .034 and x ran on to 40 runs, 28 passes
    (70%, undecided). The report must say undecided, as the runner's looks left it, not below from its
    first 20 runs."""
    model = calibrated(0.8, 0.95, 0.6, 200)
    c_marks = "pf" * 20  # 10 of the first 20, 20 of 40
    x_marks = "p" * 9 + "f" * 11 + "p" * 19 + "f"  # 9 of the first 20, 28 of 40
    runs = {"c": [judged_run(SID, "c", k, "PASS" if m == "p" else "FAIL") for k, m in enumerate(c_marks, 1)],
            "x": [RunRecord(SID, "x", k, "pass" if m == "p" else "fail", "") for k, m in enumerate(x_marks, 1)]}
    statuses = {cid: [r.status for r in rs] for cid, rs in runs.items()}
    thresholds = {"c": 0.8, "x": 0.7}

    # the runner's first look: c on its corrected evidence from its first 20 runs (the look is its last)
    first = correct(10, 10, 0, model, threshold=0.8, alpha=LEVEL)
    assert first is not None and first.evidence is not None
    assert binom_cdf(10, 20, 0.8) < LEVEL / 2 < binom_cdf(9, 20, 0.7) < LEVEL
    at_first = decide_cases([CaseEvidence("c", 10, 10, 0, 0.8, corrected=first.evidence),
                             CaseEvidence("x", 9, 11, 0, 0.7)], MORE, alpha=LEVEL)
    assert [d.decision for d in at_first] == ["undecided", "undecided"], at_first  # x gets runs 21-40
    raw_first = decide_cases([CaseEvidence("c", 10, 10, 0, 0.8), CaseEvidence("x", 9, 11, 0, 0.7)], MORE, alpha=LEVEL)
    assert raw_first[1].decision == "below"  # what the raw family would have called

    stats = []
    for cid, ran in statuses.items():
        s = summarize_counts(cid, ran.count("pass"), ran.count("fail"), 0, thresholds[cid])
        if cid == "c":
            s.corrected = correct(ran.count("pass"), ran.count("fail"), 0, model, threshold=0.8, alpha=LEVEL)
        stats.append(s)
    info = SessionInfo(id=SID, started_at="2026-12-01T09:00:00+00:00", case_ids=["c", "x"], runs_per_case=40,
                       gate=GateRecord.read({**MORE.to_dict(), "looks": LOOKS}))
    gated = {s.case_id: s for s in decide_gate(info, stats, statuses, MORE, runs=runs)}
    assert gated["x"].decision == "undecided", (gated["x"].decision, gated["x"].gate_note)


def test_the_runners_later_look_replays_an_earlier_one_on_corrected_evidence() -> None:
    """The runner's extender at its second look (of 20, 40, 80; each at .05 / 3) replays the first: c as
    above (raw P = .0026 at 20 runs), x raw at 75% with 10 of its first 20 (P = .014, between .0167 / 2
    and .0167) and 30 of 40. With c corrected in look 1's family x is called at neither look and runs on
    to 80; with c's raw verdicts there, Holm called x below at look 1 and ended it at 40."""
    model = calibrated(0.8, 0.95, 0.6, 200)
    level = MORE.alpha / 3
    assert binom_cdf(10, 20, 0.8) < level / 2 < binom_cdf(10, 20, 0.75) < level
    statuses = {"c": ["pass", "fail"] * 20, "x": ["pass"] * 10 + ["fail"] * 10 + ["pass"] * 20}
    evidence = {}
    for size in (20, 40):
        found = correct(size // 2, size // 2, 0, model)
        assert found is not None and found.evidence is not None
        evidence[size] = {"c": found.evidence}
    extend = make_extender({"c": 0.8, "x": 0.75}, MORE, [20, 40, 80])
    assert extend(statuses, evidence) == {"c": 80, "x": 80}


def test_the_runners_later_look_keeps_a_calibrated_case_an_earlier_look_decided() -> None:
    """Looks at 10, 20, 40 (each at .05 / 3). c: calibrated (a judge the labels found right every time), 1
    judge PASS of 10 against 80%: at the first look it is the family's only case with a verdict (e's 6 errors
    of 10 leave it without one), corrected P(below) .012 < .0167: below, said, and it gets no more runs. At
    the second, e has 14 verdicts of 20 and joins the family: c's Holm P is 2 x .014 = .028. Before, the
    runner decided c again there — undecided — and ran it on to 40, after it had said it was decided below."""
    model = estimate_error([Stratum("c", "PASS", 30, 30, 0), Stratum("c", "FAIL", 10, 0, 10)]).for_case("c")
    found = correct(1, 9, 0, model)
    assert found is not None and found.evidence is not None
    level = MORE.alpha / 3
    assert p_below(found.evidence, 0.8, level, family=1) < level < 2 * p_below(found.evidence, 0.8, level, family=2)
    said: list[tuple[str, str, int]] = []
    extend = make_extender({"c": 0.8, "e": 0.5}, MORE, [10, 20, 40], lambda *told: said.append(told))
    c_runs, e_runs = ["pass"] + ["fail"] * 9, ["error"] * 6 + ["pass"] * 14
    assert extend({"c": c_runs, "e": e_runs[:10]}, {10: {"c": found.evidence}}) == {"e": 20}
    assert said == [("c", "below", 10)]
    assert extend({"c": c_runs, "e": e_runs}, {10: {"c": found.evidence}, 20: {"c": found.evidence}}) == {}
    assert said[1:] == [("c", "below", 10), ("e", "above", 20)]  # c as the first look decided it
