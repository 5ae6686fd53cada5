"""Per-case trends across sessions: each case's rate in the last N sessions that ran it, its marks, how
much it flips, and "regressed since <session>" when `scarbook diff <session> <latest>` would say so.

Plain data (no Textual). The library builds these in the same thread worker as its rows, right after
the rows are shown; `scarbook list` and `scarbook trends` print them.

A point has a rate only when its session judged the case: a partial (--skip-judge) session, or one
whose runs of the case all ended in error or unjudged, has none ("no verdict" is not 0%). The
regression verdict is `compare.compare_sessions`'s own — Newcombe interval and Fisher's exact p,
Holm-corrected over the cases both sessions ran — never a second test (docs/statistics.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from statistics import pvariance
from typing import Iterable

from scarbook.compare import Counts, SessionComparison, compare_case, compare_sessions
from scarbook.counts_cache import session_counts
from scarbook.history import History
from scarbook.case_lineage import CaseIdLog, IdEntry, counts_session, leave_out_given_away
from scarbook.library_rows import session_marks
from scarbook.models import Case, SessionInfo
from scarbook.project import Project
from scarbook.stats import effective_threshold

DEFAULT_DEPTH = 8  # sessions per case
NO_VERDICT = "no verdict"  # no run of the case was judged, or some went unjudged: no rate
CHANGED = "case changed"  # the case's task or checks differ from its latest session's: not comparable
DAMAGED = "damaged"  # some of its runs were left out of the count (forged or damaged lines)


@dataclass(frozen=True)
class TrendPoint:
    """One case in one session."""

    session_id: str
    label: str
    started_at: str
    counts: Counts
    marks: tuple[str, ...] = ()  # session_marks, then NO_VERDICT / CHANGED / DAMAGED

    @property
    def name(self) -> str:
        """What a person calls the session: its label, else its id."""
        return self.label or self.session_id

    @property
    def runs(self) -> int:
        c = self.counts
        return c.passes + c.fails + c.errors + c.unjudged

    @property
    def rate(self) -> float | None:
        """passes / judged; None when the session did not judge every run of the case (partial, or
        NO_VERDICT: as in stats.summarize, a case with unjudged runs has no rate)."""
        return None if "partial" in self.marks or NO_VERDICT in self.marks else self.counts.rate


@dataclass
class CaseTrend:
    case_id: str
    threshold: float
    points: list[TrendPoint] = field(default_factory=list)  # oldest first, at most `depth`
    regressed_since: TrendPoint | None = None  # `diff <it> <latest>` calls the case regressed

    @cached_property
    def rates(self) -> list[float]:
        """The judged sessions' rates, oldest first (points do not change once the trend is built)."""
        return [p.rate for p in self.points if p.rate is not None]

    @property
    def flips(self) -> int:
        """How often the rate crossed the case's threshold from one judged session to the next."""
        above = [r >= self.threshold for r in self.rates]
        return sum(a != b for a, b in zip(above, above[1:]))

    @property
    def spread(self) -> float:
        """The variance of the judged sessions' rates (0 with fewer than two)."""
        rates = self.rates
        return pvariance(rates) if len(rates) > 1 else 0.0

    def flakiness(self) -> tuple[int, float]:
        """Sort key, larger = flakier: threshold crossings first, then the spread of the rates."""
        return self.flips, self.spread

    def regressed_note(self) -> str:
        return f"regressed since {self.regressed_since.name}" if self.regressed_since else ""


@dataclass
class Trends:
    cases: dict[str, CaseTrend]
    sessions: list[SessionInfo]  # every session some case's trend shows, oldest first

    def flakiest(self) -> list[CaseTrend]:
        """Cases with at least one session, flakiest first (then by id)."""
        ran = [t for t in self.cases.values() if t.points]
        return sorted(ran, key=lambda t: (-t.flips, -t.spread, t.case_id))


