"""The live fold of a session of several agents (issue 36): each agent's numbers as runs finish, the call
of a candidate only once it is reached (a look of --runs auto, or the session's end), and at the end the
same comparison the report prints."""

from __future__ import annotations

from scarbook.config import Config
from scarbook.models import Case, RunRecord, RunStatus, SessionInfo, SessionState
from scarbook.models.session_parts import AgentEntry
from scarbook.run.events import CaseDecided, RunFinished, SessionFinished, SessionStarted
from scarbook.views.live_state import LiveSession

AGENTS = [AgentEntry("base", "command", label="command: ./a"), AgentEntry("cand", "command")]


def _run(k: int, agent: str, ok: bool) -> RunRecord:
    return RunRecord("s1", "alpha", k, RunStatus.PASS if ok else RunStatus.FAIL, "", agent=agent)


def test_the_live_comparison_fills_in_and_calls_only_once_reached() -> None:
    info = SessionInfo(id="s1", runs_per_case=40, case_ids=["alpha"], agents=AGENTS)
    live = LiveSession([Case(id="alpha", title="", task="t")], 20, Config())
    live.apply(SessionStarted(info, planned_runs=40))
    assert live.agent_names == ["base", "cand"]
    for b in range(20):  # base passes every run, cand none
        live.apply(RunFinished(_run(2 * b + 1, "base", True)))
        live.apply(RunFinished(_run(2 * b + 2, "cand", False)))
    versus = live.versus()
    assert versus is not None
    assert (versus.stat("base", "alpha").passes, versus.stat("cand", "alpha").fails) == (20, 20)
    row = versus.comparison.row("alpha", "cand")
    assert row is not None and row.diff == -1.0
    assert live.call_of("alpha", "cand") == ""  # a fixed-N session decides at its end, not before
    live.apply(CaseDecided("s1", "alpha", "worse", 40, candidate="cand"))  # a look of --runs auto
    assert live.call_of("alpha", "cand") == "worse" and live.decided == {}
    live.apply(SessionFinished(SessionInfo(id="s1", runs_per_case=40, case_ids=["alpha"], agents=AGENTS,
                                           state=SessionState.FINISHED)))
    assert live.final_versus is not None and live.call_of("alpha", "cand") == "worse"
    assert live.final_versus.comparison.inferior[0].case_id == "alpha"
