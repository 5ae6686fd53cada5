"""The band reads the rate the gate reads (issue 39.8): a judge-corrected case is coloured by its
corrected rate (raw 77% red beside ≈81% undecided), and a case without a verdict has no band (1 pass
and 9 errors showed green beside "no verdict")."""

from __future__ import annotations

from scarbook.config import GatePolicy
from scarbook.stats.corrected import Corrected
from scarbook.stats.decisions import gate_stats
from scarbook.stats.rates import summarize_counts


def test_one_pass_and_nine_errors_has_no_band() -> None:
    s = summarize_counts("c", 1, 0, 9, 0.8)
    assert s.band == "green"  # the raw rate alone (1/1)
    (gated,) = gate_stats([s], GatePolicy(), {"c": ["pass"] + ["error"] * 9})
    assert gated.decision == "no verdict" and gated.band == "none"


def test_a_corrected_case_is_coloured_by_its_corrected_rate() -> None:
    s = summarize_counts("c", 77, 23, 0, 0.8)
    assert s.band == "red"
    s.corrected = Corrected(0.81, 0.7, 0.9, 0.9, 0.9, 100, "2026-01-01", 0.001, 0.001)
    (gated,) = gate_stats([s], GatePolicy(), {"c": ["pass"] * 77 + ["fail"] * 23})
    assert gated.band == "yellow"
