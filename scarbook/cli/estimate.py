"""`scarbook eval --dry-run`: what a session would run and cost, spending nothing."""

from __future__ import annotations

import click

from scarbook.judge import estimate_judge_calls
from scarbook.models import Case
from scarbook.project import Project
from scarbook.text import plural


def print_estimate(project: Project, cases: list[Case], runs: int, skip_judge: bool, *, batch: bool = False) -> None:
    """`batch`: the session would judge through the Message Batches API (--judge-batch, judge.batch)."""
    click.echo(f"dry run: {plural(len(cases), 'case')} x {plural(runs, 'run')} = {plural(len(cases) * runs, 'agent run')}")
    judged = [c for c in cases if c.judge_checks]
    if not judged or skip_judge:
        click.echo("judge: no calls" + (" (--skip-judge)" if judged else " (no llm_judge checks selected)"))
        return
    est = estimate_judge_calls(judged, runs, project.history.iter_all_runs(), project.config.judge)
    click.echo(f"judge: at most {plural(est.calls, 'call')}, about ${est.cost_usd:.4f} online, "
               f"${est.batch_cost_usd:.4f} as a batch ({est.basis})")
    for cid, figures in est.per_case.items():
        click.echo(f"  {cid}: {plural(int(figures['calls']), 'call')}, ${figures['cost_usd']:.4f} online, "
                   f"${figures['batch_cost_usd']:.4f} batch")
    click.echo("this session judges " + ("as a batch (--judge-batch): half the price, verdicts within 24 hours"
                                         if batch else "online; --judge-batch would send the judge's requests as "
                                         "one batch, answered within 24 hours"))
    click.echo("cheaper checks that fail first skip the judge, so the real figure is usually lower")
