"""From proposed rubric items and rule checks to the case that keeps the ones that catch the incident (35.1).

The proposals (the judge's draft, or the offline proposer's rule checks) join the case: rule checks before its
judge, items in its first llm_judge check (a new one judging where the artifact belongs when it has none);
the import's TODO item goes. Every proposal goes through lint first: an item lint finds vague, joined,
repeated or about what the agent did is dropped with lint's words; an item a rule decides becomes that rule
check. Then the case is certified as `verify` does, each item and rule check on its own (item_certify.py),
and only the catching proposals are kept; the rest are shown with why. The case's own items and checks stay
as they are, shown with what certification found of them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from scarbook.cases.io import CASE_FILE, case_to_dict, validate_case_data
from scarbook.cases.lint import lint_case
from scarbook.cases.placeholders import is_placeholder_item
from scarbook.cases.verifications import ItemCertification
from scarbook.checks.spec import MAX_READ
from scarbook.judge.grader import Grader
from scarbook.models import Case, ItemFinding, Usage
from scarbook.tools.item_certify import describe_check
from scarbook.tools.verify import artifact_target, verify_case

ITEM = "item"
DROPPING_RULES = ("vague-item", "joined-criteria", "duplicate-item", "trajectory-item", "rule-decidable")
TRANSCRIPT_ONLY = ("verify puts only the artifact in the workspace, so it cannot show this; kept on the "
                   "transcript's word")


@dataclass
class Proposal:
    """One proposed item or rule check and what became of it."""

    kind: str  # ITEM, or the rule check's type
    text: str  # the item's words, or the check in one line
    check: dict[str, Any] | None = None  # the rule check as case.yaml writes it
    finding: ItemFinding | None = None  # None: dropped before certification (lint)
    why: str = ""  # why it is kept or dropped
    kept: bool = False
    transcript_only: bool = False  # only_changed from the incident's transcript writes: verify cannot see them

    @property
    def is_item(self) -> bool:
        return self.kind == ITEM


@dataclass
class RubricDraft:
    case_id: str
    said: str  # one line: who proposed, or why the rubric was not drafted
    proposals: list[Proposal] = field(default_factory=list)
    existing: list[ItemCertification] = field(default_factory=list)  # the case's own items and checks
    case: Case | None = None  # the case with the kept proposals: what accepting writes (None: nothing kept)
    usage: Usage = field(default_factory=Usage)  # what drafting cost (certification's judge calls not included)
    notes: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[Proposal]:
        return [p for p in self.proposals if p.kept]


def build_case(case: Case, items: list[str], checks: list[dict[str, Any]]) -> Case:
    """`case` with `checks` added before its judge and `items` in its first llm_judge check, the import's
    TODO item gone (a judge check left with no item goes too); validated as a load would."""
    assert case.root is not None
    data = copy.deepcopy(case_to_dict(case))
    target = artifact_target(case)
    rows: list[dict[str, Any]] = []
    for row in data["checks"]:
        if row["type"] == "llm_judge":
            row["rubric"] = [i for i in row["rubric"] if not is_placeholder_item(i)]
            if not row["rubric"] and not (items and not any(r["type"] == "llm_judge" for r in rows)):
                continue
        rows.append(row)
    judge_at = next((n for n, r in enumerate(rows) if r["type"] == "llm_judge"), len(rows))
    new = [c for c in checks if c not in rows]
    rows[judge_at:judge_at] = new
    if items:
        judge = next((r for r in rows if r["type"] == "llm_judge"), None)
        if judge is None:
            judge = {"type": "llm_judge", "rubric": []} | ({"artifact": target} if target != "output" else {})
            rows.append(judge)
        judge["rubric"] = [*judge["rubric"], *items]
    data["checks"] = rows or data["checks"]
    return validate_case_data(data, case.root / CASE_FILE, case.root)


def lint_proposals(case: Case, proposals: list[Proposal]) -> list[Proposal]:
    """Drop each proposed item lint finds wanting (saying lint's words); an item a rule decides gives its rule
    check as a new proposal. Returns the proposals made by lint."""
    items = [p for p in proposals if p.is_item]
    if not items:
        return []
    candidate = build_case(case, [p.text for p in items], [])
    ci = next(n for n, c in enumerate(candidate.checks) if c.is_judge)
    own = len(candidate.checks[ci].rubric) - len(items)  # the case's own items come first, then the proposed
    made: list[Proposal] = []
    for hint in lint_case(candidate):
        if hint.check_index != ci or hint.item_index is None or hint.rule not in DROPPING_RULES:
            continue
        if hint.item_index < own:
            continue  # the case's own item
        p = items[hint.item_index - own]  # by place: an item proposed twice is two proposals
        if p.why:  # already dropped
            continue
        p.why = f"lint {hint.rule}: {hint.message} — {hint.suggestion}"
        taken = [q.check for q in [*proposals, *made] if q.check]
        if hint.rule == "rule-decidable" and hint.suggested_check and hint.suggested_check not in taken:
            made.append(Proposal(hint.suggested_check["type"], describe_check(hint.suggested_check),
                                 dict(hint.suggested_check)))
    return made


def _found(items: list[ItemCertification], p: Proposal, case: Case, taken: set[int]) -> ItemCertification | None:
    """The certification of `p`: the first of its words (or its check) not `taken` by an earlier proposal."""
    for cert in items:
        if id(cert) in taken:
            continue
        check = case.checks[cert.check_index]
        if p.is_item and cert.is_item and cert.text == p.text:
            return cert
        if not p.is_item and not cert.is_item and check.to_dict() == p.check:
            return cert
    return None


async def certify_proposals(case: Case, draft: RubricDraft, judge: Grader | None, times: int, *,
                            max_read: int = MAX_READ) -> None:
    """Lint, then certify the proposals on the case and keep the catching ones (draft.case: the case with them)."""
    draft.proposals += lint_proposals(case, draft.proposals)
    live = [p for p in draft.proposals if not p.why]
    if not live:
        return
    candidate = build_case(case, [p.text for p in live if p.is_item], [p.check for p in live if p.check])
    v = await verify_case(candidate, judge, times, max_read=max_read)
    mine: set[int] = set()
    for p in live:
        cert = _found(v.items, p, candidate, mine)
        if cert is None:
            p.finding, p.why = ItemFinding.UNDECIDED, "not certified: the checks did not reach it"
            continue
        mine.add(id(cert))
        p.finding, p.why = cert.finding, cert.why
        p.kept = cert.finding == ItemFinding.CATCHING
        if p.transcript_only and cert.finding == ItemFinding.BLIND:
            p.kept, p.why = True, TRANSCRIPT_ONLY
    draft.existing = [c for c in v.items if id(c) not in mine]
    kept = draft.kept
    if kept:
        draft.case = build_case(case, [p.text for p in kept if p.is_item], [p.check for p in kept if p.check])


@dataclass(frozen=True)
class DraftRow:
    """One line of the certification table (the CLI prints it, the TUI shows it)."""

    verdict: str  # "keep", "drop", or "has" for the case's own item or check
    kind: str  # "item", or the check's type
    text: str
    finding: str  # catching / blind / strict / split / no verdict / lint
    why: str

    @property
    def said(self) -> str:
        """The finding and why, in one line (a why that starts with its finding's words is not repeated)."""
        return self.why if self.why.startswith(self.finding) else f"{self.finding}: {self.why}"


def draft_rows(draft: RubricDraft) -> list[DraftRow]:
    rows = [DraftRow("keep" if p.kept else "drop", p.kind, p.text, str(p.finding) if p.finding else "lint", p.why)
            for p in draft.proposals]
    rows += [DraftRow("has", ITEM if c.is_item else c.kind, c.text, str(c.finding), c.why) for c in draft.existing]
    return rows


def item_notes(draft: RubricDraft) -> dict[str, str]:
    """What certification found of each rubric item the drafted case keeps, by its words (the editor shows it)."""
    return {row.text: row.said for row in draft_rows(draft) if row.kind == ITEM and row.verdict != "drop"}
