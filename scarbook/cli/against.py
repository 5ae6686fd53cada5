"""`--against baseline|SESSION` on a terminal: the comparison with a blessed session, and the CI annotations
(session/against.py loads and checks the baseline)."""

from __future__ import annotations

from scarbook.cases.folders import ProjectFolders
from scarbook.cases.lineage import GIVEN_AWAY
from scarbook.cli.common import say, say_workflow_command
from scarbook.history.baseline import BaselineComparison
from scarbook.models import SessionInfo
from scarbook.stats.compare import format_comparison
from scarbook.views.noise import noise_notes


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


def echo_against(bc: BaselineComparison, project: ProjectFolders | None = None, session: SessionInfo | None = None) -> None:
    say("")
    say(format_against(bc))
    if project is not None:
        digests = (bc.baseline.digests, session.case_digests if session is not None else {})
        for line in noise_notes(project, bc.comparison, digests):  # each case's A/A spread, when comparable
            say(line)


def echo_annotations(project: ProjectFolders, rep, against: BaselineComparison | None) -> None:
    """GitHub Actions annotations, when the environment asks for them (the step summary is a report
    file: scarbook.reports.write)."""
    import os

    from scarbook.reports.github import annotation_lines

    for line in annotation_lines(rep, against, project.root, project.cases_dir, os.environ):
        say_workflow_command(line)
