"""A session of several agents, read back: each agent's numbers per case, the comparison and its gate,
and what each agent cost (issue 36).

    versus = compare_session(info, runs, cfg, calibration, policy)   # None for a session of one agent

The report every command prints (reports/table.build_report) and the live screen (views/live_state)
both call it, as they call run/gate.py for one agent, so the two faces show one comparison. The calls
are stats/head_to_head.py's; under --runs auto (or `undecided: more`) they are made at the session's
recorded looks, in blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from scarbook.config import Config, GatePolicy
from scarbook.history.judge_truth import Calibration
from scarbook.models import MarginCall, RunRecord, RunStatus, SessionInfo, Usage, Versus
from scarbook.run.blocks import by_agent
from scarbook.run.gate import at_worst, case_stats, worst_note
from scarbook.stats.head_to_head import (
    MARGIN,
    AgentsComparison,
    VersusRow,
    compare_agents,
    compare_in_looks,
    counts_of,
)
from scarbook.stats.rates import CaseStats


@dataclass
class AgentCost:
    """What one agent's runs of the session cost: tokens, dollars (its own and its judge's), wall time."""

    runs: int = 0
    agent_usage: Usage = field(default_factory=Usage)
    judge_usage: Usage = field(default_factory=Usage)
    wall_s: float = 0.0

    def add(self, run: RunRecord) -> None:
        self.runs += 1
        self.agent_usage.add(run.agent_usage)
        self.judge_usage.add(run.judge_usage)
        self.wall_s += max(run.duration_s, 0.0)

    @property
    def usd(self) -> float:
        return self.agent_usage.cost_usd + self.judge_usage.cost_usd

    @property
    def usd_per_run(self) -> float | None:
        return self.usd / self.runs if self.runs else None

    @property
    def wall_per_run(self) -> float | None:
        return self.wall_s / self.runs if self.runs else None

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "agent_tokens": self.agent_usage.total_tokens,
                "agent_usd": round(self.agent_usage.cost_usd, 6), "judge_usd": round(self.judge_usage.cost_usd, 6),
                "usd": round(self.usd, 6), "usd_per_run": None if self.usd_per_run is None else round(self.usd_per_run, 6),
                "wall_s_per_run": None if self.wall_per_run is None else round(self.wall_per_run, 3)}


@dataclass
class SessionVersus:
    """Everything a face shows of a session of several agents."""

    names: list[str]  # baseline first
    labels: dict[str, str]  # name -> the agent as it ran ("command: python agent.py {task}")
    stats: dict[str, list[CaseStats]]  # name -> one CaseStats per case, in the session's case order
    comparison: AgentsComparison
    costs: dict[str, AgentCost]

    @property
    def baseline(self) -> str:
        return self.names[0]

    @property
    def candidates(self) -> list[str]:
        return self.names[1:]

    def stat(self, name: str, case_id: str) -> CaseStats | None:
        return next((s for s in self.stats.get(name, []) if s.case_id == case_id), None)

    def cost_ratio(self, name: str) -> tuple[float, str] | None:
        """A candidate's cost against the baseline's, per run: (ratio, what: "the cost" in dollars, else
        "the time" in wall seconds when no dollars were counted); None when neither can be said."""
        mine, base = self.costs.get(name), self.costs.get(self.baseline)
        if mine is None or base is None:
            return None
        if mine.usd_per_run and base.usd_per_run:
            return mine.usd_per_run / base.usd_per_run, "the cost"
        if mine.wall_per_run and base.wall_per_run:
            return mine.wall_per_run / base.wall_per_run, "the time"
        return None

    def all_stats(self) -> list[CaseStats]:
        return [s for name in self.names for s in self.stats.get(name, [])]


def _compare(statuses: Mapping[str, Mapping[str, Sequence[str]]], names: list[str], looks: list[int] | None,
             policy: GatePolicy, margin: float) -> AgentsComparison:
    """The calls on each case's run statuses per agent (`statuses[case][agent]`, k order): at the session's looks if
    it made several (--runs auto), else once on all of them."""
    if looks and len(looks) > 1:
        return compare_in_looks(statuses, names[0], names[1:], looks, margin=margin, alpha=policy.alpha,
                                min_verdicts=policy.min_verdicts)
    counts = {cid: {name: counts_of(st) for name, st in by.items()} for cid, by in statuses.items()}
    return compare_agents(counts, names[0], names[1:], margin=margin, alpha=policy.alpha,
                          min_verdicts=policy.min_verdicts)


def _undecided_at_worst(said: AgentsComparison, worst: AgentsComparison, name: str,
                        worst_runs: list[RunRecord]) -> AgentsComparison:
    """`said` with no verdict on each row `worst` (`name`'s runs at_worst read as fails) decides otherwise: an agent
    that claims infra on the runs it failed, or writes what breaks its judge, must not win (or lose) a comparison
    by it, as it cannot pass the gate by it (run/gate.py)."""
    def checked(row: VersusRow) -> VersusRow:
        other = worst.row(row.case_id, row.candidate)
        if other is None or row.call == Versus.NO_VERDICT or (row.call, row.margin_call) == (other.call,
                                                                                            other.margin_call):
            return row
        said_word, worst_word = ((row.margin_call, other.margin_call) if row.margin_call != other.margin_call else
                                 (row.call, other.call))  # (the margin's call first: the gate's)
        mine = [r for r in worst_runs if row.is_suite or r.case_id == row.case_id]
        return replace(row, call=Versus.NO_VERDICT, margin_call=MarginCall.NO_VERDICT,
                       why=f"{name}: " + worst_note(mine or worst_runs, str(said_word), str(worst_word)))

    return replace(said, rows=[checked(r) for r in said.rows], suites=[checked(r) for r in said.suites])


def agents_of(info: SessionInfo) -> list[str]:
    """The agents a session compared, baseline first; [] for a session of one agent."""
    names = info.agent_names
    return names if len(names) > 1 else []


def compare_session(info: SessionInfo, runs: Iterable[RunRecord], cfg: Config, thresholds: Mapping[str, float],
                    calibration: Calibration | None = None, policy: GatePolicy | None = None) -> SessionVersus | None:
    """The session's comparison, or None for a session of one agent. `thresholds`: each case's."""
    names = agents_of(info)
    if not names:
        return None
    policy = policy or cfg.gate
    margin = policy.compare.margin if policy.compare is not None else MARGIN
    per_case: dict[str, list[RunRecord]] = {cid: [] for cid in info.case_ids}
    for r in runs:
        if r.case_id in per_case:
            per_case[r.case_id].append(r)
    split = {cid: by_agent(rs, names) for cid, rs in per_case.items()}
    stats = {name: [case_stats(cid, split[cid][name], thresholds.get(cid, cfg.threshold), cfg.green, calibration,
                               policy.alpha)
                    for cid in info.case_ids] for name in names}
    looks = list(info.gate.looks) if info.gate is not None else None
    comparison = _compare({cid: {a: [r.status for r in rs] for a, rs in by.items()} for cid, by in split.items()},
                          names, looks, policy, margin)
    for name in names:  # each agent's runs its own doing may have shaped, read at their worst (run/gate.at_worst)
        worst_runs = [r for cid in info.case_ids for r in split[cid][name] if at_worst(r)]
        if worst_runs:
            worst = {cid: {a: [RunStatus.FAIL if a == name and at_worst(r) else r.status for r in rs]
                           for a, rs in by.items()} for cid, by in split.items()}
            comparison = _undecided_at_worst(comparison, _compare(worst, names, looks, policy, margin), name,
                                             worst_runs)
    costs = {name: AgentCost() for name in names}
    for cid in info.case_ids:
        for name in names:
            for r in split[cid][name]:
                costs[name].add(r)
    labels = {a.name: a.label or a.type or "" for a in info.agents}
    return SessionVersus(names, labels, stats, comparison, costs)

