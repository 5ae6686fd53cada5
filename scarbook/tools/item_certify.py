"""Certify each rubric item and rule check of a case, not only the case (issue 35.2).

`verify` puts the failed artifact through every check K times, and the good artifact K times, running each
check whatever the ones before it said (the case's own verdict still short-circuits, as a run does). From
those results each item gets a finding:

- catching: FAIL on the failed artifact every time, PASS on the good one every time;
- split: its K verdicts on one artifact disagree (asked first: nothing else can be said of it);
- blind: PASS on the failed artifact — it does not see the incident;
- strict: FAIL on the good artifact — a right result would fail it too.

A rule check is decided the same way from its one (deterministic) result per artifact. Without a good
artifact only the failed one is checked, and each item says so. A case none of whose items or rule checks
catch its incident cannot be certified.
"""

from __future__ import annotations

from collections.abc import Sequence

from scarbook.cases.placeholders import is_placeholder_item, write_it_hint
from scarbook.cases.verifications import ItemCertification
from scarbook.models import Case, CheckResult, CheckStatus, ItemFinding, Vote
from scarbook.transcripts.tool_input import artifact_words

NO_GOOD = "the scar has no good artifact: only the failed one was checked"


def _votes(passes: Sequence[Sequence[CheckResult]], check_index: int, item_id: str) -> list[str]:
    """The item's verdict on each pass ("" where the judge reached none)."""
    out = []
    for results in passes:
        result = results[check_index] if check_index < len(results) else None
        found = ""
        for entry in result.judge.items if result is not None and result.judge is not None else ():
            if entry.id == item_id:
                found = str(entry.verdict).upper()
        out.append(found)
    return out


def _statuses(passes: Sequence[Sequence[CheckResult]], check_index: int) -> list[str]:
    return [str(results[check_index].status) if check_index < len(results) else "" for results in passes]


def _finding(failed: list[str], good: list[str] | None, fail: str, ok: str, judged: bool) -> tuple[ItemFinding, str]:
    """The finding of one item or check from its verdicts on each artifact (`fail`/`ok`: its words for them)."""
    what = "verdicts" if judged else "results"
    if not failed or any(v not in (fail, ok) for v in [*failed, *(good or [])]):
        return ItemFinding.UNDECIDED, "no verdict: the judge did not grade it" if judged else "the check reached no verdict"
    for side, votes in (("failed", failed), ("good", good or [])):
        if len(set(votes)) > 1:
            return ItemFinding.SPLIT, f"its {len(votes)} {what} on the {side} artifact disagree: {', '.join(votes)}"
    times = f" all {len(failed)} times" if judged and len(failed) > 1 else ""
    if failed[0] == ok:
        return ItemFinding.BLIND, f"passes the failed artifact{times}: it does not see the incident"
    if good and good[0] == fail:
        return ItemFinding.STRICT, f"fails the good artifact{times}: a right result would fail it too"
    said = f"fails the failed artifact{times}"
    return ItemFinding.CATCHING, said + (f", passes the good one{times}" if good else f" ({NO_GOOD})")


def certify_items(case: Case, failed: Sequence[Sequence[CheckResult]],
                  good: Sequence[Sequence[CheckResult]] | None) -> list[ItemCertification]:
    """Each rubric item's and rule check's finding from every check's results on each pass over the failed
    artifact and (None: the scar has none) the good one."""
    out = []
    for n, check in enumerate(case.checks):
        if check.is_judge:
            for ident, text in zip(check.rubric_ids, check.rubric, strict=True):
                f_votes = _votes(failed, n, ident)
                g_votes = _votes(good, n, ident) if good is not None else None
                finding, why = _finding(f_votes, g_votes, Vote.FAIL, Vote.PASS, True)
                if is_placeholder_item(text):  # whatever the judge made of a TODO, it says nothing of the incident
                    finding, why = ItemFinding.UNDECIDED, f"the import's TODO, not an item: {write_it_hint(case)}"
                out.append(ItemCertification(ident, text, check.type, n, finding, why, f_votes, g_votes or []))
            continue
        f_status = _statuses(failed[:1], n)
        g_status = _statuses(good[:1], n) if good is not None else None
        if g_status == [CheckStatus.SKIPPED]:  # a trajectory check: the good artifact comes with no run
            g_status = None
        finding, why = _finding(f_status, g_status, CheckStatus.FAIL, CheckStatus.PASS, False)
        out.append(ItemCertification("", describe_check(check.to_dict()), check.type, n, finding, why, f_status,
                                     g_status or []))
    return out


def describe_check(check: dict) -> str:
    """A rule check in one line, as case.yaml would write it: {type: contains, path: a.txt, text: "x"}."""
    parts = [f"{k}: {v!r}" if isinstance(v, str) and k != "type" else
             f"{k}: {artifact_words(v)}" if k == "artifact" else f"{k}: {v}" for k, v in check.items()]
    return "{" + ", ".join(parts) + "}"


def catching(items: Sequence[ItemCertification]) -> list[ItemCertification]:
    return [i for i in items if i.finding == ItemFinding.CATCHING]
