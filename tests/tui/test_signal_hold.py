"""The TUI's cancel is scarbook's own shutdown too: a run whose agent died of a SIGTERM nobody is known to have sent
waits 2 s before it is recorded (run/agent_signals.py), and a cancel confirmed within them cuts it as it cuts every
running run — not recorded, the session cancelled (resume runs it again). Without the cancel it is the agent's
fail (agent-killed). The real app driven by Pilot at 80x24 and wide, a real agent process; each step waits for a
condition (the agent's process reaped, the session done), not for time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.live import LiveScreen
from tests.helpers.tui_fixtures import SIZE, library_loaded, live_screen_caught_up, plain, wait_until

pytestmark = pytest.mark.needs_proc


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / "cases" / "c").mkdir(parents=True)
    pid = root / "agent.pid"
    script = f"echo $$ > {pid}.tmp && mv {pid}.tmp {pid}; kill -TERM $$"
    (root / "scarbook.yaml").write_text(f"agent: {{type: command, argv: {json.dumps(['sh', '-c', script])}}}\n"
                                        "isolation: none\nretry_infra: 1\n")
    (root / "cases" / "c" / "case.yaml").write_text("id: c\ntask: t\nchecks: [{type: file_exists, path: out.txt}]\n")
    return root, pid


def _reaped(pid: Path) -> bool:
    """The agent wrote its pid, died, and scarbook reaped it (its /proc entry is gone)."""
    return pid.is_file() and not Path(f"/proc/{pid.read_text().strip()}").exists()


async def _launch_one_run(pilot) -> None:
    await library_loaded(pilot)
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LaunchScreen), what="the launch modal")
    pilot.app.screen.query_one("#runs", Input).value = "1"
    await pilot.pause()
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LiveScreen), what="the live screen")


@pytest.mark.parametrize("size", [(80, 24), SIZE], ids=["80x24", "wide"])
async def test_a_cancel_just_after_the_agent_died_of_a_sigterm_cuts_its_run(tmp_path, size) -> None:
    root, pid = _project(tmp_path)
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await _launch_one_run(pilot)
        live = app.live
        await wait_until(pilot, lambda: _reaped(pid), timeout=60, what="the agent to die and be reaped")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the cancel question")
        await pilot.press("y")
        await wait_until(pilot, lambda: live.done, timeout=60, what="the session to stop")
        await live_screen_caught_up(pilot)
        assert live.info.state == "cancelled" and live.finished_runs == 0
        assert plain(app.screen.query_one("#live-status")) == ("session [unlabelled] cancelled — Enter reviews a "
                                                              "case's runs, Escape goes back")
    history = Project.discover(root).history
    (info,) = history.sessions()
    assert info.state == "cancelled" and list(history.runs(info.id)) == []


async def test_without_a_cancel_the_run_is_the_agents_fail(tmp_path) -> None:
    root, pid = _project(tmp_path)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _launch_one_run(pilot)
        live = app.live
        await wait_until(pilot, lambda: live.done, timeout=60, what="the session to finish")
        await live_screen_caught_up(pilot)
        (run,) = live.runs["c"]
        assert (run.status, run.cause and run.cause.rule) == ("fail", "agent-killed")
        assert run.cause is not None and run.cause.evidence == (
            "killed by signal 15 (SIGTERM), which neither scarbook nor a shutdown sent (not scarbook's timeout or "
            "cancel, and scarbook was not stopped within 2 s after): the agent's own doing")
        assert plain(app.screen.query_one("#live-status")) == ("session [unlabelled] finished — Enter reviews a "
                                                              "case's runs, Escape goes back")
