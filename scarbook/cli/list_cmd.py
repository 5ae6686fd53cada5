"""`scarbook list`: the cases with their latest pass rate, as the TUI library shows them."""

from __future__ import annotations

import click

from scarbook.cases.io import no_cases_said
from scarbook.cli.common import (
    examples,
    friendly_errors,
    get_project,
    report_case_problems,
    report_history_problems,
    say,
    style,
)
from scarbook.reports.table import strip_of
from scarbook.text import interval_beside, pct_beside
from scarbook.views.library_rows import (
    LibraryRow,
    build_rows,
    correct_rows,
    corrected_line,
    human_age,
    notes_of,
)
from scarbook.views.trends import project_trends


@click.command("list", epilog=examples("scarbook list"))
@click.pass_context
@friendly_errors
def list_command(ctx: click.Context) -> None:
    """The cases with their latest pass rate, as the TUI library shows them; notes say when that
    session was cancelled, partial, interrupted or stale, and "regressed since S" when `scarbook diff S`
    against it calls the case regressed. Invalid cases are reported (exit 2 if any)."""
    project = get_project(ctx)
    found = project.load_cases()
    rows = build_rows(project, found)
    trends = project_trends(project, found.cases)
    for row in rows:
        row.trend = trends.cases.get(row.key)
    report_history_problems([*rows.problems, *trends.problems])
    if not rows:  # (no case, valid or not: a header over nothing said nothing of why)
        say(no_cases_said(project.cases_dir))
        return
    say(f"{'case':<24} {'rate':>5} {'95% CI':<10} {'p/f/e':<9} {'last run':<12} {'latest runs':<12} "
               f"{'notes':<16} title")
    for row in rows:
        if row.case is not None:
            say(format_list_row(row))
    judge_line = correct_rows(project, rows)  # the library's ≈ rates: corrected for the judge's measured error
    if judge_line:
        say("\n" + judge_line)
        for row in rows:
            if row.stats is not None and row.stats.corrected is not None:
                say(f"  {row.key}: {corrected_line(row.stats)}")
    noted = [r for r in rows if r.case is not None and r.history_note]
    if noted:  # why a case with runs under its id shows "never"
        say("\nnotes:")
        for row in noted:
            say(f"  {row.key}: {row.history_note}")
    report_case_problems(found.problems)
    if found.problems:
        ctx.exit(2)


def format_list_row(row: LibraryRow) -> str:
    """One line of `scarbook list`: the library row's figures, coloured by band."""
    s = row.stats
    if s is None or (not row.runs and not row.damaged):
        notes = f"{row.history_mark} (note)" if row.history_mark else ""
        return f"{row.key[:24]:<24} {'–':>5} {'':<10} {'':<9} {'never':<12} {'':<12} {notes:<16} {row.title}"
    rate = pct_beside(s.rate, s.threshold)
    ci = "" if s.rate is None else interval_beside(s.lo, s.hi, s.threshold)
    notes = ",".join(notes_of(row)) or "-"
    colour = {"green": "green", "yellow": "yellow", "red": "red"}.get(s.band)
    return (f"{row.key[:24]:<24} {style(f'{rate:>5}', fg=colour)} {ci:<10} "
            f"{f'{s.passes}/{s.fails}/{s.errors}':<9} {human_age(row.age_s):<12} {strip_of(row.runs, 12):<12} "
            f"{notes:<16} {row.title}")


COMMANDS = [list_command]
