"""Words that match the default evidence gate (issue 37.12): exit 0 means no case was shown below its
threshold — not that every case is at or above it — in the step summary's heading (it said "exit 0
(green)" above a red-band row), `merge --help` and the README."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.config import GatePolicy
from scarbook.models import SessionInfo
from scarbook.reports.github import step_summary
from scarbook.reports.table import SessionReport
from scarbook.stats.decisions import gate_stats
from scarbook.stats.rates import summarize_counts

REPO = Path(__file__).resolve().parents[2]


def test_the_step_summary_heading_does_not_call_an_undecided_red_case_green() -> None:
    s = summarize_counts("c", 9, 3, 0, 0.8)  # 75%: red band, undecided (too few runs to show it below)
    stats = gate_stats([s], GatePolicy(), {"c": ["pass"] * 9 + ["fail"] * 3})
    rep = SessionReport(SessionInfo("s1", case_ids=["c"], state="finished"), stats, [])
    assert rep.exit_code == 0 and stats[0].band == "red" and stats[0].gate == "undecided"
    heading = step_summary(rep).splitlines()[0]
    assert heading == "## scarbook: s1 — exit 0 (no case shown below its threshold)"
    assert "green" not in heading


def test_merge_help_says_what_exit_0_means_under_the_gate() -> None:
    text = " ".join(CliRunner().invoke(main, ["merge", "--help"]).output.split())
    assert "every case at or above its threshold" not in text
    assert "0 no case shown below its threshold" in text


def test_the_readme_says_what_exit_0_means_under_the_default_gate() -> None:
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "**0** every case at or above its threshold" not in readme
    assert "**0** no case shown below its threshold" in readme


def test_the_readme_compares_runs_auto_with_the_fixed_n_the_summary_prints() -> None:
    """--runs auto's summary compares its runs with the fixed N right as often as the rule (19 a case at
    80%, sequential.matched_fixed_n); the README promised 'far fewer runs than the 41 a fixed-N test
    with the same guarantee needs' (Wald's figure, which the truncated rule does not reach), so a
    suite that spent 149 runs beside the summary's 114 read as a broken promise (issue 37.12)."""
    from scarbook.session.plan import DEFAULT_MAX_RUNS
    from scarbook.stats.sequential import SequentialRule, matched_fixed_n

    readme = " ".join((REPO / "README.md").read_text().split())
    assert "the 41 a fixed-N test" not in readme
    n = matched_fixed_n(SequentialRule(0.8, max_runs=DEFAULT_MAX_RUNS))
    assert f"{n} runs a case at a threshold of 80%" in readme
    assert "cases near their threshold take more" in readme
