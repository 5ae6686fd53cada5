"""The sessions screen's table of a past session decides with the judge's calibration the session ran with (as
`scarbook report` does: run/gate.replay_calibration), and says when history's has changed since."""

from __future__ import annotations

from pathlib import Path

import pytest

from scarbook.tui.app import make_app
from scarbook.tui.screens.session_table import SessionTableScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.judge_server import judge_server  # noqa: F401
from tests.helpers.tui_fixtures import SIZE, library_loaded, wait_until
from tests.run.test_report_calibration_replay import CHANGED, project, run_below_then_label  # noqa: F401


@pytest.fixture
def ran(project: Path, judge_server) -> Path:  # noqa: F811
    """The eval run before the app starts (the CLI runs its own event loop)."""
    run_below_then_label(project, judge_server)
    return project


async def test_a_past_sessions_table_decides_with_the_calibration_it_ran_with(ran: Path) -> None:
    app = make_app(ran)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 3,
                         what="the sessions list")
        await pilot.press("home", "enter")  # the newest: the eval's
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session table")
        help_text = str(app.screen.query_one("#sessions-help").render())
        assert "exit code 1" in help_text, help_text  # below, as the runner decided (0 with history's labels now)
        assert CHANGED in help_text, help_text
