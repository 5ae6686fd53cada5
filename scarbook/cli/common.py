"""What every command shares: finding the project, and turning errors into messages and exit codes."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scarbook.errors import ScarbookError

if TYPE_CHECKING:
    from scarbook.project import Project
    from scarbook.reports.write import WrittenReports


EXAMPLE_NAMES = {"--json": "report.json", "--junit": "report.xml", "--html": "report.html", "--import": "labels.csv",
                 "--export": "labels.csv"}


class NamedFile(click.Path):
    """A file an option names (a report to write, labels to read): an empty name — `--junit "$OUT"` with OUT
    unset — is refused, not taken as the option not given (no file was written and the command said nothing),
    and so is a name ending in / (`--html out/` wrote the file `out`). `-` is standard output for a report (the
    command's own lines then go to stderr, as for /dev/stdout); where a stream cannot stand for the file,
    `no_dash` says why and `-` is refused with it."""

    def __init__(self, *, no_dash: str | None = None, **kwargs: Any) -> None:
        super().__init__(dir_okay=False, **kwargs)
        self.no_dash = no_dash

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail(f"{value!r} names no file (was the variable it came from unset?) — give a file name", param, ctx)
        if value == "-" and self.no_dash:
            example = next((f", e.g. {o} {name}" for o in (param.opts if param else ()) if (name := EXAMPLE_NAMES.get(o))),
                           "")
            self.fail(f"'-' would be a file named '-': {self.no_dash} — give the file's name{example}", param, ctx)
        if isinstance(value, str) and value.endswith(("/", os.sep)):  # written as a file named without the slash
            self.fail(f"{value!r} ends in {value[-1]}, so it names a folder, not a file — give the file's name, "
                      f"e.g. {value}FILE", param, ctx)
        from scarbook.fs.files import is_standard_output  # (here: `scarbook --help` never loads the file layer)

        if ctx is not None and isinstance(value, (str, Path)) and is_standard_output(value):
            ctx.meta[_STDOUT_IS_A_FILE] = True  # `eval --json - | jq .`: stdout carries the report alone
        return super().convert(value, param, ctx)


_STDOUT_IS_A_FILE = "scarbook.stdout_is_a_file"  # (click's meta: one dict the whole command's contexts share)


def stdout_is_a_file() -> bool:
    """A file option of the running command names its standard output (NamedFile): every line it prints then
    goes to stderr, so what reads stdout reads that file alone; the exit code is the same."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and bool(ctx.meta.get(_STDOUT_IS_A_FILE))


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


def examples(*lines: str) -> str:
    """A command's epilog: the command lines it is used with, shown as written under its options (`\b` keeps
    click from joining them into one paragraph; tests/cli/test_eval.py parses each one)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


def say(text: str = "", *, err: bool = False) -> None:
    """The terminal-safe writer: every line the CLI prints goes through it (tests/cli/test_one_writer.py
    checks), since any of them can carry agent- or transcript-derived text (a run's output, a file name,
    a case title, a transcript's task, a history note). Every control sequence goes — colour too, but
    for the CLI's own (`style`) — bidirectional controls are escaped, and on a CI runner
    (GITHUB_ACTIONS=true) no line can be a workflow command."""
    err = err or stdout_is_a_file()
    with reader_may_leave(err):
        click.echo(safe_text(text), err=err)


def say_workflow_command(line: str) -> None:
    """A GitHub Actions workflow command scarbook itself makes (`::error file=…::…`, reports/github.py,
    which escapes every text inside it): said as `say` says a line, but its own leading `::` kept."""
    from scarbook.text import terminal_text

    err = stdout_is_a_file()  # (a runner reads workflow commands on stderr too)
    with reader_may_leave(err):
        click.echo(terminal_text(line, keep_colour=False).replace("##[", "\\x23#["), err=err)


@contextlib.contextmanager
def reader_may_leave(err: bool) -> Iterator[None]:
    """A line to stdout (stderr) whose reader may be gone — `scarbook eval --junit r.xml | head` —: then the rest
    of that stream goes nowhere and the command goes on. Click's own answer, exit 1 at once, left the reports
    unwritten and read as "a case below its threshold". A pipe read in part is not scarbook's to report."""
    try:
        yield
    except BrokenPipeError:
        stream = sys.stderr if err else sys.stdout
        try:  # what is still buffered, and every later line, is written to /dev/null (no error at exit either)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # (a stream with no descriptor of its own: nothing to redirect)
            pass


# The CLI's own colours travel to the writer as marks no other text can hold (a private-use character
# and this process's nonce), so the writer drops every escape a text brought and puts back only these.
_NONCE = os.urandom(4).hex()  # (secrets.token_hex's own source, without the 10 ms of importing hashlib)
_OWN = re.compile("\ue000" + _NONCE + r"([0-9;]*)\ue001")
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def style(text: str, fg: str | None = None, bold: bool | None = None) -> str:
    """click.style's colour, for a line `say` prints (elsewhere the marks would show)."""
    return _SGR.sub(lambda m: f"\ue000{_NONCE}{m.group(1)}\ue001", click.style(text, fg=fg, bold=bold))


def safe_text(text: str) -> str:
    """`text` as `say` prints it: for what prints it another way (a prompt, the progress bar's console)."""
    # Imported at the first line said: `scarbook --help` prints through click and never needs it (its regular
    # expressions are a few ms of the start-up, issue 38.6).
    from scarbook.text import terminal_text

    cleaned = terminal_text(text, ci=os.environ.get("GITHUB_ACTIONS") == "true", keep_colour=False)
    return _OWN.sub(lambda m: f"\x1b[{m.group(1)}m", cleaned) if "\ue000" in cleaned else cleaned


def warn(text: str) -> None:
    say(style("warning: ", fg="yellow") + text, err=True)


def report_history_problems(problems: Iterable[Any], said: Iterable[str] = ()) -> list[str]:
    """Print what reading history met (a ReadResult's `problems`), each once and not those already
    `said`; returns every problem said so far."""
    out = list(said)
    for problem in map(str, problems):
        if problem not in out:
            out.append(problem)
            say(style("history: ", fg="yellow") + problem, err=True)
    return out


def say_written(written: WrittenReports) -> bool:
    """Print what write_reports could not do (each file named once, never a traceback); True if every
    report file asked for was written."""
    for text in written.warnings:
        warn(text)
    for problem in written.problems:
        say(f"scarbook: {problem}", err=True)
    return written.ok


def refuse_own_files(project: Project, paths: dict[str, str | Path | None]) -> None:
    """Before anything is read or written: no file a command was asked to write (option -> path) replaces
    scarbook.yaml or the baseline, or lands in the cases or the history (ConfigFolders.own_file_refusal), and no
    two name one file (fs/files.shared_name)."""
    refuse_shared_names(paths)
    for option, path in paths.items():
        refusal = project.own_file_refusal(option, path) if path and str(path) != "-" else None
        if refusal:
            raise ScarbookError(refusal)


def refuse_shared_names(paths: dict[str, str | Path | None]) -> None:
    """Before anything runs: no two report options name one file, nor both standard output (`--json - --junit -`
    put the two reports on it one after the other) — fs/files.shared_name."""
    from scarbook.fs.files import shared_name

    if clash := shared_name(paths):
        raise ScarbookError(clash)


def report_case_problems(problems: list) -> None:
    for p in problems:
        say(style("invalid case: ", fg="red") + str(p), err=True)

