"""`scarbook rejudge SESSION [CASE...]`: grade a session's kept artifacts again, no agent runs (tools/rejudge.py)."""

from __future__ import annotations

from pathlib import Path

import click

from scarbook.cli.common import (
    NamedFile,
    examples,
    friendly_errors,
    get_project,
    refuse_shared_names,
    report_history_problems,
    say,
)
from scarbook.cli.drive import Progress, drive_session
from scarbook.cli.outcome import say_outcome
from scarbook.reports.write import ReportPaths
from scarbook.run.outcome import EXIT_USAGE
from scarbook.run.plan import SessionSite
from scarbook.session.plan import case_ids_of_args
from scarbook.session.report import report_session
from scarbook.text import plural
from scarbook.tools.rejudge import RejudgeExecutor, pick_rejudge, prepare_rejudge, unjudgeable_lines


@click.command("rejudge", epilog=examples(
    "scarbook rejudge latest",
    "scarbook rejudge prompt-v2 write-one-line --judge-model claude-opus-4-1"))
@click.argument("session_ref", metavar="SESSION")
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("--judge-model", default=None, metavar="MODEL", help="Grade with this judge model instead of "
              "scarbook.yaml's judge.model.")
@click.option("-j", "--concurrency", type=click.IntRange(1), default=None, help="Judge calls at once.")
@click.option("--json", "json_path", type=NamedFile(), default=None, help="Write the report as JSON (- for standard output).")
@click.option("--junit", "junit_path", type=NamedFile(), default=None, help="Write a JUnit XML report (- for standard output).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.pass_context
@friendly_errors
def rejudge_command(ctx: click.Context, session_ref, case_ids, judge_model, concurrency, json_path, junit_path,
                    quiet) -> None:
    """Grade the artifacts SESSION's judge saw (id, label, `latest`) again under today's rubrics and judge
    settings, with no agent runs, as a new session linked to it (`scarbook diff SESSION latest` then shows
    what the rubric or judge change did). Rule checks are not run again: each run keeps its source's
    results; a run whose rule checks failed stays failed with no judge call. Runs whose artifact was not
    kept (or was altered since) are listed as not re-judgeable and kept without a verdict, so their case
    has none (exit 3). Exit codes as `scarbook eval`'s.
    """
    project = get_project(ctx)
    refuse_shared_names({"--json": json_path, "--junit": junit_path})
    pick = pick_rejudge(project, session_ref, case_ids_of_args(project, case_ids), judge_model)
    report_history_problems(pick.problems)
    say(f"rejudge of session {pick.source.id}: {plural(pick.regraded, 'run')} to grade again, "
               f"{pick.carried} carried (rule checks failed: no judge call), no agent runs", err=True)
    if pick.not_rejudgeable:
        n = pick.kept_unjudged
        kept = f"{n} kept without a verdict, so {'its case has' if n == 1 else 'their cases have'} none" if n else ""
        gone = len(pick.not_rejudgeable) - pick.kept_unjudged
        left = f"{gone} left out: their case is gone or judges nothing now" if gone else ""
        say(f"{plural(len(pick.not_rejudgeable), 'run')} not re-judgeable ({'; '.join(filter(None, (kept, left)))}):",
            err=True)
        for line in unjudgeable_lines(pick):
            say(line, err=True)
    reports = {o: Path(p) for o, p in (("--json", json_path), ("--junit", junit_path)) if p}
    prep = prepare_rejudge(SessionSite.of(project), pick, concurrency=concurrency, reports=reports)
    if prep.session is None:
        for error in prep.errors:
            say(f"scarbook: {error}", err=True)
        ctx.exit(EXIT_USAGE)
    ready = prep.session
    finished = drive_session(ready, Progress(quiet, total=len(pick.runs)), RejudgeExecutor(ready.concurrency, pick))
    info = finished.session
    cases = {c.id: c for c in pick.cases}
    outcome = report_session(ready.site, info, finished.runs, cases, prep.calibration, policy=ready.gate)
    ctx.exit(say_outcome(project, outcome, info, None, ReportPaths.given(json=json_path, junit=junit_path)))


COMMANDS = [rejudge_command]
