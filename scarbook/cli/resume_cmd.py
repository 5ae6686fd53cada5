"""`scarbook resume SESSION`: finish a session that stopped short.

A session killed (interrupted: kill -9, a reboot, Ctrl-C twice), cancelled (Ctrl-C) or aborted (the judge rejected its
key) keeps every finished run; resume runs exactly the runs it is missing (and those that met the rejected key) under
its own id, with its agent(s), isolation, judge and gate as it
recorded them (session/resume.py plans it, or says what changed and the fix), then finishes it as eval would
(cli/eval_run.py: the same pipeline, gate, reports and exit code).

A --judge-batch session waits in state `judging` when scarbook was killed, stopped (Ctrl-C) or could not reach
the API between submitting the judge's batch and reading its results (issue 27). Resume polls the recorded batch
until it ends, grades the waiting runs as the eval would have, finishes the session and writes the reports the
eval was asked for (its --json / --junit), with the eval's exit code.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scarbook.cli.common import (
    NamedFile,
    examples,
    friendly_errors,
    get_project,
    refuse_shared_names,
    report_case_problems,
    say,
    warn,
)
from scarbook.cli.drive import Progress, batch_progress_line, judge_cache_notes
from scarbook.cli.outcome import say_outcome
from scarbook.errors import AbortSession
from scarbook.history.baseline import load_against
from scarbook.judge.cache import FOLDER, VerdictCache
from scarbook.judge.errors import KeyHint
from scarbook.models import SessionInfo, SessionState
from scarbook.reports.write import ReportPaths
from scarbook.run.attempts import one_line, write_traceback
from scarbook.run.cause_patterns import all_patterns, project_patterns
from scarbook.run.events import BatchProgress, Event
from scarbook.run.outcome import EXIT_NO_VERDICT
from scarbook.run.plan import SessionSite
from scarbook.session.prepare import read_calibration
from scarbook.session.report import report_session

if TYPE_CHECKING:
    from scarbook.project import Project

@click.command("resume", epilog=examples("scarbook resume", "scarbook resume prompt-v2 -j 4 --json report.json"))
@click.argument("session", default="latest")
@click.option("-j", "--concurrency", type=click.IntRange(1), default=None,
              help="Runs at once, for the missing runs (default from scarbook.yaml).")
@click.option("--json", "json_path", type=NamedFile(), default=None,
              help="Write the report as JSON (a judging session writes the ones its eval was asked for).")
@click.option("--junit", "junit_path", type=NamedFile(), default=None,
              help="Write a JUnit XML report (a judging session: as --json).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.pass_context
@friendly_errors
def resume_command(ctx: click.Context, session: str, concurrency: int | None, json_path: str | None,
                   junit_path: str | None, quiet: bool) -> None:
    """Finish a session (id, label, `latest`) that stopped short, under its own id.

    Interrupted (its scarbook was killed), cancelled (Ctrl-C) or aborted (the judge rejected its key: the runs
    that met it run again, once the key is fixed): runs exactly the runs it is missing, with the agent(s),
    isolation, judge and gate it recorded, then gates, reports and exits as `scarbook eval` would (0, 1
    or 3). Refused (exit 2), saying what changed and the fix, when a case changed or was deleted since it started,
    scarbook.yaml's agent or judge changed, or the session is still running or already finished. Ctrl-C keeps
    every finished run: resume again later.

    Judging (--judge-batch): polls the batch until it ends (every judge.batch_poll_s seconds), grades the runs that
    waited, writes the reports the eval was asked for (--json, --junit), compares with what its --against named,
    and exits as the eval would have."""
    project = get_project(ctx)
    refuse_shared_names({"--json": json_path, "--junit": junit_path})
    info = project.history.resolve(session)
    if info.state == SessionState.JUDGING:
        _collect_batch(ctx, project, info, quiet)
    else:
        _run_missing(ctx, project, info, quiet, concurrency, json_path, junit_path)


def _run_missing(ctx: click.Context, project: Project, info: SessionInfo, quiet: bool, concurrency: int | None,
                 json_path: str | None, junit_path: str | None) -> None:
    """An interrupted, cancelled or aborted session: its missing runs through eval's pipeline, under its id."""
    from scarbook.cli.eval_run import run_planned  # the session's machinery: loaded when a session runs
    from scarbook.session.resume import missing_line, plan_resume

    found = project.load_cases()
    report_case_problems(found.problems)
    reports = {o: Path(p) for o, p in (("--json", json_path), ("--junit", junit_path)) if p}
    planned = plan_resume(SessionSite.of(project), found, info, concurrency=concurrency, reports=reports, batch=True)
    try:
        if not quiet:
            say(missing_line(planned.plan), err=True)
        code = run_planned(planned, quiet=quiet, executor_kind=None, json_path=json_path, junit_path=junit_path)
    finally:
        project.history.let_go(info.id)  # (a session that ran was let go as it finished)
    ctx.exit(code)


