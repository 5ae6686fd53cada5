"""Saving a YAML file a person wrote without rewriting it: the parts that did not change keep their bytes.

People keep comments in case.yaml, write short lists in flow style (`tags: [files, json]`) and leave
dates bare. A save that re-dumps the whole document deletes the comments, turns flow lists into block
lists and quotes the dates (issue 26.11). Here the old text is read in ruamel.yaml's round-trip mode (a
well-kept library that keeps comments, styles and key order), only the values that differ are set, and
the result is checked against the data to write: if the edit cannot be expressed in place, the caller's
full dump is used instead — never a file that loads as something else.

Reading untrusted files stays with the bounded PyYAML loader in yamlio.py; this module only edits a file
that has already been loaded through it.
"""

from __future__ import annotations

import datetime as _dt
import io
from collections.abc import Callable
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.util import load_yaml_guess_indent


def _same(old: Any, new: Any) -> bool:
    """Equal as the case loader sees them: a bare date equals its ISO text, a list its CommentedSeq."""
    if isinstance(old, (_dt.date, _dt.datetime)) or isinstance(new, (_dt.date, _dt.datetime)):
        return str(old) == str(new)
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    return type(old) is type(new) and old == new if isinstance(old, bool) or isinstance(new, bool) else old == new


def _one_line_map(old: Any, new: Any) -> bool:
    """A list entry written on one line that becomes a mapping of plain values (a rubric item given its id):
    it stays on its line, as `{id: r3f2a9c, text: ...}`, with the comment after it."""
    plain = (str, int, float, bool, type(None))
    return isinstance(old, plain) and isinstance(new, dict) and all(isinstance(v, plain) for v in new.values())


def _flow(value: dict[str, Any]) -> CommentedMap:
    out = CommentedMap(value)
    out.fa.set_flow_style()
    return out


def _merge(old: Any, new: Any) -> Any:
    """`new`, reusing `old`'s nodes (and so their comments and styles) wherever they are the same."""
    if _same(old, new):
        return old
    if isinstance(old, CommentedMap) and isinstance(new, dict):
        for key in [k for k in old if k not in new]:
            del old[key]
        for i, (key, value) in enumerate(new.items()):
            if key in old:
                old[key] = _merge(old[key], value)
            else:
                old.insert(i, key, value)
        return old
    if isinstance(old, CommentedSeq) and isinstance(new, list):
        if len(old) == len(new):
            for i, value in enumerate(new):
                old[i] = _merge(old[i], value) if not _one_line_map(old[i], value) else _flow(value)
            return old
        seq = CommentedSeq(new)
        if old.fa.flow_style():
            seq.fa.set_flow_style()
        return seq
    if isinstance(old, _dt.date) and isinstance(new, str):  # a bare date edited stays a bare date
        try:
            return type(old).fromisoformat(new)
        except ValueError:
            return new
    return new


def _spans(node: CommentedMap | CommentedSeq, end: int) -> dict[Any, tuple[int, int]]:
    """Each key's (or item's) lines in the text `node` was read from: from its own line to the next one's."""
    keys = list(node) if isinstance(node, CommentedMap) else list(range(len(node)))
    starts = [node.lc.key(k)[0] if isinstance(node, CommentedMap) else node.lc.item(k)[0] for k in keys]
    return {k: (start, nxt) for k, start, nxt in zip(keys, starts, [*starts[1:], end], strict=True)}


def _unchanged_spans(old: Any, new: Any, old_end: int, new_end: int,
                     found: list[tuple[int, int, int, int]]) -> None:
    """The (new start, new end, old start, old end) lines of every value the same in `old` and `new`, as
    deep as block mappings and block lists of the same length go."""
    same_kind = (isinstance(old, CommentedMap) and isinstance(new, CommentedMap)) or (
        isinstance(old, CommentedSeq) and isinstance(new, CommentedSeq) and len(old) == len(new))
    if not same_kind or old.fa.flow_style() or new.fa.flow_style():
        return
    old_spans, new_spans = _spans(old, old_end), _spans(new, new_end)
    for key, (new_start, new_stop) in new_spans.items():
        if key not in old_spans:
            continue
        old_start, old_stop = old_spans[key]
        if _same(old[key], new[key]):
            found.append((new_start, new_stop, old_start, old_stop))
        else:
            _unchanged_spans(old[key], new[key], old_stop, new_stop, found)


def _keep_old_lines(yaml: YAML, old_text: str, old_doc: CommentedMap, new_text: str) -> str:
    """`new_text` with the lines of every value that did not change put back as `old_text` has them: the
    dump re-folds long values at its width and re-indents folded ones (issue 37.10: an untouched
    what_went_wrong of 101 characters gained a line break)."""
    new_doc = yaml.load(new_text)
    old_lines, new_lines = old_text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    found: list[tuple[int, int, int, int]] = []
    _unchanged_spans(old_doc, new_doc, len(old_lines), len(new_lines), found)
    for new_start, new_stop, old_start, old_stop in sorted(found, reverse=True):
        new_lines[new_start:new_stop] = old_lines[old_start:old_stop]
    return "".join(new_lines)


def edit_yaml_text(old_text: str, new_data: dict[str, Any], load: Callable[[str], Any]) -> str | None:
    """`old_text` with `new_data`'s values set in place, or None when that cannot be done faithfully.
    `load` is the caller's own loader: the result must load to exactly `new_data`."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 100
    try:
        _, indent, offset = load_yaml_guess_indent(old_text)  # keep the file's own indentation
        indent, offset = indent or 2, offset or 0
        yaml.indent(mapping=max(2, indent - offset), sequence=indent, offset=offset)
        doc = yaml.load(old_text)
        as_written = yaml.load(old_text)  # its nodes keep the lines they were read from; _merge edits `doc`
    except Exception:  # noqa: BLE001 — any parse trouble: the caller writes its full dump instead
        return None
    if not isinstance(doc, CommentedMap):
        return None
    _merge(doc, new_data)
    out = io.StringIO()
    try:
        yaml.dump(doc, out)
        text = out.getvalue()
    except Exception:  # noqa: BLE001 — see above
        return None
    try:
        candidates = [_keep_old_lines(yaml, old_text, as_written, text), text]
    except Exception:  # noqa: BLE001 — lines that cannot be matched up: the round-trip dump alone
        candidates = [text]
    for candidate in candidates:
        try:
            if _same(load(candidate), new_data):
                return candidate
        except Exception:  # noqa: BLE001 — see above
            continue
    return None