def build_trends(history: History, thresholds: dict[str, float], depth: int = DEFAULT_DEPTH,
                 ids: dict[str, IdEntry] | None = None) -> Trends:
    """The trend of every case in `thresholds` (case id -> its passing line) over the last `depth`
    sessions that ran it — and, for an id in `ids` (case_lineage), only sessions since the id was given
    to its present case. Reads sessions newest first and stops once every case has `depth`; each
    session it reads is read whole (all its cases), because `diff`'s Holm family is the whole session.
    History problems found on the way are added to `history.problems`, as every reader does."""
    ids = ids or {}
    if depth < 1:
        raise ValueError("a trend needs at least one session")
    newest_first: dict[str, list[TrendPoint]] = {cid: [] for cid in thresholds}
    counts: dict[str, dict[str, Counts]] = {}  # session id -> case id -> counts (the whole session)
    infos: dict[str, SessionInfo] = {}
    digests: dict[tuple[str, str], str] = {}
    pending = {cid for cid in thresholds}
    for info in history.sessions():
        if not pending:
            break
        if not pending.intersection(info.case_ids):
            continue
        infos[info.id] = info
        marks = tuple(session_marks(info))
        counts[info.id] = {}
        for cid, found in session_counts(history, info).items():  # the lines `runs` counts, cached
            if found.counts is not None:
                counts[info.id][cid] = found.counts
            damaged = bool(found.problems)
            if cid not in pending or not (found.counts or damaged):
                continue  # planned but never started (a cancelled session): it did not run the case
            if not counts_session(ids.get(cid), info.id, info.started_at):
                pending.discard(cid)  # this and every older session ran another case under this id
                continue
            c = found.counts or Counts(0, 0)
            extra = (NO_VERDICT,) if (not c.judged or c.unjudged) and "partial" not in marks else ()
            point = TrendPoint(info.id, info.label, info.started_at, c, marks + extra + ((DAMAGED,) if damaged else ()))
            newest_first[cid].append(point)
            digests[(info.id, cid)] = info.case_digests.get(cid, "")
            if len(newest_first[cid]) >= depth:
                pending.discard(cid)
    judge = _Verdicts(counts, infos, ids)
    cases = {}
    for cid, points in newest_first.items():
        points = _mark_changed(cid, points, digests)
        trend = CaseTrend(cid, thresholds[cid], points[::-1])
        trend.regressed_since = _regressed_since(cid, points, judge)
        cases[cid] = trend
    shown = {p.session_id for t in cases.values() for p in t.points}
    return Trends(cases, sorted((infos[s] for s in shown), key=lambda i: i.id))


def _mark_changed(cid: str, newest_first: list[TrendPoint], digests: dict[tuple[str, str], str]) -> list[TrendPoint]:
    """Mark the points whose case digest differs from the newest point's: `diff` refuses those pairs
    (their rates measure a different test). A missing digest counts as unchanged, as in compare."""
    if not newest_first:
        return newest_first
    now = digests.get((newest_first[0].session_id, cid), "")
    out = [newest_first[0]]
    for p in newest_first[1:]:
        then = digests.get((p.session_id, cid), "")
        out.append(p if not (now and then and now != then) else
                   TrendPoint(p.session_id, p.label, p.started_at, p.counts, p.marks + (CHANGED,)))
    return out


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
    (partial, case changed) and those without a rate are skipped."""
    if not newest_first or newest_first[0].rate is None:
        return None
    latest = newest_first[0]
    for before in newest_first[1:]:
        if before.rate is None or CHANGED in before.marks or before.rate <= latest.rate:
            continue  # no rate, another test, or no drop: `diff` cannot call that a regression
        if judge.regressed(before, latest, cid):
            return before
    return None


def project_trends(project: Project, cases: Iterable[Case], depth: int = DEFAULT_DEPTH) -> Trends:
    """The trends of these cases of the project: each its own threshold (else the config's), and only
    the sessions that ran the case the id now names (see case_lineage)."""
    thresholds = {c.id: effective_threshold(c, project.config.threshold) for c in cases}
    ids = CaseIdLog(project.workspaces_dir).load_or_tell(project.history._tell)
    return build_trends(project.history, thresholds, depth, ids)
