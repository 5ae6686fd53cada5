"""What every command shares: finding the project, and turning errors into messages and exit codes."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from scarbook.errors import ScarbookError
from scarbook.project import Project


def get_project(ctx: click.Context) -> Project:
    obj = ctx.find_root().obj or {}
    if "project" not in obj:
        root = obj.get("root")
        # An explicit -C is the project itself; otherwise look upward like git does.
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
            click.echo(f"scarbook: {exc.message}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


def warn(text: str) -> None:
    click.echo(click.style("warning: ", fg="yellow") + text, err=True)


def report_history_problems(history: Any, since: int = 0) -> int:
    """Print the history's problems from index `since` on; returns how many there are now."""
    for problem in history.problems[since:]:
        click.echo(click.style("history: ", fg="yellow") + str(problem), err=True)
    return len(history.problems)


def report_case_problems(problems: list) -> None:
    for p in problems:
        click.echo(click.style("invalid case: ", fg="red") + str(p), err=True)


def resolve_root(path: str | None) -> Path | None:
    return Path(path) if path else None


def refuse_unknown_cases(project: Project, found: Any, names: tuple[str, ...] | list[str]) -> None:
    """Raise (exit 2) when a case named on the command line is not in the collection; a case whose
    case.yaml is invalid says so, since its problem was printed just before."""
    by_id = found.by_id()
    unknown = [n for n in names if n not in by_id]
    if unknown:
        bad = {p.path.parent.name for p in found.problems}
        why = [f"{n} (its case.yaml is invalid, see above)" if n in bad else n for n in unknown]
        raise ScarbookError(f"no such case: {', '.join(why)} — `scarbook list` shows the cases in {project.cases_dir}")
