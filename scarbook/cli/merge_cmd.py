"""`scarbook merge`: join the shards of one session (`eval --shard I/N`) into that session."""

from __future__ import annotations

import os
from pathlib import Path

import click

from scarbook.cases.io import case_digest
from scarbook.cli.common import NamedFile, examples, friendly_errors, get_project, refuse_own_files, say, say_written
from scarbook.errors import ScarbookError
from scarbook.fs.files import named_file_unwritable_why, unwritable_why
from scarbook.history.judge_truth import calibration_for
from scarbook.models import Case, SessionInfo, SessionState
from scarbook.project import Project
from scarbook.reports.table import build_report, format_summary, format_table
from scarbook.reports.write import ReportPaths, write_reports
from scarbook.run.outcome import EXIT_OK, EXIT_USAGE
from scarbook.run.shard import check_session_id
from scarbook.text import plural
from scarbook.tools.merge import (
    absent_workspaces,
    check_complete,
    check_plan,
    check_read,
    check_records,
    copy_judge_artifacts,
    copy_kept_workspaces,
    copy_run_files,
    find_shards,
    merge_shards,
    pick_session,
)


def cases_for(project: Project, info: SessionInfo) -> dict[str, Case]:
    """The project's cases the session ran; their thresholds gate it, so they must be the ones that ran."""
    by_id = project.load_cases().by_id()
    for cid in info.case_ids:
        case = by_id.get(cid)
        rev = f" (git revision {info.git_revision})" if info.git_revision else ""
        if case is None:
            raise ScarbookError(f"case {cid!r}, which the shards ran, is not in {project.cases_dir} — run "
                                f"`scarbook merge` in a checkout of the commit the shards ran{rev}")
        if info.case_digests.get(cid) not in (None, case_digest(case)):
            raise ScarbookError(f"case {cid!r} in {project.cases_dir} is not the one the shards ran (its task, "
                                f"checks or seed changed) — run `scarbook merge` in a checkout of the commit "
                                f"the shards ran{rev}")
    return {cid: by_id[cid] for cid in info.case_ids}


@click.command("merge", epilog=examples("scarbook merge shard-1/history shard-2/history --junit report.xml"))
@click.argument("dirs", metavar="DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--session-id", default=None, help="Which session to merge, when the folders hold shards of several.")
@click.option("--json", "json_path", type=NamedFile(), default=None, help="Write the report as JSON (- for standard output).")
@click.option("--junit", "junit_path", type=NamedFile(), default=None, help="Write a JUnit XML report (- for standard output).")
@click.pass_context
@friendly_errors
def merge_command(ctx: click.Context, dirs: tuple[Path, ...], session_id: str | None, json_path: str | None,
                  junit_path: str | None) -> None:
    """Merge the shards of a session into one session, as if it had run on one machine.

    Each DIR is a history folder a shard job left (its workspaces/history, or one shard's session
    folder). Every shard 1..N of the session must be there exactly once: a missing or duplicated
    shard is an error naming it, and so is a DIR that holds no shard. The merged session is recorded in this project's history under
    the shared --session-id, and its table, exit code, JSON and JUnit are those of `scarbook eval`
    (exit codes as for eval, under the gate the session ran with: 0 no case shown below its threshold,
    1 some case decided below, 2 usage error, 3 no verdict — including a shard that did not finish — or
    a case undecided under `undecided: fail`).

    Run it in a checkout of the commit the shards ran: the cases' thresholds come from cases/.
    """
    project = get_project(ctx)
    refuse_own_files(project, {"--json": json_path, "--junit": junit_path})
    if session_id is not None:
        check_session_id(session_id)
    found = find_shards(list(dirs), session_id)
    sid = session_id or pick_session(found, list(dirs))
    found = [f for f in found if f.shard.session_id == sid]
    if not found:
        raise ScarbookError(f"no shards of session {sid} in {', '.join(map(str, dirs))}")
    check_complete(found)  # the headers: every shard once, one session, one configuration
    check_read(found)  # every record read as the runner wrote it, none missing
    check_plan(found)  # each shard's runs are its jobs, all of them when it finished
    cases = cases_for(project, found[0].info)  # the shards agree on cases and digests (check_complete)
    check_records(found, {cid: len(case.checks) for cid, case in cases.items()})
    info, runs = merge_shards(found)
    history = project.history
    if (history.dir / sid).exists():
        raise ScarbookError(f"session {sid} is already in {history.dir} (merged before?) — delete "
                            f"{history.dir / sid} to merge it again")
    _check_writable(history.dir, {"--json": json_path, "--junit": junit_path})
    # the kept workspaces (failed runs', or all under keep: all) beside this history, as `eval` leaves them
    for problem in absent_workspaces(found):
        say(f"scarbook: shard files not copied: {problem}", err=True)
    for problem in copy_kept_workspaces(found, project.workspaces_dir, sid):
        say(f"scarbook: kept workspaces not copied: {problem}", err=True)
    for problem in copy_run_files(found, project.workspaces_dir, sid):
        say(f"scarbook: transcripts not copied: {problem}", err=True)
    for problem in copy_judge_artifacts(found, project.workspaces_dir):  # what `scarbook rejudge` grades again
        say(f"scarbook: judge artifacts not copied: {problem}", err=True)
    ended = info.state  # written once every run is: a merge killed midway leaves an interrupted session
    info.state = SessionState.RUNNING
    history.start_session(info)
    for r in runs:
        history.record_run(r)
    info.state = ended
    history.finish_session(info)
    rep = build_report(info, runs, cases, project.config,
                       calibration_for(project.history, project.workspaces_dir, project.config.judge, cases))
    say(format_table(rep))
    say(format_summary(rep))
    say(f"merged {plural(len(found), 'shard')} into session {sid} in {history.dir / sid}")
    # the GitHub step summary too, as `eval` appends it (when $GITHUB_STEP_SUMMARY is set)
    reports_ok = say_written(write_reports(rep, None, ReportPaths.given(json=json_path, junit=junit_path),
                                           summary_env=os.environ))
    # a report file asked for is missing: said above, and never a green exit (the session is recorded)
    ctx.exit(rep.exit_code if reports_ok or rep.exit_code != EXIT_OK else EXIT_USAGE)


def _check_writable(history_dir: Path, reports: dict[str, str | None]) -> None:
    """Before anything is recorded: the history and each report file asked for can be written."""
    why = unwritable_why(history_dir)
    if why:
        raise ScarbookError(f"the session history cannot be written: {why} — make {history_dir} a writable "
                            "folder, or point workspaces_dir in scarbook.yaml at one")
    for option, path in reports.items():
        if path:
            why = named_file_unwritable_why(path)
            if why:
                raise ScarbookError(f"{option} {path} cannot be written: {why} — choose a writable path for {option}")


COMMANDS = [merge_command]
