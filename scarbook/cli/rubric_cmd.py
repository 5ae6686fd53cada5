"""`scarbook rubric ...`: draft a case's rubric from its incident (`draft`), each rubric item's figures across
history (`stats`)."""

from __future__ import annotations

import asyncio
import json

import click

from scarbook.cli.common import (
    examples,
    friendly_errors,
    get_project,
    report_case_problems,
    report_history_problems,
    say,
    style,
)
from scarbook.session.plan import refuse_unknown_cases, select_cases
from scarbook.session.rubric_draft import accept_draft, draft_rubric, kept_summary, nothing_caught_hint, plan_draft
from scarbook.session.rubric_stats import RubricStats, figures_json, rubric_stats
from scarbook.text import plural
from scarbook.tools.rubric_draft import RubricDraft, draft_rows
from scarbook.tools.verify import JUDGED_TIMES
from scarbook.views.item_figures import figures_line, flags_lines


@click.group("rubric", epilog=examples("scarbook rubric draft write-one-line", "scarbook rubric stats"))
def rubric_group() -> None:
    """Draft a case's rubric from its incident (draft), and see what each item does across history: figures and
    flags per item (stats)."""


@rubric_group.command("stats", epilog=examples("scarbook rubric stats", "scarbook rubric stats write-one-line --json"))
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


@rubric_group.command("draft", epilog=examples(
    "scarbook rubric draft write-one-line",
    "scarbook rubric draft write-one-line --note 'it claimed one line'",
    "scarbook rubric draft write-one-line --offline"))
@click.argument("case_arg", metavar="CASE")
@click.option("--note", default="", help="What went wrong, in your words: the judge reads it with the artifacts (offline, no one does).")
@click.option("--offline", is_flag=True, help="Ask no judge: propose rule checks from the failed and good "
              "artifacts alone (as without a key).")
@click.option("--judged", "times", type=click.IntRange(1), default=JUDGED_TIMES, show_default=True,
              help="Judge each proposed item this many times on each artifact when certifying it.")
@click.pass_context
@friendly_errors
def draft_command(ctx: click.Context, case_arg: str, note: str, offline: bool, times: int) -> None:
    """Draft CASE's rubric from its incident: one judge call reads the task, the failed artifact, the good one
    and --note, and proposes rubric items and rule checks (contains, not_contains, json_valid, line_count,
    only_changed, command); without a judge key, or with --offline, rule checks are proposed from the
    artifacts alone. Every proposal goes through lint and is certified on its own (--judged times on each
    artifact); the catching ones are written into case.yaml, the rest are shown with why. The cost is shown
    before anything is spent."""
    project = get_project(ctx)
    found = project.load_cases()
    report_case_problems(found.problems)
    [case] = select_cases(project, found, (case_arg,), ())
    plan = plan_draft(project, case, note=note, offline=offline, times=times)
    say(plan.cost)
    draft = asyncio.run(draft_rubric(project, plan))
    say_draft(draft)
    written = accept_draft(project, draft)
    if written is None:
        say(f"nothing catches the incident: case.yaml is unchanged — {nothing_caught_hint(plan)}")
        ctx.exit(1)
    say(f"wrote {kept_summary(draft)} into {written}; next: `scarbook verify {case.id}`")


def say_draft(draft: RubricDraft) -> None:
    """The certification table: each proposal kept or dropped, and why; the case's own items after."""
    say(draft.said)
    for note in draft.notes:
        say(note, err=True)
    colour = {"keep": "green", "drop": "yellow"}
    for row in draft_rows(draft):
        say(f"  {style(f'{row.verdict:<4}', fg=colour.get(row.verdict))}  {row.kind} {row.text}")
        say(f"        {row.said}")


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
