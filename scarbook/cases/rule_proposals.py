"""Rule checks proposed from the scar's artifacts alone, without a judge (issue 35.1: no key, or --offline).

- a line of the failed artifact that the good one does not hold -> `not_contains` (the failed one fails it);
- a line of the good artifact that the failed one does not hold -> `contains` (the failed one fails it);
- a failed artifact that does not parse as JSON where JSON is wanted (the good one parses, or the file is
  .json) -> `json_valid`;
- files the incident changed besides a file artifact (its transcript's writes) -> `only_changed` on the
  artifact's path. Not for an answer or a tool call's input: the files a run writes say nothing of those, and
  `only_changed: []` would fail every right run of a task that edits files too.

For an artifact that is the agent's final answer, `contains` is `output_contains` and `not_contains` is an
`output_regex` that matches only where the text is absent; for a tool call's input, the file rules read it
(`artifact: {tool, field}` in place of `path`). Each proposal says why it was made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

OUTPUT = "output"
MAX_PER_RULE = 2  # lines proposed per contains / not_contains: the most telling first
MIN_LINE = 4  # shorter lines ("}", "ok") say little about the incident
MAX_TEXT = 200


@dataclass(frozen=True)
class RuleProposal:
    check: dict[str, Any]
    why: str


def _lines(text: str) -> list[str]:
    seen, out = set(), []
    for line in text.splitlines():
        line = line.strip()
        if MIN_LINE <= len(line) <= MAX_TEXT and line not in seen:
            seen.add(line)
            out.append(line)
    return out


def _only_in(text: str, other: str) -> list[str]:
    """Lines of `text` that `other` does not hold anywhere, longest (most telling) first. The longest are looked
    for first and the search stops at MAX_PER_RULE, a line `other` holds whole found in a set: a search of every
    line of a long log through another took 44 s of CPU for two logs of 50,000 lines."""
    whole = {line.strip() for line in other.splitlines()}
    found: list[str] = []
    for line in sorted(_lines(text), key=len, reverse=True):
        if line not in whole and line not in other:
            found.append(line)
            if len(found) == MAX_PER_RULE:
                break
    return found


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


Target = str | dict[str, str]  # "output", a workspace path, or a tool call's input {tool, field}


def _at(target: Target) -> dict[str, Any]:
    return {"path": target} if isinstance(target, str) else {"artifact": target}


def _absent(target: Target, text: str) -> dict[str, Any]:
    if target == OUTPUT:  # matches at the start only when the text is nowhere in the answer
        return {"type": "output_regex", "pattern": r"\A(?![\s\S]*" + re.escape(text) + ")"}
    return {"type": "not_contains", **_at(target), "text": text}


def _present(target: Target, text: str) -> dict[str, Any]:
    if target == OUTPUT:
        return {"type": "output_contains", "text": text}
    return {"type": "contains", **_at(target), "text": text}


def propose_rule_checks(failed: str, good: str | None, target: Target,
                        changed: Sequence[str] = ()) -> list[RuleProposal]:
    """Rule checks that fail `failed` and pass `good`, for an artifact that belongs at `target` (a workspace
    path, "output", or a tool call's input); `changed`: the files the incident changed (its transcript's writes)."""
    out: list[RuleProposal] = []
    if good is not None:
        for line in _only_in(failed, good):
            out.append(RuleProposal(_absent(target, line), f"{line!r} is in the failed artifact only"))
        for line in _only_in(good, failed):
            out.append(RuleProposal(_present(target, line), f"{line!r} is in the good artifact only"))
    wants_json = (isinstance(target, str) and target.endswith(".json")
                  or (good is not None and _parses(good) and good.strip()[:1] in "[{"))
    if target != OUTPUT and wants_json and not _parses(failed):
        out.append(RuleProposal({"type": "json_valid", **_at(target)}, "the failed artifact does not parse as JSON"
                                + (", the good one does" if good is not None else "")))
    # (the answer, or what the agent sent through a tool, is not its work's only result: the files it changed may
    # be right)
    if not isinstance(target, str) or target == OUTPUT:
        return out
    others = sorted({p for p in changed if p != target})
    if others:
        out.append(RuleProposal({"type": "only_changed", "paths": [target]},
                                f"the incident also changed {', '.join(others[:5])}{' …' if len(others) > 5 else ''}"
                                f" (its transcript); a right result changes {target}"))
    return out
