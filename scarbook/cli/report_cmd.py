"""`scarbook report`: the report of a past session, and its files."""

from __future__ import annotations

import click

from scarbook.cli.against import echo_against
from scarbook.cli.common import (
    NamedFile,
    examples,
    friendly_errors,
    get_project,
    refuse_own_files,
    report_history_problems,
    say,
    say_written,
    warn,
)
from scarbook.errors import ScarbookError
from scarbook.history.baseline import (
    baseline_path,
    load_against,
    load_baseline,
    partial_mismatch_with,
)
from scarbook.history.judge_truth import calibration_for
from scarbook.run.outcome import EXIT_USAGE
from scarbook.text import plural
from scarbook.views.compare import compare_with_baseline


@click.command("report", epilog=examples(
    "scarbook report",
    "scarbook report latest --html report.html",
    "scarbook report prompt-v2 --against baseline --junit report.xml"))
@click.argument("session", default="latest")
@click.option("--html", "html_path", type=NamedFile(), default=None,
              help="Write one self-contained HTML file (no network): cases, distributions, failed runs, baseline.")
@click.option("--junit", "junit_path", type=NamedFile(), default=None, help="Write a JUnit XML report (- for standard output).")
@click.option("--json", "json_path", type=NamedFile(), default=None, help="Write the report as JSON (- for standard output).")
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
    refuse_own_files(project, {"--html": html_path, "--junit": junit_path, "--json": json_path})
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
        echo_against(against, project, rep.session)
    paths = ReportPaths.given(json=json_path, junit=junit_path, html=html_path)
    written = write_reports(rep, against, paths)
    if ("html", paths.html) in written.written:
        say(f"html report: {'standard output' if html_path == '-' else html_path}")
    if not say_written(written):
        ctx.exit(EXIT_USAGE)


def _report_baseline(project, info, runs, against_ref: str | None):
    """The comparison to show: the one asked for, else the committed baseline when it applies."""
    if against_ref is not None:
        baseline = load_against(against_ref, project.root, project.history)
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
        if against_ref is not None:
            raise ScarbookError(problem)
        warn(f"no baseline comparison: {problem}")
        return None
    return compare_with_baseline(project, baseline, info, runs)


COMMANDS = [report_command]
