"""`scarbook eval --dry-run`: what a session would run, said as the plan knows it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = "id: {cid}\ntask: t\nthreshold: {threshold}\nchecks: [{{type: file_exists, path: x}}]\n"


def test_runs_auto_says_the_runs_are_at_most_the_cap(project) -> None:
    """`--runs auto --dry-run` said 'dry run: 2 cases x 40 runs = 80 agent runs', as if every case ran its cap;
    each stops once its evidence decides it (at 80%, after 5 runs at the fewest). The fewest is not said: it is
    the statistics' to compute, which this dry run does not load (tests/cli/test_startup.py)."""
    project.case("a", CASE.format(cid="a", threshold=0.8))
    project.case("b", CASE.format(cid="b", threshold=0.5))
    result = project.cli("eval", "--runs", "auto", "--dry-run")
    assert (result.exit_code, result.stdout.splitlines()[0]) == (
        0, "dry run: 2 cases x at most 40 runs = at most 80 agent runs (--runs auto: each case stops once the "
           "evidence decides it)")
    capped = project.cli("eval", "--runs", "auto", "--max-runs", "12", "--dry-run")
    assert capped.stdout.splitlines()[0] == ("dry run: 2 cases x at most 12 runs = at most 24 agent runs (--runs "
                                             "auto: each case stops once the evidence decides it)")


def test_a_fixed_number_of_runs_is_said_as_it_is(project) -> None:
    project.case("a", CASE.format(cid="a", threshold=0.8))
    result = project.cli("eval", "--runs", "7", "--dry-run")
    assert result.stdout.splitlines()[0] == "dry run: 1 case x 7 runs = 7 agent runs"


def test_undecided_more_says_how_many_runs_its_looks_may_add(project) -> None:
    """`--runs 10 --undecided more --dry-run` said '10 agent runs' (and priced the judge for 10): its looks add
    runs to an undecided case up to --max-runs."""
    project.case("a", CASE.format(cid="a", threshold=0.8))
    project.case("j", "id: j\ntask: t\nchecks: [{type: llm_judge, artifact: output, rubric: [ok]}]\n")
    result = project.cli("eval", "--runs", "10", "--undecided", "more", "--max-runs", "30", "--dry-run")
    first, judge, case_j = result.stdout.splitlines()[:3]
    assert (result.exit_code, first) == (
        0, "dry run: 2 cases x 10 runs = 20 agent runs (undecided: more may add runs to a case they leave undecided, "
           "up to 30 a case: at most 60 agent runs)")
    assert judge.startswith("judge: at most 30 calls, ") and case_j.startswith("  j: 30 calls, "), result.stdout
    # no looks (a cap no higher than the runs, or --undecided pass): the runs are the runs
    for args in (("--undecided", "more", "--max-runs", "10"), ("--undecided", "pass")):
        result = project.cli("eval", "--runs", "10", *args, "--dry-run")
        first, judge = result.stdout.splitlines()[:2]
        assert (first, judge.startswith("judge: at most 10 calls, ")) == ("dry run: 2 cases x 10 runs = 20 agent runs",
                                                                          True)
