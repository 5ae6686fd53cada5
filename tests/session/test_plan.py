"""session/plan.py: what `noise` and `verify --reproduce` ask of the plan that `eval` plans for them."""

from __future__ import annotations

from scarbook.run.plan import SessionSite
from scarbook.session.plan import EvalRequest, plan_eval


def test_fixed_runs_are_exactly_n_judged_as_they_end_whatever_scarbook_yaml_batches_or_adds(project) -> None:
    """`noise` compares two sessions of n runs and `verify --reproduce N` counts N: scarbook.yaml's judge.batch
    would leave them waiting on a batch ("judging", no measurement), and `undecided: more` would add runs."""
    project.config("agent: {type: demo, seed: 7}\nruns: 5\njudge: {batch: true}\ngate: {undecided: more}\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: x}\n")
    folders = project.load()
    request = EvalRequest(SessionSite.of(folders), folders.load_cases(), runs="3")
    planned = plan_eval(request)
    as_eval = planned.plan
    # what eval makes of it: both from scarbook.yaml, the looks win and the batch is set aside, said (06fd3f0)
    assert (as_eval.judge_batch, as_eval.runs, as_eval.max_runs) == (False, 3, 40)
    assert [n for n in planned.notes if n.startswith("scarbook.yaml's judge.batch: true is set aside")]
    fixed = plan_eval(EvalRequest(SessionSite.of(folders), folders.load_cases(), runs="3", fixed_runs=True)).plan
    assert (fixed.judge_batch, fixed.runs, fixed.max_runs) == (False, 3, 3)
    assert fixed.gate == as_eval.gate and fixed.retry_infra == as_eval.retry_infra  # the rest as eval plans it
