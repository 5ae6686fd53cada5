"""The one transcript model every parser produces.

A transcript is an ordered timeline of entries (messages, tool calls, tool results) plus what can
be derived from it: the files the agent wrote (final content reconstructed where possible), the
files it read or listed, the final answer, the model and the token usage. Pure data, no I/O.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from sys import intern
from typing import Any, Literal

from scarbook.models import Usage


@dataclass(slots=True)  # one per record of a big log: no __dict__ each
class Message:
    role: str  # user | assistant | system
    text: str
    # thinking/reasoning is shown, never an answer; "command" is a slash command the user typed or
    # its local output (`/exit`, `/clear`), "synthetic" a message the harness wrote in the model's
    # place (Claude Code `model: <synthetic>`: an API error, "out of extra usage"): neither is the
    # task nor the artifact.
    kind: Literal["text", "thinking", "command", "synthetic"] = "text"
    sidechain: bool = False  # a subagent's conversation (Claude Code `isSidechain`)


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]
    sidechain: bool = False
    # The file the call acts on when its input does not name it (SWE-agent's `edit` changes the open file).
    target: str | None = None
    # Its file operations, once worked out (files.file_operations), and whether they were read as SWE-agent's
    # commands.
    ops: tuple[FileOp, ...] | None = field(default=None, repr=False, compare=False)
    ops_swe: bool = field(default=False, repr=False, compare=False)


def shared_names(arguments: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments with one string for each name: a big log's calls repeat a few ("path", "command"),
    each parsed as a string of its own when its record was parsed alone (a JSON line, a streamed item)."""
    return {intern(k) if type(k) is str else k: v for k, v in arguments.items()}


@dataclass(slots=True)
class ToolResult:
    call_id: str
    text: str
    is_error: bool = False
    # The exact whole content of a file this result read, when the log states it outright
    # (Claude Code's `toolUseResult.file`); None means "use `text` if the format is verbatim".
    file_content: str | None = None
    # The file's content before an edit, when the log records it (Claude Code `originalFile`).
    original_file: str | None = None
    sidechain: bool = False


Entry = Message | ToolCall | ToolResult


@dataclass(slots=True)
class FileOp:
    """What one tool call did to one file, as far as its input and result say."""

    # write: whole new content; edit: (old, new) replacements; insert: text at a line; lines: lines
    # insert_line..end_line replaced (SWE-agent's `edit N:M`); changed: changed in a way the log does not
    # show (sed -i, a redirection); read; list
    kind: Literal["write", "edit", "insert", "lines", "changed", "read", "list"]
    path: str
    content: str | None = None
    edits: Sequence[tuple[str, str, bool]] = ()  # (old, new, replace_all)
    insert_line: int = 0
    end_line: int = 0
    partial: bool = False  # a read of only some lines; a change in place (sed -i, >>) of a file that was there
    # how a read's result shows the file: as it is, numbered by a text editor's `view` (gutter), or
    # SWE-agent's `open` window ("[File: a.py (10 lines total)]", "1:line")
    view: Literal["verbatim", "gutter", "window"] = "verbatim"


@dataclass(slots=True)
class FileWritten:
    """A file the agent wrote. `content` is None when it cannot be reconstructed (see `note`)."""

    path: str
    content: str | None
    tools: list[str] = field(default_factory=list)  # tool names applied, in order
    note: str = ""
    # The new text of edits that could not be applied (no known earlier content): shown as a
    # partial candidate rather than hidden.
    fragments: list[str] = field(default_factory=list)
    entry: int = -1  # the timeline index of the last call that wrote it


@dataclass(slots=True)
class FileRead:
    """A file the agent read (or a directory it listed)."""

    path: str
    kind: Literal["read", "list"]
    content: str | None  # whole content when a tool result holds it whole, else None
    tool: str
    written_before: bool = False  # the agent had itself written this path earlier


