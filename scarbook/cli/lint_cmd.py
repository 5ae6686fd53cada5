"""`scarbook lint`: advice on rubrics."""

from __future__ import annotations

import click

from scarbook.agents import project_keeps_transcript
from scarbook.cases.lint import format_hints, lint_cases
from scarbook.cli.common import (
    examples,
    friendly_errors,
    get_project,
    report_case_problems,
    report_history_problems,
    say,
)
from scarbook.session.plan import case_ids_of_args, refuse_unknown_cases
from scarbook.session.rubric_stats import rubric_stats
from scarbook.text import plural


@click.command("lint", epilog=examples("scarbook lint", "scarbook lint write-one-line"))
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.pass_context
@friendly_errors
def lint_command(ctx: click.Context, case_ids: tuple[str, ...]) -> None:
    """Advice on rubrics: vague items, joined criteria, items a rule check decides for free,
    duplicates, judge-only cases, regex patterns with nested quantifiers (they can backtrack past the check's
    time limit); with history, items that are dead, always fail, redundant, unstable
    or that the judge gets wrong (`scarbook rubric stats`). Advice only: exits 0, or 2 when a case is invalid
    (each one is named)."""
    project = get_project(ctx)
    found = project.load_cases()
    report_case_problems(found.problems)
    case_ids = case_ids_of_args(project, case_ids)
    refuse_unknown_cases(project, found, case_ids)
    cases = [c for c in found.cases if not case_ids or c.id in case_ids]
    figures = None
    if any(c.judge_checks for c in cases) and project.history.session_dirs():  # what each item did across history
        stats = rubric_stats(project, [c for c in cases if c.judge_checks])
        report_history_problems(stats.problems)
        figures = stats.cases
    hints = lint_cases(cases, keeps_transcript=project_keeps_transcript(project.config.agent, project.config.record),
                       figures=figures)
    say(format_hints(hints) if hints else f"no hints for {plural(len(cases), 'case')}")
    if found.problems:  # the invalid cases were said above; lint saw only part of the collection
        ctx.exit(2)


COMMANDS = [lint_command]
