"""Compare two sessions case by case, read from history: the one function `scarbook diff` and the
TUI's sessions compare call (and, against a recorded baseline, `eval --against` / `report`).

The numbers are scarbook.stats.compare's; this module reads both sessions' runs, leaves out the case
ids given to another case between them (cases/lineage), and says what could not be read and what
makes the two incomparable (changed checks, only one judged) — each caller decides whether to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from scarbook.cases.folders import ProjectFolders
from scarbook.cases.lineage import CaseIdLog, given_away_between, leave_out_given_away
from scarbook.errors import HistoryError
from scarbook.history.baseline import Baseline, BaselineComparison, compare_to_baseline
from scarbook.history.records import primary_runs
from scarbook.history.session_judge import SessionJudge, changed_parts, judge_of_runs
from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo
from scarbook.project import Project
from scarbook.stats.compare import SessionComparison, changed_cases, compare_sessions, counts_by_case, partial_mismatch


@dataclass
class TwoSessions:
    a: SessionInfo
    b: SessionInfo
    comparison: SessionComparison
    given_away: list[str] = field(default_factory=list)  # ids given to another case in between: not compared
    changed: list[str] = field(default_factory=list)  # cases whose task or checks changed in between
    mismatch: str = ""  # why the rates are not comparable (only one session judged), or ""
    problems: list[HistoryError] = field(default_factory=list)  # runs left out (damaged, forged), named
    # each session's judge as its runs record it (history/session_judge.py); None for a session nothing judged
    judges: tuple[SessionJudge | None, SessionJudge | None] = (None, None)

    def judge_changes(self) -> list[str]:
        """What changed of the judge from A to B, part by part ("judge temperature '0.0' -> '0.7'"): the
        recorded models' change alone when a side's runs were not judged."""
        mine, theirs = self.judges
        if mine is not None and theirs is not None:
            return changed_parts(mine, theirs)
        a, b = self.a.judge_model, self.b.judge_model
        return [f"judge {a!r} -> {b!r}"] if a != b else []


def compare_two_sessions(project: Project, a: SessionInfo, b: SessionInfo,
                         history: History | None = None) -> TwoSessions:
    """Session a (before) against session b (after), per case, with Holm over the cases both ran."""
    history = history or project.history
    runs_a, runs_b = history.runs(a.id, info=a), history.runs(b.id, info=b)
    ids, id_problems = CaseIdLog(project.workspaces_dir).read()
    counts_a, counts_b, given_away = leave_out_given_away(ids, a, b, counts_by_case(primary_runs(a, runs_a)),
                                                          counts_by_case(primary_runs(b, runs_b)))
    problems = [*runs_a.problems, *(p for p in runs_b.problems if str(p) not in map(str, runs_a.problems)),
                *map(HistoryError, id_problems)]
    return TwoSessions(a, b, compare_sessions(counts_a, counts_b), given_away, changed_cases(a, b),
                       partial_mismatch(a, b) or "", problems, (judge_of_runs(runs_a), judge_of_runs(runs_b)))


def compare_with_baseline(project: ProjectFolders, baseline: Baseline, session: SessionInfo,
                          runs: list[RunRecord]) -> BaselineComparison:
    """This session's runs against a recorded baseline (the committed file or a past session), the
    same statistics as compare_two_sessions, leaving out the case ids given to another case since."""
    ids, _ = CaseIdLog(project.workspaces_dir).read()  # a damaged id log: every run counts (`list` says why)
    then = SimpleNamespace(id=baseline.session_id, started_at=baseline.recorded_at)
    away = given_away_between(ids, then, session, set(baseline.cases) & set(session.case_ids))
    return compare_to_baseline(baseline, session, runs, away)
