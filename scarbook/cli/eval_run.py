"""`scarbook eval` once its plan is made (cli/eval_cmd.py), and `scarbook resume` of a session that stopped
short (session/resume.py): prepare the session, drive it with progress lines and signals (cli/drive.py),
report it (session/report.py) and print the outcome (cli/outcome.py).
Its own module so that `scarbook eval --dry-run` never loads the runner, the judge or the reports."""

from __future__ import annotations

from scarbook.cli.common import say, warn
from scarbook.cli.drive import Progress, connect_executor, drive_session
from scarbook.cli.outcome import say_outcome
from scarbook.models import ExecutorType, SessionState
from scarbook.reports.write import ReportPaths
from scarbook.run.outcome import EXIT_USAGE
from scarbook.session.plan import EvalPlan
from scarbook.session.prepare import prepare_eval
from scarbook.session.report import report_session
from scarbook.stats.plans import per_case_or_grouped


def run_planned(planned: EvalPlan, *, quiet: bool, executor_kind: str | None, json_path: str | None,
                junit_path: str | None) -> int:
    """Run the plan at its site and print its outcome; the exit code (2: it could not start, each reason
    printed)."""
    plan, site = planned.plan, planned.site
    prep = prepare_eval(site, plan)
    if prep.session is None:
        for error in prep.errors:
            say(f"scarbook: {error}", err=True)
        return EXIT_USAGE
    for note in planned.notes + prep.notes:
        warn(note)
    if prep.session.compared and executor_kind == ExecutorType.RAY:
        say("scarbook: --agents runs on this machine for now: a session of several agents cannot use --executor "
            "ray — leave --executor out, or compare in two sessions", err=True)
        return EXIT_USAGE
    executor = connect_executor(prep.session, executor_kind)
    for line in per_case_or_grouped(prep.undecidable):  # just before the runs: a plan that cannot call a case above
        warn(line)                                         # its threshold (a reason many cases share, once)
    for line in prep.warnings:
        warn(line)
    finished = drive_session(prep.session, Progress(quiet), executor)
    info = finished.session
    if info.state == SessionState.JUDGING:  # the summary says it too; stderr for a CI log's reader
        say(f"scarbook: {info.note} (exit 3: no verdict until then)", err=True)
    # a resumed session is reported on every run it holds, the ones kept and the ones run now
    runs = finished.runs if plan.resumed is None else list(site.history.runs(info.id, info=info))
    outcome = report_session(site, info, runs, {c.id: c for c in plan.cases}, prep.calibration,
                             policy=plan.gate, baseline=planned.baseline)
    return say_outcome(site, outcome, info, planned.shard, ReportPaths.given(json=json_path, junit=junit_path))
