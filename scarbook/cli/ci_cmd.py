"""Commands for CI: `scarbook baseline set|show` and `scarbook report`."""

from __future__ import annotations

import click

from scarbook.cli.against import echo_against, load_against, refuse_judging
from scarbook.cli.common import friendly_errors, get_project, report_history_problems, say, say_written, warn
from scarbook.errors import ScarbookError
from scarbook.history.baseline import (
    BASELINE_FILE,
    COMPLETE_STATES,
    baseline_from_session,
    baseline_path,
    load_baseline,
    partial_mismatch_with,
    write_baseline,
)
from scarbook.history.judge_truth import calibration_for
from scarbook.history.store import now_iso
from scarbook.run.outcome import EXIT_USAGE
from scarbook.text import plural
from scarbook.views.compare import compare_with_baseline


@click.group("baseline")
def baseline_group() -> None:
    """The blessed session CI gates against: scarbook-baseline.json at the project root.

    Commit the file: it carries each case's counts, so it travels with the branch (history under
    workspaces/ does not). `scarbook eval --against baseline` compares every case with it.
    """


@baseline_group.command("set")
@click.argument("session", default="latest")
@click.option("--force", is_flag=True, help="Record a session that did not finish (cancelled, stopped, aborted).")
@click.pass_context
@friendly_errors
def baseline_set(ctx: click.Context, session: str, force: bool) -> None:
    """Record SESSION (id, label, `latest`; default latest) as the baseline in scarbook-baseline.json."""
    project = get_project(ctx)
    info = project.history.resolve(session)
    refuse_judging(info)  # even with --force: it has no verdicts yet
    if info.state not in COMPLETE_STATES and not force:
        raise ScarbookError(f"session {info.id} is {info.state!r}, not finished: its runs are only part of what it "
                            "planned — bless a finished session, or pass --force")
    baseline = baseline_from_session(info, project.history.runs(info.id), now_iso())
    path = write_baseline(project.root, baseline)
    judged = sum(c.judged for c in baseline.cases.values())
    click.echo(f"baseline: session {baseline.name}, {plural(len(baseline.cases), 'case')}, {plural(judged, 'judged run')} -> {path}")
    if baseline.partial:
        click.echo("note: this session skipped its judge checks (--skip-judge): only sessions that skip them too "
                   "can be compared with it")
    click.echo(f"commit {BASELINE_FILE} so CI gates against it: scarbook eval --against baseline")


@baseline_group.command("show")
@click.pass_context
@friendly_errors
def baseline_show(ctx: click.Context) -> None:
    """Print the recorded baseline: its session and each case's counts."""
    baseline = load_baseline(get_project(ctx).root)
    click.echo(f"baseline: session {baseline.name}, state {baseline.state}, recorded {baseline.recorded_at}, "
               f"git {baseline.git_revision or '-'}, agent {baseline.agent or '-'}"
               + (", partial (--skip-judge)" if baseline.partial else ""))
    click.echo(f"{'case':<28} {'pass':>5} {'fail':>5} {'err':>4} {'rate':>5}")
    for cid, c in baseline.cases.items():
        rate = "  n/a" if c.rate is None else f"{c.rate:5.0%}"
        click.echo(f"{cid[:28]:<28} {c.passes:>5} {c.fails:>5} {c.errors:>4} {rate}")


@click.command("report")
@click.argument("session", default="latest")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Write one self-contained HTML file (no network): cases, distributions, failed runs, baseline.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), default=None, help="Write a JUnit XML report.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Write the report as JSON.")
@click.option("--against", "against_ref", metavar="baseline|SESSION", default=None,
              help="Compare with this baseline or session (default: scarbook-baseline.json when there is one).")
@click.pass_context
@friendly_errors
def report_command(ctx: click.Context, session: str, html_path: str | None, junit_path: str | None,
                   json_path: str | None, against_ref: str | None) -> None:
    """The report of a past SESSION (id, label, `latest`; default latest): the case table, and the
    files --html, --junit, --json. Always exits 0 when it could write them: `scarbook eval` is the gate."""
    from scarbook.cli.common import report_case_problems
    from scarbook.reports.table import build_report, format_summary, format_table
    from scarbook.reports.write import ReportPaths, write_reports

    project = get_project(ctx)
    info = project.history.resolve(session)
    runs = project.history.runs(info.id)
    damaged = bool(runs.problems)
    report_history_problems(runs.problems)  # as `list` does: what was left out, and why
    found = project.load_cases()
    report_case_problems(found.problems)
    rep = build_report(info, runs, found.by_id(), project.config,
                       calibration_for(project.history, project.workspaces_dir, project.config.judge, found.by_id()))
    against = _report_baseline(project, info, runs, against_ref)
    rep.regressed = against.regressed if against else []
    say(format_table(rep))
    say(format_summary(rep))
    if damaged:
        say(f"damaged: this report counts only the {plural(len(runs), 'run')} of session {info.id} that could "
            "be read — see the history lines on stderr")
    if against:
        echo_against(against, project)
    paths = ReportPaths.given(json=json_path, junit=junit_path, html=html_path)
    written = write_reports(rep, against, paths)
    if ("html", paths.html) in written.written:
        say(f"html report: {html_path}")
    if not say_written(written):
        ctx.exit(EXIT_USAGE)


def _report_baseline(project, info, runs, against_ref: str | None):
    """The comparison to show: the one asked for, else the committed baseline when it applies."""
    if against_ref:
        baseline = load_against(project, against_ref)
    elif baseline_path(project.root).exists():
        try:
            baseline = load_baseline(project.root)
        except ScarbookError as exc:
            warn(f"{exc.message}; the report has no baseline comparison")
            return None
        if baseline.session_id == info.id:
            return None  # the session is the baseline itself
    else:
        return None
    problem = partial_mismatch_with(baseline, info.partial)
    if problem:
        if against_ref:
            raise ScarbookError(problem)
        warn(f"no baseline comparison: {problem}")
        return None
    return compare_with_baseline(project, baseline, info, runs)


COMMANDS = [baseline_group, report_command]
