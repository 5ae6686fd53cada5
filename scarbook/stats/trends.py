"""Per-case trends across sessions: each case's rate in the last N sessions that ran it, its marks, how
much it flips, and "regressed since <session>" when `scarbook diff <session> <latest>` would say so.

Plain data (no Textual). The library builds these in the same thread worker as its rows, right after
the rows are shown; `scarbook list` and `scarbook trends` print them.

A point has a rate only when its session reached a verdict on every run of the case that did not
error (stats.rates.rate_of, the library's rule): a case with an unjudged run, or whose runs all ended
in error, has none ("no verdict" is not 0%). The
regression verdict is `compare.compare_sessions`'s own — Newcombe interval and Fisher's exact p,
Holm-corrected over the cases both sessions ran — never a second test (docs/statistics.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from statistics import pvariance

from scarbook.models import SessionInfo
from scarbook.stats.compare import Counts

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
        """passes / judged, by the one rule (stats.rates.rate_of, as the library's rate): None with an
        unjudged run or no judged one. A partial (--skip-judge) session keeps the rate of a case its
        runs all reached a verdict in (rule checks only, or every run failed a rule check)."""
        return None if NO_VERDICT in self.marks else self.counts.rate


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
        return sum(a != b for a, b in zip(above, above[1:], strict=False))

    @property
    def spread(self) -> float:
        """The variance of the judged sessions' rates (0 with fewer than two)."""
        rates = self.rates
        return pvariance(rates) if len(rates) > 1 else 0.0

    def regressed_note(self) -> str:
        return f"regressed since {self.regressed_since.name}" if self.regressed_since else ""


@dataclass
class Trends:
    cases: dict[str, CaseTrend]
    sessions: list[SessionInfo]  # every session some case's trend shows, oldest first
    problems: list[str] = field(default_factory=list)  # what reading history met (files named, with the fix)
    aa_spread: dict[str, float] = field(default_factory=dict)  # case id -> its noise floor (`scarbook noise`)

    def flakiest(self) -> list[CaseTrend]:
        """Cases with at least one session, flakiest first (then by id)."""
        ran = [t for t in self.cases.values() if t.points]
        return sorted(ran, key=lambda t: (-t.flips, -t.spread, t.case_id))




def mark_changed(cid: str, newest_first: list[TrendPoint], digests: dict[tuple[str, str], str]) -> list[TrendPoint]:
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






