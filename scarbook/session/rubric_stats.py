"""Each rubric item's figures across history: `scarbook rubric stats`, `scarbook lint` and the editor's rubric
list all read them here (issue 35.3). history/item_history.py counts, stats/items.py decides the flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scarbook.cases.verifications import VerificationStore
from scarbook.history.item_history import ItemHistory, read_item_history
from scarbook.models import Case, Vote
from scarbook.project import Project
from scarbook.stats.items import ItemFigures, ItemRules, item_figures


@dataclass
class RubricStats:
    cases: dict[str, list[ItemFigures]] = field(default_factory=dict)  # case id -> its items, in rubric order
    runs_read: int = 0
    lines_skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def item(self, case_id: str, item_id: str) -> ItemFigures | None:
        return next((f for f in self.cases.get(case_id, []) if f.item_id == item_id), None)


RULES = ItemRules()


def rubric_stats(project: Project, cases: list[Case], rules: ItemRules = RULES) -> RubricStats:
    """The figures and flags of every rubric item of `cases`, from every readable session, the latest
    `verify --judged K` of each case, and people's labels of the judge in use."""
    found = read_item_history(project.history, cases, workspaces_dir=project.workspaces_dir,
                              settings=project.config.judge, before_finish=lambda h: _count_verified(project, h))
    out = RubricStats(runs_read=found.runs_read, lines_skipped=found.lines_skipped, problems=list(found.problems))
    for case_id, items in found.cases.items():
        out.cases[case_id] = item_figures(list(items.tallies.values()), items.pairs, rules)
    return out


def _count_verified(project: Project, found: ItemHistory) -> None:
    """The latest verification's K judgements of each item on each scar artifact count as repeats."""
    try:
        latest = VerificationStore(project.workspaces_dir).load()
    except (OSError, ValueError) as exc:
        found.problems.append(f"verify.json not read: {exc}")
        return
    for case_id, items in found.cases.items():
        v = latest.get(case_id)
        for entry in (v.items if v else []):
            for side, said in (("failed", entry.failed_votes), ("good", entry.good_votes)):
                votes = [Vote(x) for x in said if x in (Vote.PASS, Vote.FAIL)]
                items.count_repeats(entry.item_id, votes, f"verify:{side}")


def case_item_figures(project: Project, case: Case) -> list[ItemFigures]:
    """One case's items' figures for the editor's rubric list ([] without a judge check or any history)."""
    if not case.judge_checks or not project.history.session_dirs():
        return []
    return rubric_stats(project, [case]).cases.get(case.id, [])


def figures_json(stats: RubricStats) -> dict[str, Any]:
    """`scarbook rubric stats --json`."""
    def one(f: ItemFigures) -> dict[str, Any]:
        t = f.tally
        return {"id": f.item_id, "text": t.text, "runs_judged": t.judged, "fails": t.fails, "sessions": t.sessions,
                "fail_rate": f.fail_rate, "interval": list(f.interval) if f.interval else None,
                "only_failing": t.only_failing, "repeated": t.repeated, "disputed": t.disputed,
                "disagreement": f.disagreement,
                "labels": {"n": t.labels.n, "wrong": t.labels.wrong, "agreement": f.agreement,
                           "sensitivity": f.sensitivity, "specificity": f.specificity},
                "flags": [str(flag) for flag in f.flags], "redundant_with": list(f.redundant_with),
                "why": {str(k): v for k, v in f.reasons.items()}}

    return {"cases": {cid: [one(f) for f in figures] for cid, figures in stats.cases.items()},
            "runs_read": stats.runs_read, "lines_skipped": stats.lines_skipped, "problems": stats.problems}
