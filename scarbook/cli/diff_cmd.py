"""`scarbook diff`: two sessions compared per case."""

from __future__ import annotations

import click

from scarbook.cases.lineage import GIVEN_AWAY
from scarbook.cli.common import (
    examples,
    friendly_errors,
    get_project,
    report_history_problems,
    say,
)
from scarbook.errors import ScarbookError
from scarbook.history.judge_truth import calibration_for, diff_note
from scarbook.models import SessionInfo, SessionState
from scarbook.stats.compare import format_comparison
from scarbook.tools.rejudge import is_rejudge_of
from scarbook.views.compare import compare_two_sessions
from scarbook.views.noise import noise_notes


@click.command("diff", epilog=examples("scarbook diff", "scarbook diff prompt-v1 prompt-v2 --fail-on-regression"))
@click.argument("before", default="previous")
@click.argument("after", default="latest")
@click.option("--force", is_flag=True, help="Compare even if some cases' task or checks changed in between, "
              "or only one session graded its judge checks (--skip-judge).")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when any case regressed significantly.")
@click.pass_context
@friendly_errors
def diff_command(ctx: click.Context, before: str, after: str, force: bool, fail_on_regression: bool) -> None:
    """Compare two sessions per case (ids, labels, `latest`, `previous`): difference with a 95% Newcombe
    interval, Fisher's exact p, and improved / regressed / no detectable change."""
    project = get_project(ctx)
    history = project.history
    listed = history.sessions()
    a, b = history.resolve(before, listed), history.resolve(after, listed)
    if a.id == b.id:
        raise ScarbookError(f"{before!r} and {after!r} are the same session ({a.id})")
    two = compare_two_sessions(project, a, b, history)
    rejudged = is_rejudge_of(b, a)  # the same artifacts graded twice: the rubric change is what is measured
    if two.changed and not force and not rejudged:
        raise ScarbookError(f"cases changed their task or checks between the sessions: {', '.join(two.changed)} — "
                            "their rates measure different things; re-run them, or pass --force")
    mismatch = two.mismatch
    if mismatch and not force:
        raise ScarbookError(mismatch)
    cmp, given_away = two.comparison, two.given_away
    # runs left out (damaged, forged): named, not silently uncounted
    report_history_problems([*listed.problems, *two.problems])
    say(f"A = {a.id} {a.label}{_stands_for(a)}\nB = {b.id} {b.label}{_stands_for(b)}")
    if rejudged:  # the agent's work is the same by construction: only the rubric and the judge can differ
        changes = [f"changed checks: {', '.join(two.changed)}"] if two.changed else []
        changes += two.judge_changes()
        say("note: one session grades the other's kept artifacts again (scarbook rejudge): the agent's work "
                   "is the same, so each difference is the rubric's or the judge's"
                   + (f" ({'; '.join(changes)})" if changes else ""))
    elif a.fingerprint != b.fingerprint:
        say(f"note: the config differs (agent {a.agent!r} -> {b.agent!r}{''.join(', ' + c for c in two.judge_changes())})")
    if mismatch:
        say(f"warning (--force): {mismatch.split(' — ')[0]}")
    for info in (a, b):
        if info.state == SessionState.JUDGING:  # its runs wait for the judge: unjudged, no rate
            say(f"note: session {info.id} is judging: no verdicts yet (its judge batch is not collected) — "
                       f"`scarbook resume {info.id}` collects them")
    say(format_comparison(cmp, a.label or "A", b.label or "B"))
    for line in noise_notes(project, cmp, (a.case_digests, b.case_digests)):  # each case's A/A spread, when comparable
        say(line)
    note = diff_note(calibration_for(history, project.workspaces_dir, project.config.judge), a, b, project.config.judge,
                     two.judges, rejudge=rejudged)
    if note:
        say(note)
    if given_away:
        say(GIVEN_AWAY + ", ".join(given_away))
    if fail_on_regression and cmp.regressed:
        ctx.exit(1)


COMMANDS = [diff_command]


def _stands_for(info: SessionInfo) -> str:
    """Whose runs a session of several agents is read as (history/records.primary_runs); "" for one agent."""
    names = info.agent_names
    return f" (eval --agents {','.join(names)}: the baseline {names[0]}'s runs)" if len(names) > 1 else ""

