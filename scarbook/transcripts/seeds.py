"""The seed of a draft: the project as it stood when the chosen task began (issue 34.2).

The timeline is walked once. Files the turns before the task wrote, edited or read are seeded with
their content as of the task's first prompt, replayed from those calls (a write, then its edits; a
whole read states the content outright); files the task itself met first are seeded with what it
found (a whole read) or, when it changed them in place, with their content before (Claude Code's
`originalFile`). A file whose earlier content the log does not hold is still named — a suggestion
without content, whose reason says what is missing — never silently left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scarbook.fs.paths import check_relative
from scarbook.transcripts.case_pieces import candidates, default_artifact, pick_task, turn_of, turns
from scarbook.transcripts.files import file_events, is_shell, read_content, replay
from scarbook.transcripts.model import FileOp, FileWritten, ToolCall, ToolResult, Transcript, paused_gc
from scarbook.transcripts.text import well_formed


@dataclass(slots=True)
class SeedSuggestion:
    path: str
    content: str | None  # None when the transcript does not hold the file's content at the task's start
    reason: str

    def __post_init__(self) -> None:
        # a seed file is written as UTF-8: half a character the log cut is read as U+FFFD (text.well_formed)
        self.path = well_formed(self.path)
        self.content = well_formed(self.content) if self.content is not None else None


@dataclass
class _Before:
    """A file as the turns before the task left it."""

    state: FileWritten
    tools: list[str] = field(default_factory=list)  # the calls that wrote it (none: only read or listed)
    entry: int = 0  # the last call that touched it
    seen_by: str = ""  # the first call that read or listed it
    listed: bool = False


def task_start(t: Transcript, turn: int | None, *, exact: bool = False) -> int:
    """The timeline index where the task began: the prompt of its first turn (a follow-up's task
    begins at the request it continues); 0 when the log names no turn."""
    picked = pick_task(t, turn, exact=exact).turns
    all_turns = turns(t)
    return all_turns[picked[0] - 1].entry if picked and picked[0] <= len(all_turns) else 0


def default_start(t: Transcript) -> int:
    """Where the task of the default draft began (the turn of the default artifact)."""
    cands = candidates(t)
    turn = turn_of(t, cands[default_artifact(cands) - 1].entry) if cands else None
    return task_start(t, turn)


def suggest_seeds(t: Transcript, start: int | None = None) -> list[SeedSuggestion]:
    """The seed files of a task that began at timeline index `start` (default: the default draft's task),
    once each, in the order the log first touched them. Files the agent created during the task are
    not seeds; every file it needs whose content the log does not hold is one without content."""
    with paused_gc():
        return _suggest_seeds(t, start)


def _suggest_seeds(t: Transcript, start: int | None) -> list[SeedSuggestion]:
    start = default_start(t) if start is None else start
    before: dict[str, _Before] = {}
    found: dict[str, SeedSuggestion | None] = {}  # met first by the task: its seed, or None (it made the file)
    for index, call, result, op, path in file_events(t):
        if path in (".", "") or check_relative(path):
            continue  # outside the root: `derive_files` already warned
        if index < start:
            _before_task(before, path, op, call, result, index, t.derive_mark[1])
        elif path not in before:
            have = found.get(path, ...)
            if have is ... or have is not None and have.content is None:  # (else decided: as _met_by_task says)
                _met_by_task(found, path, op, call, result, t.derive_mark[1])
        elif path not in found:
            found[path] = _as_it_stood(t, path, before[path], op, result, call)
    out = [found.get(path) or _as_left(t, path, b) for path, b in before.items()]
    out += [s for path, s in found.items() if s is not None and path not in before]
    return [s for s in out if s is not None]


def _before_task(before: dict[str, _Before], path: str, op: FileOp, call: ToolCall, result: ToolResult | None,
                 index: int, verbatim_reads: bool) -> None:
    b = before.setdefault(path, _Before(FileWritten(path, None)))
    b.entry = index
    b.seen_by = b.seen_by or call.name
    if op.kind == "list":
        b.listed = True
        return
    if op.kind == "read":
        content = read_content(op, result, verbatim_reads or is_shell(call))
        if content is not None:
            b.state.content, b.state.note, b.state.fragments = content, "", []  # the file as it was, stated
        return
    if b.state.content is None and not b.tools and result is not None and result.original_file is not None:
        b.state.content = result.original_file
    b.tools.append(call.name)
    replay(b.state, op, call)


def _as_left(t: Transcript, path: str, b: _Before) -> SeedSuggestion | None:
    """A file the turns before the task touched and the task did not (or touched after stating it)."""
    turn = turn_of(t, b.entry)
    by = f"turn {turn}" if turn else "the log before the task"
    if not b.tools:
        if b.state.content is not None:
            return SeedSuggestion(path, b.state.content, f"read by {b.seen_by} in {by}; content from its result")
        return SeedSuggestion(path, None, f"listed by {b.seen_by}; a directory, add its files yourself" if b.listed
                              else f"read by {b.seen_by}; its whole content is not in the transcript")
    tools = ", ".join(dict.fromkeys(b.tools))
    if b.state.content is not None:
        return SeedSuggestion(path, b.state.content, f"as {by} left it ({tools}), replayed from the log")
    why = b.state.note or "its content is not in the transcript"
    return SeedSuggestion(path, None, f"changed by {by} ({tools}) before the task, but its content then cannot "
                                      f"be reconstructed: {why}; add it to seed/ yourself")


def _as_it_stood(t: Transcript, path: str, b: _Before, op: FileOp, result: ToolResult | None,
                 call: ToolCall) -> SeedSuggestion | None:
    """The first time the task meets a file the turns before it touched: its content then."""
    if b.state.content is None and op.kind == "read":
        content = read_content(op, result, t.derive_mark[1] or is_shell(call))
        if content is not None:
            return SeedSuggestion(path, content, f"read by {call.name} as the task began; content from its result")
    return _as_left(t, path, b)


def _met_by_task(found: dict[str, SeedSuggestion | None], path: str, op: FileOp, call: ToolCall,
                 result: ToolResult | None, verbatim_reads: bool) -> None:
    """A file the task met first: read (its content then), listed, or made or changed by the task."""
    have = found.get(path, ...)
    if have is not ... and (have is None or have.content is not None):
        return  # decided: made by the task, or its content known
    if op.kind in ("read", "list"):
        content = read_content(op, result, verbatim_reads or is_shell(call))
        if content is not None:
            found[path] = SeedSuggestion(path, content, f"read by {call.name}; content from its result")
        elif have is ...:
            found[path] = SeedSuggestion(path, None, f"listed by {call.name}; a directory, add its files yourself"
                                         if op.kind == "list" else
                                         f"read by {call.name}; its whole content is not in the transcript")
        return
    if result is not None and result.original_file is not None:
        found[path] = SeedSuggestion(path, result.original_file, f"changed by {call.name}; its content before "
                                                                 "from the log")
    elif op.kind in ("edit", "insert", "lines") or op.kind == "changed" and op.partial:
        found[path] = have if have is not ... else SeedSuggestion(
            path, None, f"changed in place by {call.name}, so it existed before the task, but its content then is "
                        "not in the transcript; add it to seed/ yourself")
    elif have is ...:
        found[path] = None  # the task made it
