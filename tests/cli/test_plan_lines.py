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


def _margin_cases(project) -> None:
    project.config("agent: {type: demo, seed: 7}\nconcurrency: 2\ntimeout_s: 30\nthreshold: 0.8\n", gate=None)
    for cid, threshold in (("never-fails", "1.0"), ("nearly", "0.99"), ("usual", "0.9")):
        project.case(cid, f"id: {cid}\ntask: t\nthreshold: {threshold}\nchecks: [{{type: file_exists, path: x}}]\n")


MARGIN = ("warning: --runs auto can call a case \"above\" after a failure, because it decides within a margin (it "
          "weighs the threshold − 10 points against at most 99%): nearly (threshold 99%: \"above\" at 51 passes and 1 "
          "fail), never-fails (threshold 100%: \"above\" at 56 passes and 1 fail) — use a fixed --runs N when a case "
          "must never fail")


def test_runs_auto_says_once_before_the_runs_which_cases_it_can_call_above_after_a_failure(project) -> None:
    """With threshold: 1.0 and --runs auto, 56 passes and 1 fail were called "above" (the rule weighs 90% against
    99%), where a fixed-N gate says below; nothing said so."""
    _margin_cases(project)
    result = project.cli("eval", "--runs", "auto", "--max-runs", "60")
    lines = result.stderr.splitlines()
    assert lines.count(MARGIN) == 1, result.stderr
    first_run = next(i for i, ln in enumerate(lines) if ln.startswith("[1/"))
    assert lines.index(MARGIN) < first_run


@pytest.mark.parametrize("args", [("--runs", "auto"), ("--runs", "60")])
def test_a_plan_that_cannot_call_above_after_a_failure_says_nothing_of_it(project, args) -> None:
    """The default cap of 40 runs ends a 100% case "above" only with no failure (31 straight passes); a fixed N
    decides on the counts."""
    _margin_cases(project)
    result = project.cli("eval", *args, "-q")
    assert "after a failure" not in result.stderr, result.stderr


def test_a_reason_many_cases_share_is_said_once_naming_the_first_five(project) -> None:
    """A plan of 10 runs over 100 cases at 80% printed 100 warnings before the runs, the same words each time;
    a reason shared by more than five cases is one line, naming five and counting the rest."""
    project.config("agent: {type: demo, seed: 7}\nconcurrency: 4\ntimeout_s: 30\nthreshold: 0.8\n", gate=None)
    ids = [f"case-{i:02d}" for i in range(12)]
    for cid in ids:
        project.case(cid, f"id: {cid}\ntask: t\nchecks: [{{type: file_exists, path: x}}]\n")
    project.case("strict", "id: strict\ntask: t\nthreshold: 0.9\nchecks: [{type: file_exists, path: x}]\n")
    result = project.cli("eval", "--runs", "10", "-q")
    said = [ln for ln in result.stderr.splitlines() if "cannot show" in ln]
    assert said == ["warning: case-00, case-01, case-02, case-03, case-04 and 7 more (12 cases): 10 runs cannot "
                    "show ≥ 80%; 14 can; or use --runs auto",
                    "warning: strict: 10 runs cannot show ≥ 90%; 29 can; or use --runs auto"], result.stderr
