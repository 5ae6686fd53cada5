"""A rubric item's stable id (issue 35): what its figures across history are kept under.

An item written without an id has the id of its words: `r` and 6 hex digits of the sha256 of its text
(whitespace collapsed), so every judgement of the same words carries the same id before and after the id
is written into case.yaml (`{id: r3f2a9c, text: ...}`, when the item is first judged). From then on the id
stays with the item through a reorder, and through a rewording that keeps the id (the user marks it as the
same item); a reworded item without its id is a new item with fresh figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

ITEM_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
ITEM_ID_RULE = "lowercase letters, digits and '-', at most 32, starting with a letter or digit"


def words_of(text: str) -> str:
    """An item's text as its id reads it: whitespace collapsed."""
    return " ".join(str(text).split())


def implicit_item_id(text: str) -> str:
    """The id of an item written without one: `r` + 6 hex digits of its words' sha256."""
    import hashlib  # (OpenSSL's library, ~2-10 ms: loaded when something is hashed, not to read a project)

    return "r" + hashlib.sha256(words_of(text).encode("utf-8")).hexdigest()[:6]


def resolve_item_ids(texts: Sequence[str], written: Sequence[str] = (), taken: Iterable[str] = ()) -> list[str]:
    """Each item's id: the one written beside it, else its implicit id — made unique against the written
    ids, `taken` (the case's other checks) and the items before it (`-2`, `-3`, ... for a repeated text)."""
    given = [written[i] if i < len(written) and written[i] else "" for i in range(len(texts))]
    used = set(taken) | {g for g in given if g}
    out = []
    for text, own in zip(texts, given, strict=True):
        if own:
            out.append(own)
            continue
        base = implicit_item_id(text)
        ident, n = base, 1
        while ident in used:
            n += 1
            ident = f"{base}-{n}"
        used.add(ident)
        out.append(ident)
    return out