@dataclass
class Transcript:
    format: str
    entries: list[Entry] = field(default_factory=list)
    final_answer: str | None = None
    # The final answer is only the agent's last text before tool calls the log ends with ("Let me check…"):
    # shown as a candidate, never the default artifact.
    preamble: bool = False
    # A Claude Code subagent's file: the session it belongs to, when it sits beside it (`--list` names it).
    parent: Path | None = None
    # A compaction file (Claude Code's auto-compact): its summary is the answer, whatever files the conversation
    # it re-emits wrote.
    compaction: bool = False
    model: str | None = None
    usage: Usage | None = None
    cwd: str | None = None
    cwds: list[str] = field(default_factory=list)  # every cwd the log names, in order (Claude Code)
    # Where relative paths start: the cwd, the common root of the files touched, or --root.
    root: str | None = None
    # The day the incident happened (from the transcript's timestamps), ISO "YYYY-MM-DD".
    date: str | None = None
    # OTel: every trace in the file (id, first user words) when it holds several; `trace` is shown.
    # An Inspect log: every sample ("ID:EPOCH", its scores and input) when it holds several.
    traces: list[tuple[str, str]] = field(default_factory=list)
    trace: str | None = None
    warnings: list[str] = field(default_factory=list)
    # A log that never holds the prompt (codex exec --json): why, and where the prompt is kept instead.
    task_hint: str | None = None
    # What a draft case keeps as its scar's transcript instead of a copy of the whole file: (suffix,
    # bytes). An Inspect log of many samples keeps the one imported, as a one-sample log.
    excerpt: tuple[str, bytes] | None = None
    files_written: list[FileWritten] = field(default_factory=list)
    files_read: list[FileRead] = field(default_factory=list)
    source: Path | None = None
    derive_mark: tuple[int, bool] = (0, True)  # warnings before files were derived; verbatim reads
    model_calls: int = 0  # the recorder's `model_call` records: one per turn of the agent (0: not recorded)
    # Each usage record as it came (entries before it, its model, its tokens): the budget checks say at
    # which step a budget was passed (scarbook's own format; the recorder writes one per model call).
    usage_steps: list[tuple[int, str | None, Usage]] = field(default_factory=list)
    # What is derived from the finished timeline and asked for many times (its turns), computed once.
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # Counts of those records no count can be (negative, not finite, over the cap), left out: what the run says.
    usage_problems: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[Message]:
        return [e for e in self.entries if isinstance(e, Message)]

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [e for e in self.entries if isinstance(e, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [e for e in self.entries if isinstance(e, ToolResult)]


def date_of(stamp: Any) -> str | None:
    """The day ("YYYY-MM-DD") of an ISO timestamp or of seconds / nanoseconds since the epoch."""
    import datetime as dt

    if isinstance(stamp, str):
        try:
            return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).date().isoformat()
        except ValueError:
            return None
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and stamp > 0:
        seconds = stamp / 1e9 if stamp > 1e14 else stamp
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return None


def as_int(value: Any) -> int:
    """A count from a log, whatever type it came as: an int, a whole float, a decimal string; else 0."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                return as_int(float(value))
            except ValueError:
                return 0
    return 0


class NotThisFormat(Exception):
    """Raised by a parser when the file is not in its format; the message says why."""


class NothingToImport(NotThisFormat):
    """Raised by a parser that recognises the file as its format but finds no conversation in it:
    its message is the one the user sees (no other format is blamed)."""


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cycle collector off while a log's timeline, candidates or seeds are built: they make hundreds of
    thousands of objects and no cycles, and each full collection walks every one made so far (at 200,000
    records a fifth of the import's time, growing with the log). Only the caller that paused it resumes it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > _MANY and gc.get_freeze_count() == 0:
            # What the pause made lives as long as the timeline: it goes to the oldest generation at once. Left
            # young, the first allocation after the pause had the collector walk all of it (0.12 s after a
            # 100 MB log, a fifth of the parse). Only when nothing else is frozen: unfreeze() thaws everything.
            gc.freeze()
            gc.unfreeze()
        gc.enable()


# codex exec's to-do list (its `todo_list` item) as a call: the agent's own account of its progress, offered as a
# to-do candidate (case_pieces), never the default artifact
TODO_TOOL = "todo_list"
_MANY = 50_000  # tracked objects made in a pause worth moving (get_freeze_count walks what is frozen)
