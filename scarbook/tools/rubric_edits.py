"""The editor's acts on a rubric item (issue 35.4), without the screen: which rule check an item becomes, and
which item it merges with. The editor edits its form with the answer; a save and the rejudge it offers show
the case's rate under the edited rubric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scarbook.cases.lint import lint_case
from scarbook.models import Case
from scarbook.stats.items import ItemFigures


def rule_check_for(case: Case, index: int) -> dict[str, Any] | None:
    """The rule check that decides rubric item `index` of the case's first llm_judge check (lint's, the one the
    draft step converts such an item to); None when no rule decides it."""
    judge_at = next((i for i, c in enumerate(case.checks) if c.is_judge), None)
    return next((h.suggested_check for h in lint_case(case) if h.check_index == judge_at and h.item_index == index
                 and h.rule == "rule-decidable" and h.suggested_check), None)


def redundant_partner(case: Case, figures: Mapping[str, ItemFigures], text: str, items: Sequence[str]) -> str | None:
    """The item (its words, among `items`) that history says `text` is redundant with; None when none is."""
    ids = {t: i for c in case.judge_checks for i, t in zip(c.rubric_ids, c.rubric, strict=True)}
    found = figures.get(ids.get(text, ""))
    texts = {i: t for t, i in ids.items()}
    return next((texts[i] for i in (found.redundant_with if found else ()) if texts.get(i) in items), None)
