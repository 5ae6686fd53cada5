"""The TUI launches sessions through the same prepare_session as `scarbook eval` (issue 12):
a configuration mistake is shown before the first run, and skipped judge checks give no verdict."""

from __future__ import annotations

import pytest

from scarbook.run.outcome import exit_code
from scarbook.tui.app import make_app
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.screens.live import LiveScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    add_judged_case,
    calls_on_ui_thread,
    fast_demo,
    gate,
    library_loaded,
    live_screen_caught_up,
    project_root,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


async def _run_modal(pilot) -> None:
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, LaunchScreen), what="the launch modal")
    await pilot.press("ctrl+r")


def judged_alone(root, server, script: str, settings: str) -> None:
    """The judged case alone in the project, its agent `sh -c SCRIPT`, its judge the loopback `server`."""
    import json

    from tests.helpers.judge_server import JUDGE_TIMEOUT_S

    add_judged_case(root)
    for case in (root / "cases").iterdir():
        if case.name != "judged-summary":
            (case / "case.yaml").unlink()
    (root / "scarbook.yaml").write_text(
        f"agent: {{type: command, argv: [sh, -c, '{script}']}}\n{settings}"
        f"judge: {{base_url: {json.dumps(server.url)}, max_retries: 0, timeout_s: {JUDGE_TIMEOUT_S}}}\n")


async def test_a_missing_agent_program_is_shown_before_any_run_and_nothing_starts(project_root):
    (project_root / "scarbook.yaml").write_text("agent: {type: command, argv: [./no-such-agent, '{task}']}\n")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await _run_modal(pilot)
        # the session is prepared on a thread: the library is back at once, the refusal comes when it is done
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen) and app._notifications,
                         what="back to the library, the refusal said")
        told = [(n.title, n.message, n.severity) for n in app._notifications]
        assert told == [("cannot start the session", "agent command not found: './no-such-agent' (agent.argv in "
                         "scarbook.yaml) — install it, fix the path, or make the file executable", "error")]
        assert app.live is None and not isinstance(app.screen, LiveScreen)
    history = project_root / "workspaces" / "history"
    assert not history.exists() or not any(history.iterdir())  # no session, no failed runs


async def test_without_an_api_key_judged_runs_are_unjudged_and_never_green(project_root):
    add_judged_case(project_root)
    for case in (project_root / "cases").iterdir():  # only the judged case
        if case.name != "judged-summary":
            (case / "case.yaml").unlink()
    (project_root / "scarbook.yaml").write_text(
        "agent: {type: command, argv: [sh, -c, 'echo done > summary.md']}\nruns: 2\n")
    app = make_app(project_root, judge_env={})
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await _run_modal(pilot)
        await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the session to end")
        live = app.live
        runs = live.runs["judged-summary"]
        assert [r.status for r in runs] == ["unjudged", "unjudged"]
        assert runs[0].reason == "no verdict: rule checks passed, 1 judge check skipped (no API key in $ANTHROPIC_API_KEY)"
        stats = live.stats(live.cases[0])
        assert stats.rate is None and stats.unjudged == 2 and stats.meets_threshold is None
        assert live.info.partial and exit_code(live.info, [stats]) == 3
        # issue 26.12: the live row shows no fraction ("0/0" read as a rate) and no rate: the unjudged count
        table = app.screen.query_one("#live-table")

        def row() -> list[str]:
            return [str(table.get_cell("judged-summary", k)) for k in ("count", "rate", "ci")]

        # the table is redrawn on the app's next tick after the session ends: under load that is later than done
        await wait_until(pilot, lambda: row() == ["2 unj", "–", "–"], what="the live row: 2 unj, –, –")


