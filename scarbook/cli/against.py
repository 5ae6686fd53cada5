"""`scarbook eval --against baseline|SESSION`: the gate against a blessed session."""

from __future__ import annotations

import click

from scarbook.cases.lineage import GIVEN_AWAY
from scarbook.errors import ScarbookError
from scarbook.history.baseline import (
    Baseline,
    BaselineComparison,
    baseline_from_session,
    load_baseline,
    partial_mismatch_with,
)
from scarbook.models import Case, SessionInfo, SessionState
from scarbook.project import Project
from scarbook.stats.compare import format_comparison
from scarbook.views.noise import noise_notes


def load_against(project: Project, ref: str) -> Baseline:
    """`baseline` (the committed file) or a past session (id, label, latest, previous) as a baseline."""
    if ref == "baseline":
        return load_baseline(project.root)
    info = project.history.resolve(ref)
    refuse_judging(info)
    baseline = baseline_from_session(info, project.history.runs(info.id), info.finished_at or info.started_at)
    baseline.source = "session"
    return baseline


def refuse_judging(info: SessionInfo) -> None:
    """A session whose judge batch is not collected has no verdicts: no gate or baseline reads it."""
    if info.state == SessionState.JUDGING:
        raise ScarbookError(f"session {info.id} is still judging (its judge batch is not collected): it has no "
                            f"verdicts yet — `scarbook resume {info.id}` collects them")


def resolve_against(project: Project, ref: str, cases: list[Case], skip_judge: bool) -> Baseline:
    """The baseline to gate against, checked before any run starts (exit 2 if unusable)."""
    baseline = load_against(project, ref)
    will_be_partial = skip_judge and any(c.judge_checks for c in cases)
    problem = partial_mismatch_with(baseline, will_be_partial)
    if problem:
        raise ScarbookError(problem)
    return baseline


def format_against(bc: BaselineComparison) -> str:
    b = bc.baseline
    lines = [f"against the baseline ({b.source}: session {b.name}, git {b.git_revision or '-'}):",
             format_comparison(bc.comparison, "baseline", "this session")]
    if bc.changed:
        lines.append(f"changed since the baseline (not compared: their rates measure different checks): "
                     f"{', '.join(bc.changed)} — record a new baseline once reviewed (`scarbook baseline set`)")
    if bc.given_away:
        lines.append(GIVEN_AWAY.replace("between the two sessions", "since the baseline") + ", ".join(bc.given_away))
    if bc.regressed:
        lines.append(f"gate: significant regression against the baseline: {', '.join(bc.regressed)}")
    else:
        lines.append("gate: no detectable change against the baseline (no case regressed significantly)")
    return "\n".join(lines)


def echo_against(bc: BaselineComparison, project: Project | None = None) -> None:
    click.echo("")
    click.echo(format_against(bc))
    if project is not None:
        for line in noise_notes(project, bc.comparison):  # each case's A/A spread, when measured
            click.echo(line)


def echo_annotations(project: Project, rep, against: BaselineComparison | None) -> None:
    """GitHub Actions annotations, when the environment asks for them (the step summary is a report
    file: scarbook.reports.write)."""
    import os

    from scarbook.reports.github import annotation_lines

    for line in annotation_lines(rep, against, project.root, project.cases_dir, os.environ):
        click.echo(line)
