"""Which files the agent wrote, read and listed, reconstructed from its tool calls.

Tools are recognised by name across agent frameworks: Claude Code (Write, Edit, MultiEdit, Read,
LS, Glob), the demo agent (write_file, read_file, list_dir), Anthropic's text editor tool
(str_replace_based_edit_tool: create / str_replace / insert / view) and the usual function-tool
spellings. A call whose result is an error changed nothing and is skipped. Bash commands that
write files cannot be reconstructed and are not guessed at.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
import shlex
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from scarbook.fs.paths import short_path, unholdable
from scarbook.transcripts.model import FileOp, FileRead, FileWritten, Message, ToolCall, ToolResult, Transcript
from scarbook.transcripts.shell import SHELL_TOOLS, shell_ops, whole_output, window_content

_WRITE = {"write", "write_file", "create_file", "save_file", "writefile", "create"}
_EDIT = {"edit", "edit_file", "str_replace", "replace_in_file", "apply_edit"}
_MULTI = {"multiedit", "multi_edit"}
_EDITOR = {"str_replace_based_edit_tool", "str_replace_editor", "text_editor", "text_editor_code_execution"}
_READ = {"read", "read_file", "view", "view_file", "open_file", "open", "cat", "readfile"}
_LIST = {"ls", "list_dir", "list_directory", "list_files", "listdir", "glob"}
_FILE_TOOLS = frozenset({*_WRITE, *_EDIT, *_MULTI, *_EDITOR, *_READ, *_LIST, "apply_patch", "insert"})
_RANGE_KEYS = {"offset", "limit", "start_line", "end_line", "view_range", "line_range", "lines"}
_SHELL_ISNT_A_FILE_TOOL = not _FILE_TOOLS & SHELL_TOOLS
assert _SHELL_ISNT_A_FILE_TOOL  # (a call is read as a file tool's or as a command line, never as both)


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if isinstance(d.get(k), str):
            return d[k]
    return None


@functools.lru_cache(maxsize=1024)
def _base_name(name: str) -> str:
    # mcp__filesystem__write_file, functions.write_file, fs/read_file -> the last part
    for sep in ("__", ".", "/"):
        name = name.rsplit(sep, 1)[-1]
    return name.lower()


def file_operation(call: ToolCall) -> FileOp | None:
    """What a tool call does to the file system, or None for tools that are not file tools."""
    name = _base_name(call.name)
    if name not in _FILE_TOOLS:
        return None  # most calls of a long log are shell commands and searches: no input to look through
    inp = call.input if isinstance(call.input, dict) else {}
    path = _first(inp, "file_path", "path", "filename", "file", "notebook_path") or call.target
    if name in _EDITOR:
        command = inp.get("command")  # the model wrote it: may be anything JSON holds
        name = {"create": "write", "str_replace": "edit", "view": "read", "insert": "insert"}.get(
            command, "") if isinstance(command, str) else ""
    if name in _LIST:
        return FileOp("list", path or ".")
    if path is None:
        return None
    if name == "apply_patch":  # Codex: a file the patch adds, with its content (see codex_rollout)
        return FileOp("write", path, content=inp["content"]) if isinstance(inp.get("content"), str) else None
    if name in _WRITE:
        return FileOp("write", path, content=_first(inp, "content", "contents", "file_text", "text", "data"))
    if name in _EDIT:
        old = _first(inp, "old_string", "old_str", "old_text", "search")
        new = _first(inp, "new_string", "new_str", "new_text", "replace")
        if old is None or new is None:
            return FileOp("edit", path)
        return FileOp("edit", path, edits=[(old, new, bool(inp.get("replace_all") or inp.get("replace-all")))])
    if name in _MULTI:
        edits = [
            (e.get("old_string", ""), e.get("new_string", ""), bool(e.get("replace_all")))
            for e in inp.get("edits", []) if isinstance(e, dict)
        ]
        return FileOp("edit", path, edits=edits)
    if name == "insert":
        return FileOp("insert", path, content=_first(inp, "new_str", "insert_text", "text"),
                      insert_line=int(inp.get("insert_line", 0) or 0))
    if name in _READ:
        partial = any(inp.get(k) for k in _RANGE_KEYS)
        if _base_name(call.name) in _EDITOR:
            return FileOp("read", path, partial=partial, view="gutter")
        return FileOp("read", path, partial=partial, view="window" if name == "open" else "verbatim")
    return None


def file_operations(call: ToolCall, *, swe_agent: bool = False) -> tuple[FileOp, ...]:
    """Every file operation of a call: a file tool's one, or what a shell command's text shows
    (`scarbook.transcripts.shell`: `cat FILE`, heredoc writes, `sed -i`; with `swe_agent`, its
    open/create/edit commands)."""
    if call.ops is not None and (call.ops_swe == swe_agent or not is_shell(call)):
        return call.ops  # (only a shell command reads otherwise as SWE-agent's)
    ops = _file_operations(call, swe_agent)
    call.ops, call.ops_swe = ops, swe_agent  # asked for by every pass over the files (derive, seeds, root)
    return ops


def _file_operations(call: ToolCall, swe_agent: bool) -> tuple[FileOp, ...]:
    tool = _base_name(call.name)
    if tool in _FILE_TOOLS:  # (no file tool is a shell: see _SHELL_ISNT_A_FILE_TOOL)
        op = file_operation(call)
        return (op,) if op is not None else ()
    if tool not in SHELL_TOOLS:
        return ()
    inp = call.input if isinstance(call.input, dict) else {}
    command = _first(inp, "command", "cmd")
    if isinstance(inp.get("command"), list) and all(isinstance(w, str) for w in inp["command"]):
        words = inp["command"]  # Codex: ["bash", "-lc", "cat a.py"]
        command = words[2] if len(words) == 3 and words[1] in ("-c", "-lc") else shlex.join(words)
    if command is None:
        return ()
    if len(command) > _SHORT_COMMAND:
        return tuple(shell_ops(command, call.target, swe_agent=swe_agent))
    return _short_shell_ops(command, call.target, swe_agent)


_SHORT_COMMAND = 300  # (a cached command stays alive: a long one, a heredoc with its file, is worked out anew)


@functools.lru_cache(maxsize=4096)
def _short_shell_ops(command: str, open_file: str | None, swe_agent: bool) -> tuple[FileOp, ...]:
    """A short command's file operations, worked out once: a log runs the same few again and again (`cat a.py`,
    `open a.py`, the tests). Its calls share them (a FileOp is never changed once made)."""
    return tuple(shell_ops(command, open_file, swe_agent=swe_agent))


_DRIVE = re.compile(r"^([A-Za-z]):(?=/|$)")


def normalise_path(path: str) -> str:
    """One spelling for a path from any OS: '/' separators (doubled ones collapsed, as a JSON log
    that escaped its backslashes twice leaves them), no '.' parts, an upper-case drive letter."""
    if not path:
        return path
    p = posixpath.normpath(path.replace("\\", "/"))
    m = _DRIVE.match(p)
    return m.group(1).upper() + p[1:] if m else p


def is_absolute(path: str) -> bool:
    """Absolute on POSIX or on Windows (`C:/x`, `//server/share`), wherever scarbook runs."""
    return path.startswith("/") or bool(_DRIVE.match(path))


def _key(path: str) -> str:
    # Windows paths compare without regard to case; POSIX paths exactly.
    return path.lower() if _DRIVE.match(path) or path.startswith("//") else path


@functools.lru_cache(maxsize=4096)  # a log names the same few hundred paths again and again
def relative_path(path: str, root: str | None) -> str:
    """Normalise a path and make it relative to `root` (the agent's cwd, or the transcript's root)
    when it lies inside it."""
    p = normalise_path(path)
    if root and is_absolute(p):
        r = normalise_path(root).rstrip("/") or "/"
        if _key(p) == _key(r):
            return "."
        prefix = r if r.endswith("/") else r + "/"
        if _key(p).startswith(_key(prefix)):
            return p[len(prefix):]
    return p


def common_root(paths: list[str]) -> str | None:
    """The deepest folder holding every one of `paths` (absolute, normalised), or None when they
    share none (different drives)."""
    if not paths:
        return None
    split = [p.rstrip("/").split("/") for p in paths]
    common = split[0]
    for parts in split[1:]:
        n = 0
        while n < min(len(common), len(parts)) and _key(common[n]) == _key(parts[n]):
            n += 1
        common = common[:n]
    if not common or common == [""] and not all(p.startswith("/") for p in paths):
        return None
    return "/".join(common) or "/"


def touched_root(t: Transcript) -> str | None:
    """Where relative paths start: the agent's cwd (its workspace) when the log says it, else the
    common root of the folders of the files it touched (an API transcript has no cwd at all)."""
    if t.cwd:
        return t.cwd
    folders = []
    file_tool: dict[str, bool] = {}  # by a call's tool: most calls of a long log are shell commands and searches
    for call in t.entries:
        if not isinstance(call, ToolCall):
            continue
        is_file_tool = file_tool.get(call.name)
        if is_file_tool is None:
            is_file_tool = file_tool[call.name] = _base_name(call.name) in _FILE_TOOLS
        op = file_operation(call) if is_file_tool else None
        if op is None:
            continue
        p = normalise_path(op.path)
        if is_absolute(p):
            folders.append(p if op.kind == "list" else (posixpath.dirname(p) or p))
    return common_root(folders)


def _apply_edits(content: str, edits: Sequence[tuple[str, str, bool]]) -> str | None:
    for old, new, replace_all in edits:
        if old == "" and content == "":
            content = new  # Claude Code: an Edit with empty old_string creates the file
            continue
        if old not in content:
            return None
        content = content.replace(old, new) if replace_all else content.replace(old, new, 1)
    return content


def _insert(content: str, line: int, text: str) -> str:
    lines = content.splitlines(keepends=True)
    if text and not text.endswith("\n"):
        text += "\n"
    if lines and not lines[-1].endswith("\n") and line >= len(lines):
        lines[-1] += "\n"
    return "".join(lines[:line]) + text + "".join(lines[line:])


_VIEW_HEADER = re.compile(r"\AHere's the result of running `cat -n` on [^\n]*:\n")
_VIEW_LINE = re.compile(r"^ *(\d+)(?:\t|: ?|\u2192)(.*)$")


def strip_viewer_gutter(text: str) -> str:
    """A text-editor `view` result as the file it shows: without the viewer's header ("Here's the
    result of running `cat -n` on /repo/a.md:") and its line numbers ("1: # tiny-agent",
    "     1\t# tiny-agent"). Text not numbered 1, 2, 3... on every line is returned as it is."""
    body = _VIEW_HEADER.sub("", text)
    lines = body.split("\n")
    final_newline = len(lines) > 1 and lines[-1] == ""
    if final_newline:
        lines.pop()
    out = []
    for k, line in enumerate(lines, start=1):
        m = _VIEW_LINE.match(line)
        if not m or int(m.group(1)) != k:
            return text
        out.append(m.group(2))
    if not out:
        return text
    return "\n".join(out) + ("\n" if final_newline else "")


def read_content(op: FileOp, result: ToolResult | None, verbatim_reads: bool) -> str | None:
    """The whole content a read shows, or None (a partial read, no result, a format that does not
    keep it verbatim, an output the harness cut)."""
    if op.kind != "read" or result is None or op.partial:
        return None
    if result.file_content is not None:
        return result.file_content
    if op.view == "window":
        return window_content(result.text)
    if op.view == "gutter":
        return strip_viewer_gutter(result.text) if verbatim_reads else None
    return result.text if verbatim_reads and whole_output(result.text) else None


FileEvent = tuple[int, ToolCall, ToolResult | None, FileOp, str]


def file_events(t: Transcript) -> Iterator[FileEvent]:
    """Every file operation of the timeline that took effect, in order: (its call's index, the call, its
    result, the operation, the path relative to `t.root`). A call whose tool refused (an error result)
    changed nothing and read nothing. Which calls touch a file, and their results, are worked out once for a
    timeline (the files and the seeds both walk them): kept as their indices and results, 16 bytes a call."""
    key = (id(t.entries), len(t.entries), t.format)
    cached = t.memo.get("file_calls")
    if cached is None or cached[0] != key:
        cached = t.memo["file_calls"] = (key, *_file_calls(t))
    _, indices, results = cached
    entries, root, swe_agent = t.entries, t.root, t.format == "swe-agent"
    for index, result in zip(indices, results, strict=True):
        call = entries[index]
        assert isinstance(call, ToolCall)
        for op in file_operations(call, swe_agent=swe_agent):
            yield index, call, result, op, relative_path(op.path, root)


def _file_calls(t: Transcript) -> tuple[array[int], list[ToolResult | None]]:
    """The calls that touch a file and did not fail, in order (their indices) and their results: one walk of
    the timeline (a call's result is the last with its id)."""
    swe_agent = t.format == "swe-agent"
    results: dict[str, ToolResult] = {}
    touching = array("q")
    for index, e in enumerate(t.entries):
        if isinstance(e, ToolResult):
            results[e.call_id] = e
        elif isinstance(e, ToolCall) and file_operations(e, swe_agent=swe_agent):
            touching.append(index)
    kept, theirs = array("q"), []
    for index in touching:
        call = t.entries[index]
        assert isinstance(call, ToolCall)
        result = results.get(call.id)
        if result is None or not result.is_error:
            kept.append(index)
            theirs.append(result)
    return kept, theirs


def derive_files(t: Transcript, *, verbatim_reads: bool = True) -> None:
    """Fill `t.files_written` and `t.files_read` from the timeline (in place). Paths are made
    relative to `t.root` (computed by `touched_root` unless the user named one). Files written are
    in order of their last write, so the last one is the natural default artifact."""
    if t.root is None:
        t.root = touched_root(t)
    written: dict[str, FileWritten] = {}
    known: dict[str, str] = {}  # path -> content we know it had (read whole), before any write
    reads: list[FileRead] = []
    listed: set[str] = set()  # folders: never a written file
    for index, call, result, op, path in file_events(t):
        if op.kind in ("read", "list"):
            content = read_content(op, result, verbatim_reads or is_shell(call))
            if content is not None and path not in written:
                known.setdefault(path, content)
            if op.kind == "list":
                listed.add(path)
            reads.append(FileRead(path, op.kind, content, call.name, path in written))
            continue
        if path in (".", "/") or path in listed or op.path.endswith(("/", "\\")):
            t.warnings.append(f"{call.name} {op.path} names a folder, not a file; it is not a candidate")
            continue
        unfit = unholdable(path)
        if unfit:  # a mangled log: no workspace can hold the file, no check can look for it
            t.warnings.append(f"{call.name} {short_path(op.path)!r} names no file: it {unfit}; it is not a candidate")
            continue
        if result is None and op.kind != "changed":
            t.warnings.append(f"tool call {call.id} ({call.name} {path}) has no result; assumed it succeeded")
        fw = written.pop(path, None)
        if fw is None:
            fw = FileWritten(path, known.get(path))
            if fw.content is None and result is not None and result.original_file is not None:
                fw.content = result.original_file
        written[path] = fw  # (re)inserted last: the order is the order of last writes
        fw.tools.append(call.name)
        fw.entry = index
        replay(fw, op, call)
    t.files_written = list(written.values())
    t.files_read = reads
    _warn_outside(t, reads)


def is_shell(call: ToolCall) -> bool:
    """A shell command's output is what the command printed, verbatim in every format."""
    return _base_name(call.name) in SHELL_TOOLS


def _warn_outside(t: Transcript, reads: list[FileRead]) -> None:
    """A file read outside the root cannot be a seed: say so, once a path, with the --root that helps."""
    outside = [(path, kind) for path, kind in dict.fromkeys((r.path, r.kind) for r in reads if not r.written_before)
               if is_absolute(path)]  # (each path asked about once, not once a read)
    for path, kind in outside:
        where = f"outside the root {t.root}" if t.root else "with no root to make it relative to"
        folder = path if kind == "list" else posixpath.dirname(path) or path
        t.warnings.append(f"{'read' if kind == 'read' else 'listed'} {path} {where}: not a seed suggestion "
                          f"(--root {folder} would make it one)")


def replay(fw: FileWritten, op: FileOp, call: ToolCall) -> None:
    """One write, edit or insert applied to what is known of the file (its content, or the
    fragments written into a file whose earlier content the transcript does not hold)."""
    if fw.content is None and op.kind == "edit" and op.edits and op.edits[0][0] == "":
        fw.content, fw.note, fw.fragments = "", "", []  # an edit of nothing into text creates the file
    if op.kind == "write":
        fw.content, fw.note = op.content, "" if op.content is not None else "the write had no content"
        fw.fragments = []
    elif op.kind == "changed":
        fw.content, fw.fragments = None, []
        fw.note = f"changed by a shell command ({call.name}) whose effect the log does not show"
    elif fw.content is None:
        fw.fragments += [new for _, new, _ in op.edits] if op.kind == "edit" else [op.content or ""]
        if not fw.note:
            fw.note = f"{call.name} changed a file whose earlier content is not in the transcript"
    elif op.kind == "insert":
        fw.content = _insert(fw.content, op.insert_line, op.content or "")
    elif op.kind == "lines":
        fw.content = _replace_lines(fw.content, op.insert_line, op.end_line, op.content or "")
    else:
        applied = _apply_edits(fw.content, op.edits) if op.edits else None
        if applied is None:
            fw.note = f"could not replay {call.name} (call {call.id}): its old text is not in the file"
            fw.fragments = [new for _, new, _ in op.edits]
        fw.content = applied


def _replace_lines(content: str, first: int, last: int, text: str) -> str:
    """Lines first..last (from 1, inclusive) replaced by `text` (SWE-agent's `edit N:M`)."""
    lines = content.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:max(first - 1, 0)]) + text + "".join(lines[last:])