async def test_a_rejected_judge_key_aborts_the_tui_session_once_with_the_same_counts_as_history(project_root):
    from scarbook.project import Project
    from tests.helpers.judge_server import JudgeServer, status_reply

    server = JudgeServer().start()
    try:
        server.default = status_reply(401, "invalid x-api-key")
        judged_alone(project_root, server, "sleep 0.2; echo done > summary.md", "runs: 6\nconcurrency: 3\n")
        app = make_app(project_root, judge_env={"ANTHROPIC_API_KEY": "sk-bad"})
        async with app.run_test(size=SIZE) as pilot:
            await library_loaded(pilot)
            await _run_modal(pilot)
            await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the session to end")
            live = app.live
            assert live.info.state == "aborted"
            assert live.abort_message.startswith("session aborted: ") and "(HTTP 401)" in live.abort_message
            shown = live.runs["judged-summary"]
            assert shown and all(r.status == "error" for r in shown)
        recorded = Project.discover(project_root).history.runs(live.info.id)
        assert sorted(r.k for r in recorded) == sorted(r.k for r in shown)
    finally:
        server.stop()


async def test_a_judged_tui_session_reads_the_calibration_once(project_root, monkeypatch):
    """Issue 32.4: the launch prepares through session/prepare.py, which reads the judge's calibration; the
    live screen is handed that reading instead of reading calibration.json and history again in its worker."""
    import scarbook.tui.screens.session_table
    import scarbook.views.library_rows  # noqa: F401  (the library reads it for its own rows: not counted here)
    from scarbook.history import judge_truth
    from scarbook.session import prepare
    from tests.helpers.judge_server import JudgeServer, tool_reply

    reads: list[str] = []

    def counted(history, workspaces_dir, settings, cases=None):
        reads.append(",".join(sorted(cases or ())))
        return real(history, workspaces_dir, settings, cases)

    real = judge_truth.calibration_for
    monkeypatch.setattr(judge_truth, "calibration_for", counted)
    monkeypatch.setattr(prepare, "calibration_for", counted)
    server = JudgeServer().start()
    try:
        server.default = tool_reply([("PASS", "names it"), ("PASS", "no such claim"), ("PASS", "three lines")])
        judged_alone(project_root, server, "echo done > summary.md", "runs: 1\n")
        app = make_app(project_root, judge_env={"ANTHROPIC_API_KEY": "sk-test"})
        async with app.run_test(size=SIZE) as pilot:
            await library_loaded(pilot)
            await _run_modal(pilot)
            await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the session to end")
            assert [r.status for r in app.live.runs["judged-summary"]] == ["pass"]
            assert app.live.calibration is not None and app.live.calibration.reason.startswith("not calibrated")
        assert reads == ["judged-summary"]
    finally:
        server.stop()


@pytest.mark.parametrize("judge_env", [{"ANTHROPIC_API_KEY": "sk-test"}, {}], ids=["judged", "skip-judge"])
async def test_a_tui_launch_reads_the_calibration_off_the_ui_thread(project_root, monkeypatch, judge_env):
    """A launch prepares its session (session/prepare.py: history's calibration of the judge, the preflight) on a
    thread, judged or not (without a key the launch skips the judge): the UI's loop keeps taking keys meanwhile."""
    from scarbook.session import prepare
    from tests.helpers.judge_server import JudgeServer, tool_reply

    on_ui_thread = calls_on_ui_thread(monkeypatch, prepare, "calibration_for")
    server = JudgeServer().start()
    try:
        server.default = tool_reply([("PASS", "names it"), ("PASS", "no such claim"), ("PASS", "three lines")])
        judged_alone(project_root, server, "echo done > summary.md", "runs: 1\n")
        app = make_app(project_root, judge_env=judge_env)
        async with app.run_test(size=SIZE) as pilot:
            await library_loaded(pilot)
            await _run_modal(pilot)
            await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the session to end")
            assert isinstance(app.screen, LiveScreen)
            assert [r.status for r in app.live.runs["judged-summary"]] == ["pass" if judge_env else "unjudged"]
        assert on_ui_thread == [False]  # read once, on a worker thread
    finally:
        server.stop()


