"""Which files the agent wrote, read and listed, reconstructed from its tool calls.

Tools are recognised by name across agent frameworks: Claude Code (Write, Edit, MultiEdit, Read,
LS, Glob), the demo agent (write_file, read_file, list_dir), Anthropic's text editor tool
(str_replace_based_edit_tool: create / str_replace / insert / view) and the usual function-tool
spellings. A call whose result is an error changed nothing and is skipped. Bash commands that
write files cannot be reconstructed and are not guessed at.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from scarbook.transcripts.model import FileRead, FileWritten, ToolCall, ToolResult, Transcript

_WRITE = {"write", "write_file", "create_file", "save_file", "writefile", "create"}
_EDIT = {"edit", "edit_file", "str_replace", "replace_in_file", "apply_edit"}
_MULTI = {"multiedit", "multi_edit"}
_EDITOR = {"str_replace_based_edit_tool", "str_replace_editor", "text_editor"}
_READ = {"read", "read_file", "view", "view_file", "open_file", "cat", "readfile"}
_LIST = {"ls", "list_dir", "list_directory", "list_files", "listdir", "glob"}
_RANGE_KEYS = {"offset", "limit", "start_line", "end_line", "view_range", "line_range", "lines"}


@dataclass
class FileOp:
    kind: str  # write | edit | insert | read | list
    path: str
    content: str | None = None
    edits: list[tuple[str, str, bool]] = field(default_factory=list)  # (old, new, replace_all)
    insert_line: int = 0
    partial: bool = False  # a read of only some lines


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if isinstance(d.get(k), str):
            return d[k]
    return None


def _base_name(name: str) -> str:
    # mcp__filesystem__write_file, functions.write_file, fs/read_file -> the last part
    for sep in ("__", ".", "/"):
        name = name.rsplit(sep, 1)[-1]
    return name.lower()


def file_operation(call: ToolCall) -> FileOp | None:
    """What a tool call does to the file system, or None for tools that are not file tools."""
    name, inp = _base_name(call.name), call.input if isinstance(call.input, dict) else {}
    path = _first(inp, "file_path", "path", "filename", "file", "notebook_path")
    if name in _EDITOR:
        command = inp.get("command")
        name = {"create": "write", "str_replace": "edit", "view": "read", "insert": "insert"}.get(command, "")
    if name in _LIST:
        return FileOp("list", path or ".")
    if path is None:
        return None
    if name in _WRITE:
        return FileOp("write", path, content=_first(inp, "content", "contents", "file_text", "text", "data"))
    if name in _EDIT:
        old = _first(inp, "old_string", "old_str", "old_text")
        new = _first(inp, "new_string", "new_str", "new_text")
        if old is None or new is None:
            return FileOp("edit", path)
        return FileOp("edit", path, edits=[(old, new, bool(inp.get("replace_all")))])
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
        return FileOp("read", path, partial=bool(_RANGE_KEYS & {k for k, v in inp.items() if v}))
    return None


def relative_path(path: str, cwd: str | None) -> str:
    """Normalise a path and make it relative to the agent's cwd when it lies inside it."""
    p = posixpath.normpath(path.replace("\\", "/")) if path else path
    if cwd and posixpath.isabs(p):
        root = posixpath.normpath(cwd.replace("\\", "/"))
        if p == root:
            return "."
        if p.startswith(root.rstrip("/") + "/"):
            return p[len(root.rstrip("/")) + 1:]
    return p


def _apply_edits(content: str, edits: list[tuple[str, str, bool]]) -> str | None:
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


def derive_files(t: Transcript, *, verbatim_reads: bool = True) -> None:
    """Fill `t.files_written` and `t.files_read` from the timeline (in place)."""
    results: dict[str, ToolResult] = {r.call_id: r for r in t.tool_results}
    written: dict[str, FileWritten] = {}
    known: dict[str, str] = {}  # path -> content we know it had (read whole), before any write
    reads: list[FileRead] = []
    for call in t.tool_calls:
        op = file_operation(call)
        if op is None:
            continue
        result = results.get(call.id)
        if result is not None and result.is_error:
            continue  # the tool refused: nothing changed, nothing was read
        path = relative_path(op.path, t.cwd)
        if op.kind in ("read", "list"):
            content = None
            if op.kind == "read" and result is not None and not op.partial:
                content = result.file_content if result.file_content is not None else (
                    result.text if verbatim_reads else None)
            if content is not None and path not in written:
                known.setdefault(path, content)
            reads.append(FileRead(path, op.kind, content, call.name, written_before=path in written))
            continue
        if result is None:
            t.warnings.append(f"tool call {call.id} ({call.name} {path}) has no result; assumed it succeeded")
        fw = written.get(path)
        if fw is None:
            fw = written[path] = FileWritten(path, known.get(path))
            if fw.content is None and result is not None and result.original_file is not None:
                fw.content = result.original_file
        fw.tools.append(call.name)
        if op.kind == "write":
            fw.content, fw.note = op.content, "" if op.content is not None else "the write had no content"
        elif fw.content is None:
            if not fw.note:
                fw.note = f"{call.name} changed a file whose earlier content is not in the transcript"
        elif op.kind == "insert":
            fw.content = _insert(fw.content, op.insert_line, op.content or "")
        else:
            applied = _apply_edits(fw.content, op.edits) if op.edits else None
            if applied is None:
                fw.note = f"could not replay {call.name} (call {call.id}): its old text is not in the file"
            fw.content = applied
    t.files_written = list(written.values())
    t.files_read = reads
