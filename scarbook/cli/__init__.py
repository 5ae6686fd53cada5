"""scarbook's command line. `scarbook` with no arguments opens the TUI.

May use: every core wing (views, reports, run and below). Never the TUI: `scarbook.entry` hands the CLI
the way to open it."""

from __future__ import annotations

import click

from scarbook import __version__
from scarbook.cli.common import friendly_errors, get_project


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "--project", "root", type=click.Path(file_okay=False), default=None,
              help="Project folder (default: the nearest folder with scarbook.yaml, else the current one).")
@click.version_option(__version__, prog_name="scarbook")
@click.pass_context
def main(ctx: click.Context, root: str | None) -> None:
    """scarbook: a scar collection for LLM agents.

    Every incident becomes a case in cases/; every case is run N times and gets a pass rate with a
    95% interval. Run with no command to open the TUI; use `scarbook eval` in CI.
    """
    ctx.ensure_object(dict)
    ctx.obj["root"] = root
    if ctx.invoked_subcommand is None:
        open_tui(ctx)


@friendly_errors
def open_tui(ctx: click.Context) -> None:
    project = get_project(ctx)
    opener = ctx.obj.get("open_tui")  # handed in by scarbook.entry, which sits above the CLI and the TUI
    if opener is None:
        click.echo(ctx.get_help())
        return
    opener(project.root)


def _register() -> None:
    from scarbook.cli import (
        calibrate_cmd,
        case_cmd,
        cases_cmd,
        ci_cmd,
        eval_cmd,
        export_cmd,
        history_cmd,
        merge_cmd,
        noise_cmd,
        numbers_cmd,
        rejudge_cmd,
        resume_cmd,
        scar_cmd,
        trends_cmd,
    )

    for module in (eval_cmd, cases_cmd, case_cmd, history_cmd, scar_cmd, numbers_cmd, ci_cmd, merge_cmd, trends_cmd,
                   calibrate_cmd, noise_cmd, export_cmd, rejudge_cmd, resume_cmd):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
