"""`scarbook export SESSION --format inspect`: a past session in another tool's log format."""

from __future__ import annotations

import os
from pathlib import Path

import click

from scarbook.cli.common import (
    examples,
    friendly_errors,
    get_project,
    refuse_own_files,
    report_history_problems,
    say,
    warn,
)
from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error
from scarbook.reports.inspect_log import default_log_name, viewer_lists, write_inspect_log
from scarbook.text import plural


@click.command("export", epilog=examples("scarbook export latest --format inspect -o logs/"))
@click.argument("session", default="latest")
@click.option("--format", "fmt", type=click.Choice(["inspect"]), required=True,
              help="inspect: an Inspect AI eval log (JSON) that `inspect view` opens; samples are runs, "
                   "scores are checks, epochs are runs per case.")
@click.option("-o", "--output", "output", type=click.Path(), default=None, metavar="FILE|DIR",
              help="The file to write, or a folder to write it in under Inspect's own file name (default: the "
                   "current folder). The folder must exist: none is created.")
@click.pass_context
@friendly_errors
def export_command(ctx: click.Context, session: str, fmt: str, output: str | None) -> None:
    """Write SESSION (id, label, `latest`; default latest) in another tool's format: --format inspect
    writes an Inspect AI eval log (docs/inspect.md has the mapping)."""
    project = get_project(ctx)
    info = project.history.resolve(session)
    runs = project.history.runs(info.id)
    report_history_problems(runs.problems)
    found = project.load_cases()
    path = Path(output or ".")
    if path.is_dir():
        path = path / default_log_name(info)
    elif output and output.endswith(("/", os.sep)):  # a folder was meant: never a file by its name
        if path.exists():
            raise ScarbookError(f"{path} is a file, not a folder — give -o a folder, or a file name without the "
                                "trailing /")
        raise ScarbookError(f"no folder {path} — create it (mkdir -p {path}), or give -o an existing folder")
    elif not path.parent.exists():  # made silently, a typo in the path would hide the log somewhere new
        raise ScarbookError(f"no folder {path.parent} to write {path.name} in — create it (mkdir -p {path.parent}), "
                            "or give -o a path in an existing folder")
    refuse_own_files(project, {"-o": path})
    try:
        n = write_inspect_log(path, info, runs, found.by_id())
    except OSError as exc:
        raise ScarbookError(f"cannot write {path}: {describe_os_error(exc)} — choose a writable path") from None
    if not n:
        warn(f"session {info.id} has no runs: the log has no samples")
    say(f"inspect log: session {info.id}, {plural(n, 'sample')} -> {path}")
    if viewer_lists(path.name):
        say(f"open it: inspect view --log-dir {path.parent.resolve()}")
    else:
        warn(f"inspect view lists a .json log only when its name starts with the time, as "
             f"{default_log_name(info)} does: rename it, or give -o a folder")


COMMANDS = [export_command]
