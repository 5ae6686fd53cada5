"""The judge-cost estimate in one place (issue 32.4): `scarbook eval --dry-run` and the TUI's launch
screen price one plan alike — both from history's judge tokens per call (the launch screen ignored
history, so one plan showed two prices)."""

from __future__ import annotations

import re

from click.testing import CliRunner
from textual.widgets import Input

from scarbook.cli import main as cli_main
from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo, Usage
from scarbook.project import Project
from scarbook.run.plan import SessionSite
from scarbook.session.estimate import estimate_plan, price
from scarbook.tui.app import make_app
from scarbook.tui.screens.launch import LaunchScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    add_judged_case,
    fast_demo,
    library_loaded,
    plain,
    project_root,
    wait_until,
)

KEY = {"ANTHROPIC_API_KEY": "sk-test"}


def _judged_history(root) -> None:
    """A past session whose judge read 40,000 tokens a call on judged-summary: far from the rough guess."""
    history = History(root / "workspaces")
    info = SessionInfo(id="20261201-000001-000a", started_at="2026-12-01T09:00:00+00:00",
                       case_ids=["judged-summary"], runs_per_case=2, judge_model="claude-sonnet-4-6")
    history.start_session(info)
    for k in (1, 2):
        history.record_run(RunRecord(info.id, "judged-summary", k, "pass", "", judge_calls=1,
                                     judge_usage=Usage(input_tokens=40_000, output_tokens=2_000)))
    info.state = "finished"
    history.finish_session(info)


async def test_dry_run_and_launch_screen_show_one_price_for_one_plan(project_root) -> None:
    add_judged_case(project_root)
    _judged_history(project_root)
    cli = CliRunner().invoke(cli_main, ["-C", str(project_root), "eval", "--runs", "4", "--dry-run"], env=KEY)
    assert cli.exit_code == 0, cli.output
    cli_price = re.search(r"judge: at most \d+ calls, about (\$[0-9.]+) online", cli.output)[1]

    app = make_app(project_root, judge_env=KEY)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        runs = app.screen.query_one("#runs", Input)
        await pilot.press(*["backspace"] * len(runs.value), "4")  # the runs field has the focus; scope: all
        await wait_until(pilot, lambda: "about $" in plain(app.screen.query_one("#estimate")), what="the price")
        shown = plain(app.screen.query_one("#estimate"))
    assert " × 4" in shown
    tui_price = re.search(r"about (\$[0-9.]+)\)", shown)[1]
    assert tui_price == cli_price
    project = Project.discover(project_root)
    guessed = estimate_plan(SessionSite.of(project), list(project.load_cases().cases), 4, history={}).judge
    assert price(guessed.cost_usd) != cli_price  # history moved the price: a face ignoring it would differ
