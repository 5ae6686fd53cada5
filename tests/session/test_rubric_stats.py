"""Issue 35.3: on the bundled cases, given rubric items, and a generated history of 500 runs in which each
item behaves as planted, every flag is raised exactly where it was planted (dead, always fails, redundant,
unstable, judge unreliable), and every figure equals a count made by hand from the planting rules."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from scarbook.models import ItemFlag
from scarbook.session.rubric_stats import figures_json, rubric_stats
from tests.helpers.item_history import ONE_LINE, REVIEW, F, one_line_votes, plant_bundled, review_votes


@pytest.fixture
def planted(project):
    return plant_bundled(project)

def hand_counts(votes, sessions: int, runs: int, names: list[str]) -> dict[str, dict[str, int]]:
    """Per item: judged, fails, only-failing, disputed — by walking the planting rules, run by run."""
    out = {n: Counter() for n in names}
    for s in range(sessions):
        for k in range(1, runs + 1):
            verdicts = {n: Counter(votes(s, k, n)).most_common(1)[0][0] for n in names}
            failing = [n for n, v in verdicts.items() if v == F]
            for n in names:
                out[n]["judged"] += 1
                out[n]["fails"] += verdicts[n] == F
                out[n]["only"] += failing == [n]
                out[n]["repeated"] += len(votes(s, k, n)) > 1
                out[n]["disputed"] += len(set(votes(s, k, n))) > 1
    return out


PLANTED = {"a": {ItemFlag.REDUNDANT}, "b": {ItemFlag.REDUNDANT}, "c": {ItemFlag.DEAD}, "d": {ItemFlag.UNSTABLE},
           "e": {ItemFlag.JUDGE_UNRELIABLE}, "x": {ItemFlag.ALWAYS_FAILS}, "y": set()}


def test_every_flag_is_raised_exactly_where_it_was_planted_with_hand_counted_figures(planted) -> None:
    from scipy.stats import binomtest

    proj, cases, ids = planted
    stats = rubric_stats(proj, list(cases.values()))
    assert stats.runs_read == 4 * 95 + 3 * 40 == 500
    assert stats.lines_skipped == 2 and len(stats.problems) == 2  # both named, each with its fix
    assert set(stats.cases) == {"write-one-line", "review-api-claims"}  # the bundled cases with a rubric
    names = {v: k for k, v in ids.items()}
    flags = {names[f.item_id]: set(f.flags) for figures in stats.cases.values() for f in figures}
    assert flags == PLANTED
    a, b = (stats.item("write-one-line", ids[n]) for n in "ab")
    assert a.redundant_with == (ids["b"],) and b.redundant_with == (ids["a"],)
    assert a.reasons[ItemFlag.REDUNDANT] == f"with {ids['b']}: agree on 376 of 380 runs judged by both"

    for cid, votes, sessions, runs, group in (("write-one-line", one_line_votes, 4, 95, ONE_LINE),
                                               ("review-api-claims", review_votes, 3, 40, REVIEW)):
        hand = hand_counts(votes, sessions, runs, list(group))
        for name in group:
            f = stats.item(cid, ids[name])
            t = f.tally
            assert (t.judged, t.fails, t.only_failing, t.sessions) == (
                hand[name]["judged"], hand[name]["fails"], hand[name]["only"], sessions), name
            assert (t.repeated, t.disputed) == (hand[name]["repeated"], hand[name]["disputed"]), name
            ci = binomtest(t.fails, t.judged).proportion_ci(0.95, method="wilson")
            assert f.interval == pytest.approx((ci.low, ci.high), abs=1e-9), name
    d = stats.item("write-one-line", ids["d"])
    assert (d.tally.repeated, d.tally.disputed) == (380, 60) and d.disagreement == pytest.approx(60 / 380)
    e = stats.item("write-one-line", ids["e"])
    assert (e.tally.labels.n, e.tally.labels.wrong) == (10, 3)
    assert (e.agreement, e.sensitivity, e.specificity) == (0.7, 2 / 5, 1.0)
    assert e.reasons[ItemFlag.JUDGE_UNRELIABLE] == "people's labels say the judge was wrong on 3 of 10"
    x = stats.item("review-api-claims", ids["x"])
    assert x.reasons[ItemFlag.ALWAYS_FAILS] == "failed in every one of 120 runs over 3 sessions"
    assert stats.item("write-one-line", ids["c"]).reasons[ItemFlag.DEAD] == "never failed in 380 runs over 4 sessions"


def test_the_json_holds_the_same_figures(planted) -> None:
    proj, cases, ids = planted
    doc = json.loads(json.dumps(figures_json(rubric_stats(proj, list(cases.values())))))
    [x] = [i for i in doc["cases"]["review-api-claims"] if i["id"] == ids["x"]]
    assert (x["runs_judged"], x["fails"], x["only_failing"], x["flags"]) == (120, 120, 90, ["always fails"])
    assert doc["lines_skipped"] == 2 and doc["runs_read"] == 500