# Tools an agent framework gives the model to hand in its result (pydantic-ai's output tool, smolagents'):
# the call's input is the answer.
_OUTPUT_TOOLS = re.compile(r"\A(?:final_result(?:_\w+)?|final_answer)\Z")


def final_answer(entries: list[Any]) -> tuple[str | None, bool]:
    """(the agent's last word in the main conversation, whether it was only a preamble): the input of an
    output tool it ended with, else its last text — a preamble ("Let me check…") when it called a tool
    after that text, the log ending before it answered."""
    called = False
    for e in reversed(entries):
        if getattr(e, "sidechain", False):
            continue
        if isinstance(e, ToolCall):
            if not called and _OUTPUT_TOOLS.match(_base_name(e.name)):
                values = list(e.input.values())
                if len(values) == 1 and isinstance(values[0], str):
                    return values[0], False
                return json.dumps(e.input, ensure_ascii=False, indent=2), False
            called = True
        elif isinstance(e, Message) and e.role == "assistant" and e.kind == "text" and e.text.strip():
            return e.text, called
    return None, False


def finish_transcript(t: Transcript, *, verbatim_reads: bool = True) -> Transcript:
    """Derive files and the final answer once a parser has filled the timeline.

    `verbatim_reads`: a read tool's result text is the file content itself (true for every
    format but Claude Code, whose Read results carry line numbers).
    """
    # The log's model and cwd are the values its writer put there — for a run, the agent. Each parser takes
    # them as they come; only a text is a model or a folder. A number or an object kept here crashed the
    # budget and path checks that read them (an error, out of the pass rate's denominator).
    t.model = t.model if isinstance(t.model, str) and t.model else None
    t.cwd = t.cwd if isinstance(t.cwd, str) and t.cwd else None
    if t.final_answer is None:
        t.final_answer, t.preamble = final_answer(t.entries)
    t.derive_mark = (len(t.warnings), verbatim_reads)
    derive_files(t, verbatim_reads=verbatim_reads)
    return t


def set_root(t: Transcript, root: str) -> None:
    """Re-derive the files with paths relative to `root` (the user's --root)."""


    n, verbatim = t.derive_mark
    del t.warnings[n:]
    t.root = root
    derive_files(t, verbatim_reads=verbatim)
