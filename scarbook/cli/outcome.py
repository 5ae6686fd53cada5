"""A finished session's outcome on a terminal: the table, the summary, the baseline comparison, the CI
annotations and the report files; the exit code. `eval`, `rejudge` and `resume` end here."""

from __future__ import annotations

import os

from scarbook.cases.folders import ProjectFolders
from scarbook.cli.against import echo_against, echo_annotations
from scarbook.cli.common import say, say_written
from scarbook.models import SessionInfo, SessionState
from scarbook.reports.table import format_summary, format_table
from scarbook.reports.write import ReportPaths, write_reports
from scarbook.run.outcome import EXIT_OK, EXIT_USAGE
from scarbook.run.shard import Shard
from scarbook.session.report import Outcome


def say_outcome(project: ProjectFolders, outcome: Outcome, info: SessionInfo, shard: Shard | None, paths: ReportPaths) -> int:
    """Print the table, the summary and the comparison, write the reports; the exit code."""
    rep, against = outcome.report, outcome.against
    say(format_table(rep))
    say(format_summary(rep))
    if against:
        echo_against(against, project, rep.session)
    echo_annotations(project, rep, against)
    reports_ok = say_written(write_reports(rep, against, paths, summary_env=os.environ))
    code = rep.exit_code
    if shard is not None:
        say(f"shard {shard.label} of session {shard.session_id}: the gate is decided by `scarbook merge` "
                   f"over all {shard.count} shards")
        code = EXIT_OK if info.state == SessionState.FINISHED else rep.exit_code
    # a report file asked for is missing: said above, and never a green exit (the session is recorded)
    return code if reports_ok or code != EXIT_OK else EXIT_USAGE