def _collect_batch(ctx: click.Context, project: Project, info: SessionInfo, quiet: bool) -> None:
    """A judging session: its judge's batch collected, the session finished."""
    history = project.history
    # loaded here: both import the SDK, which a CLI start must not wait for (issue 26.13)
    from scarbook.judge.judge import Judge
    from scarbook.run import batch_session as batch

    plan = batch.BatchPlan.read(history.dir / info.id, info)  # refused unless it is what was submitted
    settings = project.config.judge
    # its answers go to the part of the cache the session's agents could not reach if they were sandboxed
    confined = info.isolation is not None and info.isolation.sandboxed
    cache = VerdictCache(project.workspaces_dir / FOLDER, confined=confined) if settings.cache else None
    judge = Judge(settings, cache=cache, key_hint=BATCH_KEY_HINT)
    judge.preflight()
    history.hold_session(info)
    runs = list(history.runs(info.id, info=info))
    progress = Progress(quiet, total=0)

    def emit(event: Event) -> None:
        if isinstance(event, BatchProgress):
            progress.note(batch_progress_line(event))

    patterns = all_patterns(project_patterns(project.config.cause_patterns))
    try:
        runs = asyncio.run(_collect(batch.judge_in_batch(history, info, judge, plan, runs, patterns,
                                                         settings.batch_poll_s, emit), judge))
        info.state = SessionState.FINISHED  # its note is what judging said (none, or why runs are errors)
    except batch.StillJudging as why:
        info.note = batch.batch_note(info, str(why))
    except AbortSession as exc:
        info.state, info.note = SessionState.ABORTED, f"session aborted: {exc.message}"
    except KeyboardInterrupt:
        info.note = batch.batch_note(info, "scarbook stopped waiting for it")
    except Exception as exc:  # noqa: BLE001 — resume itself failed: one line and crash.txt, the batch still there
        path = write_traceback(history.dir / info.id / "crash.txt", exc)
        info.note = batch.batch_note(info, f"resume failed: {one_line(exc)} — traceback in {path}")
    finally:
        progress.close()
        info.finished_at = None
        history.finish_session(info)
    for note in judge_cache_notes(runs):
        warn(note)
    if info.state != SessionState.FINISHED:
        say(f"scarbook: {info.note}", err=True)
    cases = {c.id: c for c in project.load_cases().cases if c.id in info.case_ids}
    # the eval's --against, compared now that the verdicts are in
    baseline = load_against(plan.against, project.root, project.history) if plan.against else None
    site = SessionSite.of(project)
    outcome = report_session(site, info, runs, cases, read_calibration(site, cases.values()), baseline=baseline)
    paths = ReportPaths.given(json=plan.reports.get("--json"), junit=plan.reports.get("--junit"))
    code = say_outcome(project, outcome, info, None, paths)
    ctx.exit(code if info.state == SessionState.FINISHED else EXIT_NO_VERDICT)


async def _collect(work, judge):
    try:
        return await work
    finally:
        await judge.aclose()


# a batch's key problem: nothing is lost, the batch waits at the API (resume has no --skip-judge)
BATCH_KEY_HINT = KeyHint("its verdicts were not collected",
                         " — the batch stays at the API: run this resume again once the key is right")

COMMANDS = [resume_command]
