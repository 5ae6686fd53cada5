"""Before the runs, one line per case a plan cannot decide (issue 39.7, 37.11): 10 runs cannot show a
case meets 80% (it takes 14 straight passes), so every case would end undecided whatever it does."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("inprocess_demo")

LINE = "warning: {cid}: 10 runs cannot show ≥ 80%; 14 can; or use --runs auto"
CASES = ("fix-json-config", "rename-function", "review-api-claims", "write-one-line")


def test_a_plan_too_small_to_decide_says_so_per_case_before_the_runs(project) -> None:
    project.bundled(agent_seed=7, gate=None)  # the default evidence gate
    result = project.cli("eval", "--runs", "10", "-q")
    lines = result.stderr.splitlines()
    for cid in CASES:
        assert lines.count(LINE.format(cid=cid)) == 1, result.stderr
    assert result.stdout.index("case ") >= 0  # and the session still runs, as asked


@pytest.mark.parametrize("args", [("--runs", "14"), ("--runs", "auto"), ("--runs", "10", "--gate", "point")])
def test_a_plan_that_can_decide_says_nothing(project, args) -> None:
    project.bundled(agent_seed=7, gate=None)
    result = project.cli("eval", *args, "-q")
    assert "cannot show" not in result.stderr, result.stderr
