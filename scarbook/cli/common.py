"""What every command shares: finding the project, and turning errors into messages and exit codes."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scarbook.errors import ScarbookError
from scarbook.text import terminal_text

if TYPE_CHECKING:
    from scarbook.project import Project
    from scarbook.reports.write import WrittenReports


def get_project(ctx: click.Context) -> Project:
    obj = ctx.find_root().obj or {}
    if "project" not in obj:
        root = obj.get("root")
        # An explicit -C is the project itself; otherwise look upward like git does. (Imported here:
        # `scarbook --help` and a command's --help never load a project, nor what loading one imports.)
        from scarbook.project import Project

        obj["project"] = Project.open(Path(root) if root else None)
        ctx.find_root().obj = obj
    return obj["project"]


def friendly_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A ScarbookError prints its message (no traceback) and exits with its code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ScarbookError as exc:
            say(f"scarbook: {exc.message}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


def say(text: str = "", *, err: bool = False) -> None:
    """The terminal-safe writer: every line that can carry agent- or transcript-derived text (a run's
    output, a file name, a transcript's task, a history note) is printed through it. Control sequences
    go (colour stays), and on a CI runner (GITHUB_ACTIONS=true) no line can be a workflow command."""
    click.echo(terminal_text(text, ci=os.environ.get("GITHUB_ACTIONS") == "true"), err=err)


def warn(text: str) -> None:
    say(click.style("warning: ", fg="yellow") + text, err=True)


def report_history_problems(problems: Iterable[Any], said: Iterable[str] = ()) -> list[str]:
    """Print what reading history met (a ReadResult's `problems`), each once and not those already
    `said`; returns every problem said so far."""
    out = list(said)
    for problem in map(str, problems):
        if problem not in out:
            out.append(problem)
            say(click.style("history: ", fg="yellow") + problem, err=True)
    return out


def say_written(written: WrittenReports) -> bool:
    """Print what write_reports could not do (each file named once, never a traceback); True if every
    report file asked for was written."""
    for text in written.warnings:
        warn(text)
    for problem in written.problems:
        say(f"scarbook: {problem}", err=True)
    return written.ok


def report_case_problems(problems: list) -> None:
    for p in problems:
        say(click.style("invalid case: ", fg="red") + str(p), err=True)

