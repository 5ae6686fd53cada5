"""`scarbook rubric ...`: each rubric item's figures across history (`stats`)."""

from __future__ import annotations

import json

import click

from scarbook.cli.common import (
    friendly_errors,
    get_project,
    report_case_problems,
    report_history_problems,
    say,
    style,
)
from scarbook.session.plan import refuse_unknown_cases
from scarbook.session.rubric_stats import RubricStats, figures_json, rubric_stats
from scarbook.text import plural
from scarbook.views.item_figures import figures_line, flags_lines


@click.group("rubric")
def rubric_group() -> None:
    """See what each rubric item does across history: figures and flags per item."""


@rubric_group.command("stats")
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
@friendly_errors
def stats_command(ctx: click.Context, case_ids: tuple[str, ...], as_json: bool) -> None:
    """Each rubric item's figures across history: runs judged, FAIL rate with its 95% interval, how often it
    was the only failing item of a failed run, how often repeated judgements of one artifact disagreed, and
    where people labelled it, the judge's agreement, sensitivity and specificity. Flags: dead (never failed
    in >= 100 runs over >= 3 sessions), always fails, redundant with another item (agree on >= 98% of >= 50
    runs judged by both), unstable (repeats disagree on > 10%), judge unreliable (labels say the judge is
    wrong on it > 20%, of >= 5)."""
    project = get_project(ctx)
    found = project.load_cases()
    report_case_problems(found.problems)
    refuse_unknown_cases(project, found, case_ids)
    cases = [c for c in found.cases if (not case_ids or c.id in case_ids) and c.judge_checks]
    stats = rubric_stats(project, cases)
    report_history_problems(stats.problems)
    if as_json:
        say(json.dumps(figures_json(stats), indent=2))
        return
    say(format_stats(stats) if cases else "no case with an llm_judge check: no rubric items to measure")


def format_stats(stats: RubricStats) -> str:
    lines = []
    for case_id, figures in stats.cases.items():
        lines.append(style(case_id, bold=True) + f"  ({plural(len(figures), 'item')})")
        for f in figures:
            lines.append(f"  {f.item_id}  {f.tally.text}")
            lines.append(f"  {'':<{len(f.item_id)}}  {figures_line(f)}")
            lines += [f"  {'':<{len(f.item_id)}}  " + style(flag, fg="yellow") for flag in flags_lines(f)]
    lines.append(f"{plural(stats.runs_read, 'run')} read"
                 + (f"; {plural(stats.lines_skipped, 'damaged history line')} skipped (named above)"
                    if stats.lines_skipped else ""))
    return "\n".join(lines)


COMMANDS = [rubric_group]
