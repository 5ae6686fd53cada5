"""Reading trends from history: each case's points over its last sessions, and "regressed since".

The numbers (TrendPoint, CaseTrend, flips) are scarbook.stats.trends'; this module reads the sessions and
counts them, and asks `compare_sessions` (the test `scarbook diff` uses) whether the latest regressed.
"""

from __future__ import annotations

from collections.abc import Iterable

from scarbook.cases.io import case_digest
from scarbook.cases.lineage import CaseIdLog, IdEntry, counts_session, leave_out_given_away
from scarbook.errors import HistoryError
from scarbook.history.counts_cache import session_counts
from scarbook.history.noise import NoiseStore
from scarbook.history.store import History
from scarbook.models import Case, SessionInfo
from scarbook.project import Project
from scarbook.stats.compare import Counts, SessionComparison, compare_case, compare_sessions
from scarbook.stats.rates import effective_threshold
from scarbook.stats.trends import (
    CHANGED,
    DAMAGED,
    DEFAULT_DEPTH,
    NO_VERDICT,
    CaseTrend,
    TrendPoint,
    Trends,
    mark_changed,
)
from scarbook.views.library_rows import session_marks
from scarbook.views.noise import MIN_AA_RUNS


def build_trends(history: History, thresholds: dict[str, float], depth: int = DEFAULT_DEPTH,
                 ids: dict[str, IdEntry] | None = None) -> Trends:
    """The trend of every case in `thresholds` (case id -> its passing line) over the last `depth`
    sessions that ran it — and, for an id in `ids` (case_lineage), only sessions since the id was given
    to its present case. Reads sessions newest first and stops once every case has `depth`; each
    session it reads is read whole (all its cases), because `diff`'s Holm family is the whole session.
    History problems found on the way come back in `Trends.problems`."""
    ids = ids or {}
    if depth < 1:
        raise ValueError("a trend needs at least one session")
    newest_first: dict[str, list[TrendPoint]] = {cid: [] for cid in thresholds}
    counts: dict[str, dict[str, Counts]] = {}  # session id -> case id -> counts (the whole session)
    infos: dict[str, SessionInfo] = {}
    digests: dict[tuple[str, str], str] = {}
    pending = {cid for cid in thresholds}
    listed = history.sessions()
    problems = [str(p) for p in listed.problems]
    for info in listed:
        if not pending:
            break
        if not pending.intersection(info.case_ids):
            continue
        infos[info.id] = info
        marks = tuple(session_marks(info))
        counts[info.id] = {}
        for cid, found in session_counts(history, info).items():  # the lines `runs` counts, cached
            problems += [p for p in found.problems if p not in problems]
            if found.counts is not None:
                counts[info.id][cid] = found.counts
            damaged = bool(found.problems)
            if cid not in pending or not (found.counts or damaged):
                continue  # planned but never started (a cancelled session): it did not run the case
            if not counts_session(ids.get(cid), info.id, info.started_at):
                pending.discard(cid)  # this and every older session ran another case under this id
                continue
            c = found.counts or Counts(0, 0)
            extra = (NO_VERDICT,) if c.rate is None else ()
            point = TrendPoint(info.id, info.label, info.started_at, c, marks + extra + ((DAMAGED,) if damaged else ()))
            newest_first[cid].append(point)
            digests[(info.id, cid)] = info.case_digests.get(cid, "")
            if len(newest_first[cid]) >= depth:
                pending.discard(cid)
    judge = _Verdicts(counts, infos, ids)
    cases = {}
    for cid, points in newest_first.items():
        points = mark_changed(cid, points, digests)
        trend = CaseTrend(cid, thresholds[cid], points[::-1])
        trend.regressed_since = _regressed_since(cid, points, judge)
        cases[cid] = trend
    shown = {p.session_id for t in cases.values() for p in t.points}
    return Trends(cases, sorted((infos[s] for s in shown), key=SessionInfo.start_order), problems)


class _Verdicts:
    """`scarbook diff before after`'s verdict for one case, each session pair compared once, lazily."""

    def __init__(self, counts: dict[str, dict[str, Counts]], infos: dict[str, SessionInfo],
                 ids: dict[str, IdEntry]) -> None:
        self.counts, self.infos, self.ids = counts, infos, ids
        self.pairs: dict[tuple[str, str], SessionComparison] = {}

    def regressed(self, before: TrendPoint, after: TrendPoint, cid: str) -> bool:
        # Holm's adjusted p is never below the case's own p, so a case its own test does not call
        # regressed cannot be called so in the family: the whole session is compared only when needed.
        if compare_case(before.counts, after.counts, cid).verdict != "regressed":
            return False
        key = (before.session_id, after.session_id)
        if key not in self.pairs:  # the family `diff` tests: without ids given to another case in between
            a, b, _ = leave_out_given_away(self.ids, self.infos[key[0]], self.infos[key[1]], self.counts[key[0]],
                                           self.counts[key[1]])
            self.pairs[key] = compare_sessions(a, b)
        return cid in self.pairs[key].regressed


def _regressed_since(cid: str, newest_first: list[TrendPoint], judge: _Verdicts) -> TrendPoint | None:
    """The newest earlier session against which the latest one regressed (the last session before the
    drop), when the latest session judged the case; else None. Sessions `diff` would refuse to compare
    (only one partial, case changed) and those without a rate are skipped."""
    latest = newest_first[0] if newest_first else None
    if latest is None or latest.rate is None:
        return None
    latest_rate = latest.rate
    for before in newest_first[1:]:
        if before.rate is None or CHANGED in before.marks or before.rate <= latest_rate:
            continue  # no rate, another test, or no drop: `diff` cannot call that a regression
        if ("partial" in before.marks) != ("partial" in latest.marks):
            continue  # only one graded its judge checks: `diff` refuses the pair (compare.partial_mismatch)
        if judge.regressed(before, latest, cid):
            return before
    return None


def project_trends(project: Project, cases: Iterable[Case], depth: int = DEFAULT_DEPTH) -> Trends:
    """The trends of these cases of the project: each its own threshold (else the config's), and only
    the sessions that ran the case the id now names (see case_lineage)."""
    cases = list(cases)
    thresholds = {c.id: effective_threshold(c, project.config.threshold) for c in cases}
    digests = {c.id: case_digest(c) for c in cases}
    ids, problems = CaseIdLog(project.workspaces_dir).read()
    trends = build_trends(project.history, thresholds, depth, ids)
    trends.problems = problems + [p for p in trends.problems if p not in problems]
    try:  # the noise floor beside the trends, when measured on the case's checks as they are, at enough runs to be
        # one (views/noise.py: MIN_AA_RUNS)
        trends.aa_spread = {cid: m.spread for cid, m in NoiseStore(project.workspaces_dir).latest().items()
                            if m.spread is not None and m.digest and m.digest == digests.get(cid)
                            and m.runs >= MIN_AA_RUNS}
    except HistoryError as exc:
        trends.problems.append(exc.message)
    return trends