async def test_a_key_typed_while_the_session_is_prepared_waits_for_the_live_screen(project_root, monkeypatch, gate):
    """The preparation runs on a thread (held here by `gate`): `l`, typed just after ctrl+r, is for the live
    screen (back to the library), not for the library still on top while the session is prepared."""
    from scarbook.session import prepare

    real = prepare.calibration_for

    def held(*args, **kwargs):
        gate.hold()
        return real(*args, **kwargs)

    monkeypatch.setattr(prepare, "calibration_for", held)
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        await pilot.press("ctrl+r", "l")
        await wait_until(pilot, lambda: app.preparing and isinstance(app.screen, LibraryScreen), what="preparing")
        gate.set()
        await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the session to end")
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="l to leave the live screen")
        assert not gate.on_ui_thread
        assert [type(s).__name__ for s in app.screen_stack] == ["Screen", "LibraryScreen"]


async def test_the_live_screen_shows_the_gates_decision_when_the_session_ends(project_root):
    """Issue 22: after a fixed-N session the live table's `decided` column holds the gate's decision
    for every case (evidence mode: 8/10 and 9/10 cannot show 80%, so undecided), as the CLI decides."""
    from scarbook.reports.table import build_report

    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        from textual.widgets import Input

        app.screen.query_one("#runs", Input).value = "10"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=120, what="the session")
        live = app.live
        report = build_report(live.info, [r for rs in live.runs.values() for r in rs], {c.id: c for c in live.cases},
                              live.config)
        assert live.gate == {s.case_id: s.gate for s in report.stats}
        assert set(live.gate.values()) == {"undecided"}
        await live_screen_caught_up(pilot)
        table = app.screen.query_one("#live-table")
        column = [str(table.get_cell(case.id, "decided")) for case in live.cases]
        assert column == ["undecided"] * len(live.cases)



@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_judging_session_opened_in_the_tui_says_how_to_collect_it(project_root, size, monkeypatch):
    """An `eval --judge-batch` session whose key the judge rejected while its batch was out is left judging. The
    session screen said only "judging · exit code 3"; the session's note (the CLI's) told its user to run with
    --skip-judge. Now the screen shows the note, which says what collects the verdicts."""
    import json
    import subprocess
    import sys

    from scarbook.tui.screens.session_table import SessionTableScreen
    from scarbook.tui.screens.sessions import SessionsScreen
    from tests.helpers.judge_server import JUDGE_TIMEOUT_S, JudgeServer, tool_reply
    from tests.helpers.tui_fixtures import plain

    server = JudgeServer().start()
    try:
        server.push(*(tool_reply([("PASS", "ok")]) for _ in range(2)))
        server.hold_batches, server.batch_read_status = True, 401
        judged_alone(project_root, server, "echo done > summary.md", "runs: 2\n")
        (project_root / "scarbook.yaml").write_text(
            "agent: {type: command, argv: [sh, -c, 'echo done > summary.md']}\nruns: 2\n"
            f"judge: {{base_url: {json.dumps(server.url)}, max_retries: 0, timeout_s: {JUDGE_TIMEOUT_S}, "
            "batch_poll_s: 0.02}\n")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-revoked")
        stopped = subprocess.run([sys.executable, "-c", "from scarbook.cli import main; main()", "-C", str(project_root),
                                  "eval", "judged-summary", "-q", "--judge-batch", "--no-judge-cache"],
                                 capture_output=True, text=True, timeout=120)
        assert stopped.returncode == 3, stopped.stderr
    finally:
        server.stop()
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 1,
                         what="the sessions list")
        sid = app.screen.sessions[0].id
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session table")
        shown = " ".join(plain(app.screen.query_one("#sessions-help")).split())
        assert f"{sid} · judging · exit code 3" in shown, shown
        assert "the batch waits at the API meanwhile" in shown, shown
        assert f"`scarbook resume {sid}` collects the verdicts and finishes the session" in shown, shown
        assert "--skip-judge" not in shown and "rule checks only" not in shown, shown
