"""YAML in with line numbers (so errors can point at a line), files out atomically.

A case file is written by people and sometimes by tools fed untrusted transcripts, so loading one
is bounded: at most MAX_YAML_BYTES of text, MAX_YAML_NODES values once aliases are expanded (a
393-byte "billion laughs" file otherwise expands to hundreds of millions), MAX_YAML_DEPTH levels of
nesting, and no key given twice in one mapping (YAML would silently keep the last one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from scarbook.errors import CaseError
from scarbook.fs.files import FileTooLargeError, atomic_write_text, describe_os_error, read_regular_bytes

__all__ = ["LineDict", "LineList", "load_yaml_text", "load_yaml_file", "line_of", "atomic_write_text", "dump_yaml"]

MAX_YAML_BYTES = 1 << 20
MAX_YAML_NODES = 100_000
MAX_YAML_DEPTH = 64

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


class _Budget:
    """Counts the values _convert builds, so an alias bomb stops at a fixed cost."""

    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.nodes = 0
        self.checked: set[int] = set()

    def spend(self, node: yaml.Node, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise CaseError(self.path, f"more than {MAX_YAML_NODES:,} values once its aliases (*name) are "
                            "expanded", line=node.start_mark.line + 1,
                            fix="write the values out instead of nesting aliases of aliases")
        if depth > MAX_YAML_DEPTH:
            raise CaseError(self.path, f"nested more than {MAX_YAML_DEPTH} levels deep",
                            line=node.start_mark.line + 1, fix="flatten the structure")


def _refuse_duplicate_keys(node: yaml.MappingNode, path: Path | str, parent: Any = None) -> None:
    """A key given twice is an error; under a named key (agents:) the message names it and what it holds."""
    first: dict[str, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        line = key_node.start_mark.line + 1
        if key_node.value in first:
            fix = "keep one of them: YAML would silently use the last"
            if isinstance(parent, str):
                held = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
                fix = f"give each its own name, or keep one of them ({parent} holds: {', '.join(dict.fromkeys(held))})"
            under = f" under {parent}" if isinstance(parent, str) else ""
            raise CaseError(path, f"duplicate key {key_node.value!r}{under} (first given at line "
                            f"{first[key_node.value]})", line=line, fix=fix)
        first[key_node.value] = line


def _convert(node: yaml.Node, constructor: yaml.constructor.SafeConstructor, budget: _Budget,
             depth: int = 0, parent: Any = None) -> Any:
    budget.spend(node, depth)
    if isinstance(node, yaml.MappingNode):
        out = LineDict()
        out.line = node.start_mark.line + 1
        out.lines = {}
        if id(node) not in budget.checked:  # (an alias visits its mapping again, already merged)
            budget.checked.add(id(node))
            _refuse_duplicate_keys(node, budget.path, parent)
        constructor.flatten_mapping(node)  # `<<: *base` merges come first; the mapping's own keys win
        for key_node, value_node in node.value:
            key = _convert(key_node, constructor, budget, depth + 1)
            if key is None and isinstance(key_node, yaml.ScalarNode):
                key = key_node.value  # `null:`, `~:` as written: the name 'None' is nobody's
            elif not isinstance(key, (str, int, float, bool)) or key is None:
                key = str(key)
            out[key] = _convert(value_node, constructor, budget, depth + 1, key)
            out.lines[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = LineList(_convert(item, constructor, budget, depth + 1) for item in node.value)
        seq.line = node.start_mark.line + 1
        seq.lines = [item.start_mark.line + 1 for item in node.value]
        return seq
    return constructor.construct_object(node, deep=True)


def load_yaml_text(text: str, path: Path | str) -> Any:
    """Parse YAML, keeping line numbers. A syntax error becomes a CaseError with its line."""
    if _FAST_LOADER is not None:
        try:
            node = yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.MarkedYAMLError as exc:
            if "maximum nesting depth" in str(exc.problem):  # the pure-Python loader would recurse to a crash
                raise CaseError(path, f"nested more than {MAX_YAML_DEPTH} levels deep",
                                line=exc.problem_mark.line + 1 if exc.problem_mark else None,
                                fix="flatten the structure") from None
            # else let the pure-Python loader below word the error
        except (yaml.YAMLError, RecursionError):
            pass  # let the pure-Python loader below word the error
        else:
            return None if node is None else _construct(node, path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise CaseError(path, "malformed YAML: nested too deeply to read", fix="flatten the structure") from None
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
        return _convert(node, constructor, _Budget(path))
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise CaseError(path, f"malformed YAML: {exc.problem}", line=line, fix="fix the value") from None


def load_yaml_file(path: Path) -> Any:
    """Read and parse a YAML file scarbook's user wrote; every failure is a CaseError naming it."""
    try:
        data = read_regular_bytes(path, limit=MAX_YAML_BYTES)
    except FileTooLargeError as exc:
        raise CaseError(path, f"file is {exc.size:,} bytes, more than the {MAX_YAML_BYTES:,} scarbook reads",
                        fix="keep big files in seed/ or scar/ and name them from the case") from None
    except OSError as exc:
        raise CaseError(path, f"cannot read the file: {describe_os_error(exc)}",
                        fix="make it a readable file") from None
    try:
        text = data.decode("utf-8")
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


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
