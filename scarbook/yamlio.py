"""YAML in with line numbers (so errors can point at a line), files out atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from scarbook.errors import CaseError

# libyaml (C) composes about ten times faster; when it is missing, or when a file does not parse,
# the pure-Python loader runs instead, so every error message is the same on every machine.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


class LineDict(dict):
    """A mapping that remembers the line (1-based) of itself and of each key."""

    line: int = 0
    lines: dict[str, int]


class LineList(list):
    line: int = 0
    lines: list[int]


def _convert(node: yaml.Node, constructor: yaml.constructor.SafeConstructor) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = LineDict()
        out.line = node.start_mark.line + 1
        out.lines = {}
        constructor.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = _convert(key_node, constructor)
            if not isinstance(key, (str, int, float, bool)) or key is None:
                key = str(key)
            out[key] = _convert(value_node, constructor)
            out.lines[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = LineList(_convert(item, constructor) for item in node.value)
        seq.line = node.start_mark.line + 1
        seq.lines = [item.start_mark.line + 1 for item in node.value]
        return seq
    return constructor.construct_object(node, deep=True)


def load_yaml_text(text: str, path: Path | str) -> Any:
    """Parse YAML, keeping line numbers. A syntax error becomes a CaseError with its line."""
    if _FAST_LOADER is not None:
        try:
            node = yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass  # let the pure-Python loader below word the error
        else:
            return None if node is None else _construct(node, path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "malformed YAML"
        if exc.problem and exc.context and exc.context_mark and exc.context_mark.line + 1 != line:
            # An unclosed quote or bracket is reported where the file ends; say where it opened.
            problem += f" ({exc.context} that starts at line {exc.context_mark.line + 1})"
        raise CaseError(path, f"malformed YAML: {problem}", line=line,
                        fix="fix the syntax (check indentation, quotes and colons)") from None
    except yaml.YAMLError as exc:
        raise CaseError(path, f"malformed YAML: {exc}", fix="fix the syntax") from None
    return None if node is None else _construct(node, path)


def _construct(node: yaml.Node, path: Path | str) -> Any:
    constructor = yaml.constructor.SafeConstructor()
    try:
        return _convert(node, constructor)
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise CaseError(path, f"malformed YAML: {exc.problem}", line=line, fix="fix the value") from None


def load_yaml_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CaseError(path, "file is not UTF-8 text", fix="save it as UTF-8") from None
    return load_yaml_text(text, path)


def line_of(data: Any, key: str | int | None = None) -> int | None:
    """The line of `key` inside `data` (or of `data` itself), when known."""
    if key is not None:
        lines = getattr(data, "lines", None)
        if isinstance(lines, dict) and key in lines:
            return lines[key]
        if isinstance(lines, list) and isinstance(key, int) and 0 <= key < len(lines):
            return lines[key]
    return getattr(data, "line", None) or None


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Write `text` to `path` so a reader sees the old file or the new one, never half of one.

    `durable=False` skips the fsync: still safe against a crashed process (the rename happens only
    after the whole file is written), not against power loss; history uses it to keep runs cheap."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
