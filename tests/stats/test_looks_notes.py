"""An earlier look's decision is all that is read of it: runs_to_decide ("needs about N more runs"), which
scans up to SCAN_LIMIT run counts (25-250 ms for a case near its line before stats/runs_needed.py stepped its
tails, about 36x less since), runs only for the notes a caller
shows — the last look's undecided cases in a report, none in the runner's looks (make_extender), which read
only the decisions. Before, every look of every runner step computed it for every undecided raw case."""

from __future__ import annotations

import pytest

from scarbook.config import GatePolicy
from scarbook.stats import decisions
from scarbook.stats.decisions import Decision, decide_in_looks, make_extender

MORE = GatePolicy(undecided="more")
THRESHOLDS = {f"c{i}": 0.8 for i in range(5)}
# each case passes 4 runs in 5: 80% exactly on the line at every look; c4 a little over it (34 of 40 at the
# last look): undecided at every look, each with a note due at the last
RUNS = {cid: (["pass"] * 4 + ["fail"]) * 8 for cid in THRESHOLDS}
RUNS["c4"] = (["pass"] * 13 + ["fail"] * 3) * 3


@pytest.fixture
def scans(monkeypatch) -> list[tuple]:
    seen: list[tuple] = []
    real = decisions.runs_to_decide

    def counted(*args):
        seen.append(args)
        return real(*args)

    monkeypatch.setattr(decisions, "runs_to_decide", counted)
    return seen


def test_the_runner_looks_without_scanning(scans) -> None:
    extend = make_extender(THRESHOLDS, MORE, [10, 20, 40])
    statuses = {cid: runs[:20] for cid, runs in RUNS.items()}
    assert extend(statuses) == {cid: 40 for cid in THRESHOLDS}  # all undecided after the first two looks
    assert scans == []


def test_a_report_notes_only_the_last_look(scans) -> None:
    statuses = {cid: runs[:40] for cid, runs in RUNS.items()}
    decided = decide_in_looks(statuses, THRESHOLDS, MORE, [10, 20, 40])
    assert {d.decision for d in decided.values()} == {Decision.UNDECIDED}
    assert sorted(args[:2] for args in scans) == [(32, 8)] * 4 + [(34, 6)]  # each case once, at 40 runs: not at 10 or 20
    assert decided["c4"].why.startswith("needs about ") and decided["c4"].runs_needed is not None
    assert decided["c0"].why == "its rate sits at its threshold 80%: more runs are unlikely to decide it"
