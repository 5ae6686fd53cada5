"""`scarbook eval --dry-run`: what a session would run and cost, spending nothing (session/estimate.py:
the launch screen prints the same estimate)."""

from __future__ import annotations

from scarbook.cli.common import say, warn
from scarbook.session.estimate import estimate_plan, price
from scarbook.session.plan import EvalPlan
from scarbook.text import plural


def print_estimate(planned: EvalPlan) -> None:
    for note in planned.notes:  # as `eval` says them before its runs
        warn(note)
    plan = planned.plan
    cases, runs = plan.cases, plan.runs
    agents = len(plan.agents) if len(plan.agents) > 1 else 1
    # the judge's calls and price at most: up to --max-runs a case when `undecided: more`'s looks may add runs
    est = estimate_plan(planned.site, cases, plan.max_runs or runs, skip_judge=plan.skip_judge, agents=agents)
    per = f" x {plural(agents, 'agent')} ({', '.join(a.name for a in plan.agents)})" if agents > 1 else ""
    # --runs auto: `runs` is the cap, each case stops once its evidence decides it. The fewest runs the rule could
    # stop after is the statistics' to say, which a dry run of rule checks does not load (the launch screen says it)
    most = "at most " if plan.adaptive else ""
    say(f"dry run: {plural(len(cases), 'case')} x {most}{plural(runs, 'run')}{per} = "
        f"{most}{plural(runs * len(cases) * agents, 'agent run')}"
        + (" (--runs auto: each case stops once the evidence decides it)" if plan.adaptive else "")
        + (f" (undecided: more may add runs to a case they leave undecided, up to {plan.max_runs} a case: at most "
           f"{plural(est.agent_runs, 'agent run')})" if plan.max_runs else ""))
    if est.judge is None:
        say("judge: no calls" + (" (--skip-judge)" if est.judged else " (no llm_judge checks selected)"))
        return
    judge = est.judge
    say(f"judge: at most {plural(judge.calls, 'call')}, about {price(judge.cost_usd)} online, "
               f"{price(judge.batch_cost_usd)} as a batch ({judge.basis})")
    for cid, figures in judge.per_case.items():
        say(f"  {cid}: {plural(int(figures['calls']), 'call')}, {price(figures['cost_usd'])} online, "
                   f"{price(figures['batch_cost_usd'])} batch")
    say("this session judges " + ("as a batch (--judge-batch): half the price, verdicts within 24 hours"
                                  if plan.judge_batch else f"online: {planned.online_why}" if planned.online_why
                                  else "online; --judge-batch would send the judge's requests as one batch, "
                                  "answered within 24 hours"))
    say("cheaper checks that fail first skip the judge, so the real figure is usually lower")
