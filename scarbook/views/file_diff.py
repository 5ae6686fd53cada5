"""The −/+ diff of one file a run changed: the workspace file against the case's seed.

The workspace side is the agent's and is read through scarbook.fs.safefs (no link followed, a pipe never
opened); the seed side is read as seeding reads it (an inline `seed:` file wins over `seed/`, a file
under `seed/` through fsutil.read_regular_bytes). Both are capped at READ_CAP bytes: a larger file is
not diffed, and the note says so. Every line shown goes through safetext.clean_text. No Textual, no
rich: the run review renders a `FileDiff` (tui/widgets/run_detail.py).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.fs import safefs
from scarbook.fs.escaped_names import real_name
from scarbook.fs.files import FileTooLargeError, NotAFileError, read_regular_bytes
from scarbook.fs.paths import check_relative
from scarbook.models import Case
from scarbook.text import clean_text, escape_name, plural

READ_CAP = 256 * 1024  # bytes read of either side; a larger file is named, not diffed
MAX_LINES = 60  # diff lines shown per file before "… N more lines"
CONTEXT = 2  # unchanged lines around each change
LINE_CHARS = 400  # characters of one line shown
BINARY_SNIFF = 8192


class Unreadable(Exception):
    """One side of a diff that cannot be shown; the message says why in one line."""


@dataclass(frozen=True)
class DiffLine:
    sign: str  # "-" (seed only), "+" (workspace only), " " (both: context) or "@" (a hunk header)
    text: str


@dataclass
class FileDiff:
    rel: str
    change: str  # created, modified or deleted
    lines: list[DiffLine] = field(default_factory=list)
    more: int = 0  # diff lines left out after MAX_LINES
    note: str = ""  # why nothing (or not everything) is shown: binary, refused, too large, not UTF-8


def read_seed(case: Case, rel: str, cap: int = READ_CAP) -> bytes:
    """The content seeding writes at `rel` (as history records it: escaped, text.escape_name), in seed_manifest's
    order: an inline seed wins over seed/."""
    inline = {escape_name(name): text for name, text in case.inline_seeds.items()}
    if rel in inline:
        data = inline[rel].encode("utf-8")
    else:
        if case.seed_dir is None:
            raise Unreadable(f"{rel} is not in the case's seed now")
        try:
            name = real_name(case.seed_dir, rel, follow_links=True)  # (seeding follows the seed's links)
        except safefs.Refused as exc:
            raise Unreadable(f"{rel} is not in the case's seed now (the case changed since the run?)"
                             if exc.missing else str(exc)) from None
        why = check_relative(name, walked=True)  # (found on disk by real_name)
        if why is not None:
            raise Unreadable(escape_name(f"{rel}: {why}"))
        try:
            data = read_regular_bytes(case.seed_dir / name, limit=cap)
        except FileTooLargeError as exc:
            raise Unreadable(f"the seed's {rel} is {exc.size:,} bytes, more than the {cap:,} the review reads") from None
        except NotAFileError as exc:
            raise Unreadable(f"the seed's {rel} is {exc.kind}, not a file") from None
        except (FileNotFoundError, NotADirectoryError):
            raise Unreadable(f"{rel} is not in the case's seed now (the case changed since the run?)") from None
        except OSError as exc:
            raise Unreadable(f"cannot read the seed's {rel}: {exc.strerror or exc}") from None
    if len(data) > cap:
        raise Unreadable(f"the seed's {rel} is {len(data):,} bytes, more than the {cap:,} the review reads")
    return data


def read_workspace(workspace: Path | str, rel: str, cap: int = READ_CAP) -> bytes:
    """The agent's file `rel`, read as checks read it (scarbook.fs.safefs), refused past `cap` bytes. `rel` is the
    name history recorded, escaped (text.escape_name): the file read is the one whose name escapes to it
    (fs/escaped_names.py), and what is said of it names it escaped."""
    try:
        data, size = safefs.read_file(workspace, real_name(workspace, rel), cap + 1)
    except safefs.Refused as exc:
        raise Unreadable(escape_name(str(exc))) from None
    except OSError as exc:
        raise Unreadable(f"cannot read {rel}: {exc.strerror or exc}") from None
    if size > cap or len(data) > cap:
        raise Unreadable(f"{rel} is {max(size, len(data)):,} bytes, more than the {cap:,} the review reads")
    return data


def _text_lines(data: bytes) -> tuple[list[str] | None, bool]:
    """(lines, is_utf8); lines None for a binary file (a NUL byte near the start)."""
    if b"\0" in data[:BINARY_SNIFF]:
        return None, True
    try:
        text, utf8 = data.decode("utf-8"), True
    except UnicodeDecodeError:
        text, utf8 = data.decode("utf-8", errors="replace"), False
    return [clean_text(line[:LINE_CHARS]) for line in text.splitlines()], utf8


def _diff_lines(old: list[str], new: list[str]) -> list[DiffLine]:
    out: list[DiffLine] = []
    for line in difflib.unified_diff(old, new, n=CONTEXT, lineterm=""):
        if line.startswith(("---", "+++")) and not out:
            continue  # the two file headers; the review names the file itself
        if line.startswith("@@"):
            out.append(DiffLine("@", line))
        else:
            out.append(DiffLine(line[:1], line[1:]))
    return out


def diff_file(rel: str, change: str, *, case: Case | None, workspace: Path | str | None,
              case_problem: str = "", cap: int = READ_CAP, max_lines: int = MAX_LINES) -> FileDiff:
    """The diff of one changed file. `case` None: its seed cannot be read (`case_problem` says why);
    `workspace` None: the run's workspace was not kept. Never raises for what is on disk."""
    out = FileDiff(rel, change)
    old_data = new_data = b""
    try:
        if change != "created":
            if case is None:
                raise Unreadable(f"seed not available: {case_problem or 'the case did not load'}")
            old_data = read_seed(case, rel, cap)
        if change != "deleted":
            if workspace is None:
                raise Unreadable("workspace not kept")
            new_data = read_workspace(workspace, rel, cap)
    except Unreadable as exc:
        out.note = f"not shown: {exc}"
        return out
    old, old_utf8 = _text_lines(old_data)
    new, new_utf8 = _text_lines(new_data)
    if old is None or new is None:
        sizes = " → ".join(plural(len(d), "byte", grouped=True) for d, used in ((old_data, change != "created"),
                                                                 (new_data, change != "deleted")) if used)
        out.note = f"binary file ({sizes}): not diffed"
        return out
    if not (old_utf8 and new_utf8):
        out.note = "not UTF-8: bytes that do not decode are shown as �"
    lines = _diff_lines(old, new)
    if change != "modified":
        lines = [line for line in lines if line.sign != "@"]  # all + or all −: a hunk header says nothing
    if change == "modified" and not lines:
        out.note = (out.note + "; " if out.note else "") + "same text as the seed now (line endings or mode may differ)"
    out.lines, out.more = lines[:max_lines], max(0, len(lines) - max_lines)
    return out
