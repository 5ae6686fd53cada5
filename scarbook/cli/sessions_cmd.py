"""`scarbook sessions`: past sessions, newest first."""

from __future__ import annotations

import click

from scarbook.cli.common import examples, friendly_errors, get_project, report_history_problems, say, style
from scarbook.errors import HistoryError
from scarbook.history.store import ReadResult
from scarbook.models import RunRecord, RunStatus
from scarbook.stats.rates import count_statuses
from scarbook.views.library_rows import session_marks


@click.command("sessions", epilog=examples("scarbook sessions", "scarbook sessions -n 50"))
@click.option("-n", "--limit", type=click.IntRange(1), default=20, show_default=True, help="How many to show.")
@click.pass_context
@friendly_errors
def sessions_command(ctx: click.Context, limit: int) -> None:
    """Past sessions, newest first: label, state, runs, config fingerprint and git revision.

    `unj` counts unjudged runs (rule checks passed, judge skipped: no verdict). `notes` marks a
    session whose figures are not a full verdict: cancelled, budget-stopped, aborted, crashed,
    interrupted (its process died), running, partial (judge checks skipped)."""
    history = get_project(ctx).history
    sessions = history.sessions()
    said = report_history_problems(sessions.problems)
    left_out: ReadResult[RunRecord] = ReadResult()
    if not sessions:
        say("no sessions yet — run `scarbook eval`")
        return
    say(f"{'session':<24} {'label':<14} {'state':<16} {'runs':>5} {'pass':>5} {'fail':>5} {'err':>4} "
               f"{'unj':>4}  config        {'git':<14} notes")
    for info in sessions[:limit]:
        try:
            runs = history.runs(info.id, info=info)  # a bad file or line is left out and told below
            left_out.add_problems(runs.problems)
        except HistoryError as exc:  # session.json went away since it was listed
            say(style("history: ", fg="yellow") + str(exc), err=True)
            continue
        counts = count_statuses(runs)
        notes = ",".join(session_marks(info)) or "-"
        say(f"{info.id:<24} {info.label[:14]:<14} {info.state[:16]:<16} {len(runs):>5} {counts[RunStatus.PASS]:>5} "
                   f"{counts[RunStatus.FAIL]:>5} {counts[RunStatus.ERROR]:>4} {counts[RunStatus.UNJUDGED]:>4}  "
                   f"{info.fingerprint:<13} {info.git_revision or '-':<14} {notes}".rstrip())  # (notes last: any length)
    report_history_problems(left_out.problems, said)  # runs left out (damaged, forged, cut): the rest counted


COMMANDS = [sessions_command]
