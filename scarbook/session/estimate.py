"""What a plan will cost before anything runs: `scarbook eval --dry-run` and the TUI's launch screen
print this one estimate, so one plan shows one price on either face.

The judge's price per call comes from history's mean judge tokens per call of each case when it has
judged runs of it (re-priced with today's table), else a rough count (judge/estimate.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scarbook.models import Case, Usage
from scarbook.run.plan import SessionSite

# Loaded where a plan needs them (`eval --dry-run` of rule-checked cases at a fixed run count needs none): the
# judge's estimate with a judged case, the statistics under --runs auto
if TYPE_CHECKING:
    from scarbook.history.store import History
    from scarbook.judge.estimate import JudgeEstimate

JudgeHistory = dict[str, tuple[Usage, int]]  # case id -> (mean judge tokens per call, judged runs read)


def read_judge_history(history: History) -> JudgeHistory:
    """History's judge tokens per call of each case (reads every session: the TUI does it on a thread, once)."""
    from scarbook.judge.estimate import judge_tokens_by_case

    return judge_tokens_by_case(history.iter_all_runs())


@dataclass(frozen=True)
class PlanEstimate:
    cases: list[Case]
    runs: int  # per case; adaptive: the cap
    adaptive: bool = False
    fewest: int = 0  # adaptive: the fewest runs after which every case could have stopped
    judge: JudgeEstimate | None = None  # None: no judged case, or the judge is skipped
    judged: int = 0  # cases with llm_judge checks
    agents: int = 1  # a session of several agents (eval --agents) runs each case `runs` times per agent

    @property
    def agent_runs(self) -> int:
        return self.runs * len(self.cases) * self.agents


def estimate_plan(site: SessionSite, cases: list[Case], runs: int, *, skip_judge: bool = False,
                  adaptive: bool = False, history: JudgeHistory | None = None, agents: int = 1) -> PlanEstimate:
    """Runs and judge calls (at most) and their price; `history`: read_judge_history(site.history), when the
    caller read it already (else it is read here). `agents`: how many agents each case runs for (their
    first look under --runs auto is 10 blocks of one run each)."""
    judged = [c for c in cases if c.judge_checks]
    if adaptive and agents > 1:
        from scarbook.stats.head_to_head import COMPARE_FIRST_LOOK

        fewest = min(COMPARE_FIRST_LOOK, runs) * agents * len(cases)
    else:
        fewest = sum(fewest_adaptive_runs(c, site.config.threshold, runs) for c in cases) if adaptive else 0
    judge = None
    if judged and not skip_judge:
        from scarbook.judge.estimate import estimate_judge_calls

        past = read_judge_history(site.history) if history is None else history
        judge = estimate_judge_calls(judged, runs * agents, (), site.config.judge, past=past)
    return PlanEstimate(cases, runs, adaptive, fewest, judge, len(judged), agents)


def fewest_adaptive_runs(case: Case, default_threshold: float, cap: int) -> int:
    """The fewest runs after which the adaptive rule can stop this case (all passes or all fails)."""
    from scarbook.stats.rates import effective_threshold
    from scarbook.stats.sequential import SequentialRule

    rule = SequentialRule(effective_threshold(case, default_threshold), max_runs=cap)
    return next((n for n in range(1, cap + 1) if rule.decide(n, 0) or rule.decide(0, n)), cap)


def price(usd: float) -> str:
    """A judge price as both faces print it."""
    return f"${usd:.4f}"
