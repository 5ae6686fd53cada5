"""`scarbook noise`: the noise floor — the same configuration run twice, as an A/A pair."""

from __future__ import annotations

import time

import click

from scarbook.cli.common import examples, friendly_errors, get_project, report_case_problems, say, warn
from scarbook.cli.drive import Progress, connect_executor, drive_session, prepare_or_say
from scarbook.errors import ScarbookError
from scarbook.history.noise import NoiseStore
from scarbook.models import SessionState
from scarbook.run.outcome import EXIT_BELOW, EXIT_NO_VERDICT, EXIT_OK, EXIT_USAGE
from scarbook.run.plan import SessionSite
from scarbook.session.plan import EvalRequest, plan_eval, select_cases
from scarbook.views.noise import format_noise, measure_noise, too_few_runs


@click.command("noise", epilog=examples("scarbook noise --runs 20", "scarbook noise write-one-line --runs 40"))
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("-n", "--runs", type=click.IntRange(1), default=None,
              help="Runs per case in each of the two sessions, at least 4 (default from scarbook.yaml).")
@click.option("-j", "--concurrency", type=click.IntRange(1), default=None, help="Runs at once.")
@click.option("-t", "--tag", "tags", multiple=True, help="Only cases with this tag (repeatable).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.pass_context
@friendly_errors
def noise_command(ctx: click.Context, case_ids, runs, concurrency, tags, quiet) -> None:
    """Measure the noise floor: run the same configuration twice (two sessions labelled as an A/A
    pair) and report, per case and overall, whether the two disagree (the Holm-corrected test of
    `scarbook diff`) and the spread between them. The spread is stored: `diff` and `eval --against`
    quote it and call a smaller difference within noise.

    Exit codes: 0 A and A agree on every case; 1 they disagree on some case (something besides the
    agent moves it); 2 usage or config error; 3 a session did not finish (no measurement stored)."""
    project = get_project(ctx)
    found = project.load_cases()
    report_case_problems(found.problems)
    cases = select_cases(project, found, case_ids, tags, command="noise")
    n = runs or project.config.runs
    refused = too_few_runs(n)
    if refused:
        raise ScarbookError(refused)
    pair = time.strftime("aa-%Y%m%d-%H%M%S")
    sessions = []
    for side in ("A", "B"):
        # as `scarbook eval` plans, prepares and runs it (session/, retry_infra included, on scarbook.yaml's
        # executor): the floor a real comparison stands on — exactly n runs a side, judged as they end
        request = EvalRequest(SessionSite.of(project), found, case_ids=tuple(c.id for c in cases), runs=str(n),
                              label=f"{pair} {side}", concurrency=concurrency, fixed_runs=True)
        planned = plan_eval(request)
        prep = prepare_or_say(planned.site, planned.plan)
        if prep is None or prep.session is None:
            ctx.exit(EXIT_USAGE)
        for note in prep.notes if side == "A" else ():  # the pair's two sessions run alike: said once
            warn(note)
        finished = drive_session(prep.session, Progress(quiet), connect_executor(prep.session))
        info = finished.session
        if info.state != SessionState.FINISHED:
            say(f"scarbook: session {side} ({info.id}) ended {info.state}: no A/A measurement stored", err=True)
            ctx.exit(EXIT_NO_VERDICT)
        sessions.append(info)
    result = measure_noise(project, *sessions)
    NoiseStore(project.workspaces_dir).save(result.measured)
    say(format_noise(result))
    ctx.exit(EXIT_BELOW if result.disagree else EXIT_OK)


COMMANDS = [noise_command]
