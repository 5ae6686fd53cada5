"""What the live screen shows, folded from runner events. No Textual here: it is plain bookkeeping.

The App's worker calls `apply()` for every event; the screens read the fold at most ~10x a second.
Numbers come from scarbook.stats.rates (one implementation of the statistics).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from scarbook.config import Config
from scarbook.history.judge_truth import Calibration
from scarbook.models import Case, RunRecord, RunStatus, SessionInfo
from scarbook.models.words import SessionState
from scarbook.run.causes import on_agents_word
from scarbook.run.events import (
    CaseDecided,
    CheckDone,
    Event,
    LookMade,
    RunFinished,
    RunRetried,
    RunStarted,
    SessionFinished,
    SessionStarted,
)
from scarbook.run.gate import case_stats, decide_gate, gate_alpha, margin_line, session_policy
from scarbook.run.versus import SessionVersus, agents_of, compare_session
from scarbook.stats.rates import CaseStats, effective_threshold
from scarbook.stats.sequential import DELTA
from scarbook.text import interval_beside, pct_beside, plural


@dataclass
class LiveSession:
    cases: list[Case]
    runs_per_case: int
    config: Config
    clock: Callable[[], float] = time.monotonic
    info: SessionInfo | None = None
    planned: int = 0
    runs: dict[str, list[RunRecord]] = field(default_factory=dict)
    running: dict[str, int] = field(default_factory=dict)  # case id -> runs in flight
    # as the runs come: case id -> above/below/undecided (--runs auto), above/below (a look of undecided: more)
    decided: dict[str, str] = field(default_factory=dict)
    # once the session ended: the gate's decision per case (run/gate.py, as the CLI's report decides it)
    gate: dict[str, str] = field(default_factory=dict)
    # once the session ended: each case's numbers as the gate read them (--runs auto: the adjusted rate)
    final: dict[str, CaseStats] = field(default_factory=dict)
    # cases --runs auto's rule decided as the runs came (a CaseDecided with its words): from then on the screen
    # shows their numbers as the gate reads them, as it will once the session ends
    ruled: set[str] = field(default_factory=set)
    tokens: int = 0
    cost_usd: float = 0.0
    started: float = 0.0
    ended: float | None = None
    done: bool = False
    abort_message: str = ""
    events_seen: int = 0
    version: int = 0  # bumped on every change, so the refresh timer can skip idle ticks
    nodes: set[str] = field(default_factory=set)  # Ray nodes the finished runs ran on (cluster executor)
    infra_retried: int = 0  # runs submitted again after a lost Ray worker or node
    # --retry-infra, as it happens (RunRetried): retries started per case, the runs retried, those
    # whose retry is running now
    retries: dict[str, int] = field(default_factory=dict)
    retried_runs: set[tuple[str, int]] = field(default_factory=set)
    claimed_runs: set[tuple[str, int]] = field(default_factory=set)  # of those, retried on the agent's own word
    retrying: set[tuple[str, int]] = field(default_factory=set)
    calibration: Calibration | None = None  # the judge's measured error, read once as the session was prepared
    # a session of several agents (eval --agents): their names, the baseline first ([] for one agent); each
    # candidate's comparison of a case decided at a look of --runs auto ((case, candidate) -> better/worse/same)
    agent_names: list[str] = field(default_factory=list)
    decided_rows: dict[tuple[str, str], str] = field(default_factory=dict)
    final_versus: SessionVersus | None = None  # once the session ended: the comparison, as the report's
    _versus: tuple[int, SessionVersus | None] = (-1, None)
    # case id -> ((runs seen, the calibration read), its stats so far)
    _stats: dict[str, tuple[tuple[int, Calibration | None], CaseStats]] = field(default_factory=dict)
    # ((runs seen, cases ruled, the calibration read), the ruled cases' numbers as the gate reads them)
    _ruled: tuple[tuple[int, int, Calibration | None], dict[str, CaseStats]] = ((-1, 0, None), {})
    # a session resumed (session/resume.py): the runs it held before (case id -> k -> run), shown and gated
    # with the runs it adds, as `scarbook resume` reports every run the session holds
    held: Mapping[str, Mapping[int, RunRecord]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.planned = self.planned or self.runs_per_case * len(self.cases)
        for c in self.cases:
            self.runs.setdefault(c.id, [])
            self.running.setdefault(c.id, 0)
        for held in self.held.values():
            for k in sorted(held):
                self._count(held[k])

    def _count(self, r: RunRecord) -> None:
        """A finished run into the figures (its case's runs, the tokens and dollars)."""
        self.runs.setdefault(r.case_id, []).append(r)
        self.tokens += r.agent_usage.total_tokens + r.judge_usage.total_tokens
        self.cost_usd += r.agent_usage.cost_usd + r.judge_usage.cost_usd

    def apply(self, ev: Event) -> None:
        self.events_seen += 1
        self.version += 1
        if isinstance(ev, SessionStarted):
            # (a resumed session plans only the runs it misses: the ones it held count too)
            self.info, self.planned = ev.session, ev.planned_runs + sum(map(len, self.held.values()))
            self.agent_names = agents_of(ev.session)
        elif isinstance(ev, RunStarted):
            self.running[ev.case_id] = self.running.get(ev.case_id, 0) + 1
        elif isinstance(ev, RunFinished):
            r = ev.run
            self._count(r)
            self.running[r.case_id] = max(0, self.running.get(r.case_id, 0) - 1)
            if r.node:
                self.nodes.add(r.node.get("id", ""))
            self.infra_retried += bool(r.infra_retries)
            self.retrying.discard((r.case_id, r.k))
        elif isinstance(ev, RunRetried):
            self.retries[ev.case_id] = self.retries.get(ev.case_id, 0) + 1
            self.retried_runs.add((ev.case_id, ev.k))
            if on_agents_word(ev.cause):
                self.claimed_runs.add((ev.case_id, ev.k))
            self.retrying.add((ev.case_id, ev.k))
        elif isinstance(ev, SessionFinished):
            self.info = ev.session
            if self.agent_names:  # the comparison decides, as the report's (run/versus.py)
                self.final_versus = self._compare(ev.session)
            else:
                self.final = {s.case_id: s for s in self.decide(ev.session)}
                self.gate = {cid: s.gate for cid, s in self.final.items()}
            self.finish()
        elif isinstance(ev, LookMade):  # a look added runs: the bar's total grows with them
            self.planned = ev.planned_runs
        elif isinstance(ev, CaseDecided) and ev.candidate:
            self.decided_rows[(ev.case_id, ev.candidate)] = ev.decision
        elif isinstance(ev, CaseDecided):
            self.decided[ev.case_id] = ev.decision
            if ev.words:  # --runs auto's rule, not a look of `undecided: more`
                self.ruled.add(ev.case_id)
        elif isinstance(ev, CheckDone):
            pass

    def finish(self, abort_message: str = "") -> None:
        self.done = True
        self.abort_message = abort_message or self.abort_message
        self.ended = self.ended if self.ended is not None else self.clock()
        for cid in self.running:
            self.running[cid] = 0
        self.retrying.clear()
        self.version += 1

    def decide(self, info: SessionInfo, cases: list[Case] | None = None) -> list[CaseStats]:
        """Each case's numbers with the gate's decision, as the CLI's report decides them (run/gate.py:
        the session's recorded gate, its looks, --runs auto's decisions and adjusted rates); `cases`: those
        only (every case)."""
        cases = self.cases if cases is None else cases
        runs = {c.id: sorted(self.runs.get(c.id, []), key=lambda r: r.k) for c in cases}
        statuses = {cid: [r.status for r in rs] for cid, rs in runs.items()}
        return decide_gate(info, [self._so_far(c) for c in cases], statuses, session_policy(info, self.config),
                           runs=runs)

    def _ruled_stats(self) -> dict[str, CaseStats]:
        """While the session runs: each case --runs auto's rule has decided, its numbers as the gate reads them
        (the rate adjusted for the stop, the interval valid after it: what the screen shows once the session
        ends). Worked out again only when a run has finished or a case was decided since."""
        if self.info is None or not self.ruled:
            return {}
        key = (self.finished_runs, len(self.ruled), self.calibration)
        seen, found = self._ruled
        if seen[:2] != key[:2] or seen[2] is not key[2]:
            cases = [c for c in self.cases if c.id in self.ruled]
            info = replace(self.info, decisions={c.id: self.decided[c.id] for c in cases})
            found = {s.case_id: s for s in self.decide(info, cases)}
            self._ruled = (key, found)
        return found

    def _compare(self, info: SessionInfo) -> SessionVersus | None:
        runs = [r for rs in self.runs.values() for r in rs]
        return compare_session(info, runs, self.config, {c.id: self.threshold_of(c) for c in self.cases},
                               self.calibration, session_policy(info, self.config))

    def versus(self) -> SessionVersus | None:
        """A session of several agents: each agent's numbers and each candidate's difference so far (its
        calls are final once the session ended, or where a look of --runs auto decided them:
        `call_of`); None for one agent. Worked out again only when a run has finished since."""
        if self.final_versus is not None or not self.agent_names or self.info is None:
            return self.final_versus
        seen, cached = self._versus
        if seen != self.finished_runs:
            fixed = replace(self.info, gate=replace(self.info.gate, looks=()) if self.info.gate else None)
            cached = self._compare(fixed)
            self._versus = (self.finished_runs, cached)
        return cached

    def call_of(self, case_id: str, candidate: str) -> str:
        """The candidate's call on a case once it is reached: at a look (--runs auto) or at the end; "" before."""
        if self.final_versus is not None:
            row = self.final_versus.comparison.row(case_id, candidate)
            return str(row.call) if row is not None else ""
        return self.decided_rows.get((case_id, candidate), "")

    def decision_of(self, case_id: str) -> str:
        """The decision the live screen shows: as it comes (--runs auto, a look of `undecided: more`); once
        the session ended, the gate's for every case (the report's); "" before."""
        return self.gate.get(case_id) or self.decided.get(case_id, "")

    @property
    def finished_runs(self) -> int:
        return sum(len(v) for v in self.runs.values())

    @property
    def runs_saved(self) -> int:
        """Planned runs an adaptive session did not need: every case decided before its cap.
        0 while running, and for a session that stopped for any other reason (cancelled, budget)."""
        finished = self.done and self.info is not None and self.info.state == SessionState.FINISHED
        if not finished or not self.decided:
            return 0
        return max(0, self.planned - self.finished_runs)

    def retrying_in(self, case_id: str) -> int:
        return sum(1 for cid, _ in self.retrying if cid == case_id)

    def retried_line(self) -> str:
        """'2 runs retried after infra errors (2 on the agent's own word; 1 running again)' for the figures: of those,
        how many were retried on a line the agent printed or its exit 127 (causes.on_agents_word), which the gate
        also reads as fails; "" before any retry."""
        if not self.retried_runs:
            return ""
        now = len(self.retrying)
        claimed = len(self.claimed_runs)
        notes = ([f"{claimed} on the agent's own word"] if claimed else []) + ([f"{now} running again"] if now else [])
        return f"{plural(len(self.retried_runs), 'run')} retried after infra errors" + (
            f" ({'; '.join(notes)})" if notes else "")

    @property
    def errors(self) -> int:
        return sum(1 for v in self.runs.values() for r in v if r.status == RunStatus.ERROR)

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else self.clock()) - self.started

    def threshold_of(self, case: Case) -> float:
        return effective_threshold(case, self.config.threshold)

    def stats(self, case: Case) -> CaseStats:
        """The case's numbers so far (run/gate.case_stats: with a usable calibration, its judged rate
        corrected for the judge's measured error too); once the session ended, or --runs auto's rule decided
        the case, as the gate read them."""
        if case.id in self.final:
            return self.final[case.id]
        ruled = self._ruled_stats().get(case.id) if case.id in self.ruled else None
        return ruled or self._so_far(case)

    def _so_far(self, case: Case) -> CaseStats:
        runs = self.runs.get(case.id, [])
        key = (len(runs), self.calibration)
        seen, s = self._stats.get(case.id, (None, None))
        if s is None or seen is None or seen[0] != key[0] or seen[1] is not key[1]:
            # the screen asks every tick: computed once per new run (or once the calibration is read)
            s = case_stats(case.id, sorted(runs, key=lambda r: r.k), self.threshold_of(case), self.config.green,
                           self.calibration, self.alpha())
            self._stats[case.id] = (key, s)
        return s

    def alpha(self) -> float:
        """The level the session's gate decides at (its looks split alpha): a corrected interval's."""
        if self.info is None:
            return self.config.gate.alpha
        return gate_alpha(self.info, session_policy(self.info, self.config))

    def margin_line(self) -> str:
        """A case --runs auto decided whose interval reaches past its threshold, in the report's words
        (run/gate.margin_line: the margin the decision was taken with), as soon as its rule decided it; several
        such cases in one line (the report says each), so they do not take the table's rows; "" for none."""
        read = self.final or self._ruled_stats()
        lines = [line for c in self.cases if c.id in read and (line := margin_line(read[c.id]))]
        if len(lines) <= 1:
            return "".join(lines)
        return (f"{len(lines)} cases decided within --runs auto's {round(100 * DELTA, 6):g}-point margin: their 95% "
                "intervals still reach past their thresholds (the report says each)")

    def corrected_line(self) -> str:
        """'≈ judge-corrected: alpha 48% (6–80%), …' for the status line; "" when nothing is corrected."""
        found = [(c.id, s.corrected, s.threshold) for c in self.cases if (s := self.stats(c)).corrected is not None]
        if not found:
            return ""
        shown = ", ".join(f"{cid} {pct_beside(f.rate, t)} ({interval_beside(f.lo, f.hi, t)})" for cid, f, t in found[:4])
        return "≈ corrected for the judge's measured error: " + shown + (", …" if len(found) > 4 else "")
