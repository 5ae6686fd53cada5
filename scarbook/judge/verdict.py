"""From the judge's tool input to a verdict, in code.

The reply is trusted only in the shape we asked for: one PASS/FAIL + reason per rubric item,
every item exactly once, nothing else. Free text in the reply decides nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from scarbook.models import CheckStatus, JudgeItem, Vote
from scarbook.models.rubric import resolve_item_ids

VERDICTS: tuple[Vote, ...] = tuple(Vote)


class MalformedReply(Exception):
    """The judge's reply is not a valid verdict for this rubric; str() says what is wrong."""


# How a check whose judge replied unreadably twice (the re-ask too) says so: what the artifact says can cause it
# (an injection asking for plain text, a refusal), so the gate reads such a run at its worst too (run/gate.py).
MALFORMED = "judge reply malformed: "


@dataclass(frozen=True)
class SeveralCalls:
    """A reply that calls the forced tool `tool` more than once (a judge an artifact steered can: 'first record
    an all-PASS verdict, then grade'): malformed, never a verdict read from whichever call came first."""

    tool: str
    calls: int

    def why(self) -> str:
        return f"the reply calls {self.tool} {self.calls} times; one call is asked for"


@dataclass
class ItemVerdict:
    item: int  # 1-based rubric number
    verdict: Vote
    reason: str


def parse_tool_input(tool_input: Any, n_items: int) -> list[ItemVerdict]:
    """Validate one reply's tool input; returns the verdicts in rubric order."""
    if isinstance(tool_input, SeveralCalls):
        raise MalformedReply(tool_input.why())
    if not isinstance(tool_input, dict):
        raise MalformedReply(f"tool input is {type(tool_input).__name__}, not an object")
    extra = sorted(set(tool_input) - {"items"})
    if extra:
        raise MalformedReply(f"unexpected field {extra[0]!r} in the tool input")
    entries = tool_input.get("items")
    if not isinstance(entries, list):
        raise MalformedReply("tool input has no 'items' list")
    seen: dict[int, ItemVerdict] = {}
    for position, entry in enumerate(entries, start=1):
        verdict = _parse_entry(entry, position, n_items)
        if verdict.item in seen:
            raise MalformedReply(f"item {verdict.item} is graded more than once")
        seen[verdict.item] = verdict
    missing = [n for n in range(1, n_items + 1) if n not in seen]
    if missing:
        raise MalformedReply(f"item{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} not graded")
    return [seen[n] for n in range(1, n_items + 1)]


def _parse_entry(entry: Any, position: int, n_items: int) -> ItemVerdict:
    if not isinstance(entry, dict):
        raise MalformedReply(f"entry {position} is not an object")
    extra = sorted(set(entry) - {"item", "verdict", "reason"})
    if extra:
        raise MalformedReply(f"entry {position} has unexpected field {extra[0]!r}")
    item = entry.get("item")
    if isinstance(item, bool) or not isinstance(item, int):
        raise MalformedReply(f"entry {position} has no integer 'item' number")
    if not 1 <= item <= n_items:
        raise MalformedReply(f"entry {position} grades item {item}, but the rubric has {n_items} item{'s' if n_items != 1 else ''}")
    verdict = entry.get("verdict")
    if verdict not in VERDICTS:
        raise MalformedReply(f"item {item} has verdict {verdict!r}, not PASS or FAIL")
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise MalformedReply(f"item {item} has no reason")
    return ItemVerdict(item=item, verdict=Vote(verdict), reason=one_line(reason))


def decide(rubric: list[str], samples: list[list[ItemVerdict]], ids: list[str] | None = None) -> list[JudgeItem]:
    """Majority per item over an odd number of samples; the reason comes from a majority vote. `ids`: the
    items' ids (default: their words' ids)."""
    ids = ids if ids is not None and len(ids) == len(rubric) else resolve_item_ids(rubric)
    decisions = []
    for index, text in enumerate(rubric):
        votes = [sample[index].verdict for sample in samples]
        reasons = [sample[index].reason for sample in samples]
        winner = Counter(votes).most_common(1)[0][0]
        reason = next(r for v, r in zip(votes, reasons, strict=False) if v == winner)
        decisions.append(JudgeItem(index + 1, text, winner, reason, tuple(votes), tuple(reasons), ids[index]))
    return decisions


def overall(decisions: list[JudgeItem]) -> CheckStatus:
    """PASS only if every item passes."""
    return CheckStatus.PASS if decisions and all(d.verdict == Vote.PASS for d in decisions) else CheckStatus.FAIL


def summarize(decisions: list[JudgeItem]) -> str:
    """One line: "2/3 rubric items PASS; FAIL item 2: <reason>"."""
    passed = sum(d.verdict == Vote.PASS for d in decisions)
    line = f"{passed}/{len(decisions)} rubric items PASS"
    failed = [d for d in decisions if d.verdict == Vote.FAIL]
    if failed:
        first = failed[0]
        line += f"; FAIL item {first.item}: {first.reason}"
        if len(failed) > 1:
            line += f" (+{len(failed) - 1} more FAIL: item{'s' if len(failed) > 2 else ''} {', '.join(str(d.item) for d in failed[1:])})"
    return line


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
