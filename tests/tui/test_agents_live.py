"""A against B from the TUI, by keys (issue 36): the launch form ticks two named agents, the session runs
them in blocks, and the live screen shows a strip per agent per case, the candidate's difference bar
against the margin, and the decision once reached — "worse" where the candidate (60%) trails the
baseline (90%). At 140x45 and at 80x24."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, DataTable, OptionList, Static

from scarbook.tui.app import make_app
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.live import LiveScreen
from scarbook.tui.screens.review import ReviewScreen
from scarbook.tui.screens.session_table import SessionTableScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.cli.test_eval_agents import AGENT, CASE, CONFIG
from tests.conftest import run_cli
from tests.helpers.tui_fixtures import SIZE, library_loaded, live_screen_caught_up, review_loaded, wait_until
from tests.tui.test_launch_plan import focus, launch_form


@pytest.fixture
def compare_root(tmp_path):
    root = tmp_path / "proj"
    (root / "cases").mkdir(parents=True)
    script = root / "agent.sh"
    script.write_text(AGENT)
    script.chmod(0o755)
    (root / "scarbook.yaml").write_text(CONFIG)
    for cid in ("alpha", "beta"):
        (root / "cases" / cid).mkdir()
        (root / "cases" / cid / "case.yaml").write_text(CASE.format(cid=cid))
    return root


def _row(table: DataTable, key: str) -> list[str]:
    return [str(cell) for cell in table.get_row(key)]


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_two_agents_from_the_launch_form_to_the_decision(compare_root, size) -> None:
    app = make_app(compare_root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await launch_form(pilot)
        await pilot.press("ctrl+u", "4", "0")
        for name in ("base", "cand"):
            await focus(pilot, f"agent-{name}")
            await pilot.press("space")
        assert [b.value for b in app.screen.query(".agent").results(Checkbox)] == [True, True, False]
        estimate = str(app.screen.query_one("#estimate", Static).render())
        assert "160 runs: 2 cases × 40 × 2 agents (baseline base)" in estimate
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        live = app.screen.live
        assert live.agent_names == ["base", "cand"]
        await wait_until(pilot, lambda: live.done, timeout=120, what="the session to end")
        await live_screen_caught_up(pilot)
        table = app.screen.query_one("#live-table", DataTable)
        assert table.row_count == 4  # a row per case and agent
        columns = [str(c.label) for c in table.columns.values()]
        assert columns[:2] == ["case", "agent"] and {"rate", "decision", "−100 ┊ +100 pts"} <= set(columns)
        if size == SIZE:
            assert columns == ["case", "agent", "runs", "pass/n", "rate", "diff [95% CI]", "−100 ┊ +100 pts", "decision"]
            assert _row(table, "alpha\x1fcand")[columns.index("diff [95% CI]")] == "-30 [-47, -11]"
        base, cand = _row(table, "alpha\x1fbase"), _row(table, "alpha\x1fcand")
        assert base[:2] == ["alpha", "base"] and cand[:2] == ["", "cand"]
        assert "90%" in base and "60%" in cand
        assert cand[columns.index("decision")] == "WORSE" and base[columns.index("decision")] == "baseline"
        bar = cand[columns.index("−100 ┊ +100 pts")]
        assert "●" in bar and "┊" in bar and bar.index("●") < bar.index("┊")  # the difference sits left of 0
        if "runs" in columns:  # the strip per agent per case, filled in: 40 runs, the newest 14 shown
            assert len(cand[columns.index("runs")]) == 14
        assert str(live.info.state) == "finished"
        status = str(app.screen.query_one("#live-status", Static).render())
        assert "\ncand: -30 points on the mean of 2 cases (undecided), " in status and "× the time" in status
        await pilot.press("v")  # the run review of the highlighted case says whose each run is
        review = await review_loaded(pilot)
        prompts = [str(o.prompt) for o in review.query_one(OptionList).options]
        assert len(prompts) == 80 and sum(" cand " in p for p in prompts) == 40 and sum(" base " in p for p in prompts) == 40


async def test_one_agent_ticked_runs_that_agent_alone(compare_root) -> None:
    app = make_app(compare_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await launch_form(pilot)
        await pilot.press("ctrl+u", "1", "0")
        await focus(pilot, "agent-cand")
        await pilot.press("space")
        assert "20 runs: 2 cases × 10" in str(app.screen.query_one("#estimate", Static).render())
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        live = app.screen.live
        await wait_until(pilot, lambda: live.done, timeout=60, what="the session to end")
        assert live.agent_names == [] and live.info.agent == "cand: command: ./agent.sh 6"
        assert all(r.agent == "" for rs in live.runs.values() for r in rs) and live.finished_runs == 20


@pytest.fixture
def compared_root(compare_root):
    """compare_root with one `eval alpha --agents base,cand --runs 40` session (90% against 60%)."""
    result = run_cli(compare_root, "eval", "alpha", "--agents", "base,cand", "--runs", "40", "-q")
    assert result.exit_code == 1, result.stdout + result.stderr
    return compare_root


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_compared_session_opens_as_a_row_per_case_and_agent(compared_root, size) -> None:
    """The sessions screen opens a session of several agents as the report prints it: a row per case and
    agent with that agent's runs alone, the candidate's difference and decision; Enter reviews the case."""
    app = make_app(compared_root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 1,
                         what="the sessions list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session table")
        table = app.screen.query_one("#session-table", DataTable)
        assert table.row_count == 2
        base, cand = _row(table, "alpha\x1fbase"), _row(table, "alpha\x1fcand")
        assert base[:5] == ["alpha", "base", "36/40", "0", "90%"] and base[6:8] == ["", "baseline"]
        assert cand[:5] == ["", "cand", "24/40", "0", "60%"] and cand[6:8] == ["-30 [-47, -11]", "WORSE"]
        assert set(base[8]) == {"✓", "✗"} and len(base[8]) == 20  # its own runs: 9 of every 10 blocks pass
        assert base[8].count("✗") == 2 and cand[8].count("✗") == 8
        assert "exit code 1" in str(app.screen.query_one("#sessions-help", Static).render())
        await pilot.press("down", "enter")  # the candidate's row reviews the case
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        review = await review_loaded(pilot)
        assert len(review.runs) == 80
