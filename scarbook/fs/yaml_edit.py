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
                old[i] = _merge(old[i], value)
            return old
        seq = CommentedSeq(new)
        if old.fa.flow_style():
            seq.fa.set_flow_style()
        return seq
    return new


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
    except Exception:  # noqa: BLE001 — any parse trouble: the caller writes its full dump instead
        return None
    if not isinstance(doc, CommentedMap):
        return None
    _merge(doc, new_data)
    out = io.StringIO()
    try:
        yaml.dump(doc, out)
        text = out.getvalue()
        return text if _same(load(text), new_data) else None
    except Exception:  # noqa: BLE001 — see above
        return None
