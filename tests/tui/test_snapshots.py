"""Snapshot tests (pytest-textual-snapshot) of the library, editor, live distribution and run review.

Frames are deterministic: fixed agent seed, a frozen clock for elapsed time, hand-written history with
fixed ids and dates where a session id or date would show, and no blinking cursors.
Update with: pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest
from textual.widgets import Input, TextArea

from scarbook.history.store import History
from scarbook.models import CheckResult, RunRecord, SessionInfo, WorkspaceDiff
from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.review import ReviewScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    live_screen_caught_up,
    move_library_cursor,
    project_root,
    review_loaded,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

SID = "20260101-090000-abcd"


def freeze_cursors(app) -> None:
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    for widget in app.screen.query(TextArea):
        widget.cursor_blink = False


def write_history(root) -> None:
    """One old session: write-one-line with a failed run whose workspace was kept."""
    project = Project.discover(root)
    history = History(project.workspaces_dir)
    info = SessionInfo(id=SID, label="prompt-v1", started_at="2026-01-01T09:00:00+00:00", runs_per_case=3,
                       case_ids=["write-one-line", "fix-json-config"], fingerprint=project.config.fingerprint(),
                       agent="demo")
    history.start_session(info)
    ws = project.workspaces_dir / SID / "write-one-line" / "2"
    ws.mkdir(parents=True)
    (ws / "README.md").write_text("# tiny-agent\nA tiny agent.\n")
    (ws / "tmp.txt").write_text("# tiny-agent\nA tiny agent.\n")
    (ws.parent / "2.output.txt").write_text("Done — tmp.txt contains the first line.\n")
    checks = [CheckResult("file_exists", "pass", "tmp.txt exists", 0),
              CheckResult("contains", "pass", "tmp.txt contains '# tiny-agent'", 1),
              CheckResult("line_count", "fail", "tmp.txt has 2 lines, expected exactly 1", 2),
              CheckResult("only_changed", "skipped", "not run: an earlier check failed", 3)]
    for k, status in ((1, "pass"), (2, "fail"), (3, "pass")):
        history.record_run(RunRecord(
            session_id=SID, case_id="write-one-line", k=k, status=status, duration_s=1.5,
            reason="all checks passed" if status == "pass" else "check 3 (line_count): tmp.txt has 2 lines, expected exactly 1",
            checks=checks if status == "fail" else [], workspace=str(ws if k == 2 else ws.parent / str(k)),
            workspace_kept=k == 2, diff=WorkspaceDiff(created=["tmp.txt"]), started_at=info.started_at))
    for k in (1, 2, 3):
        history.record_run(RunRecord(session_id=SID, case_id="fix-json-config", k=k,
                                     status="error" if k == 3 else "pass", reason="judge unreachable" if k == 3 else "ok",
                                     started_at=info.started_at, workspace_kept=False))
    history.finish_session(info)


def test_library_snapshot(project_root, snap_compare):
    write_history(project_root)
    app = make_app(project_root)

    async def ready(pilot):
        await library_loaded(pilot)
        freeze_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_editor_snapshot(project_root, snap_compare):
    app = make_app(project_root)

    async def ready(pilot):
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await pilot.pause()
        freeze_cursors(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_live_distribution_snapshot_after_completion(project_root, snap_compare):
    app = make_app(project_root, agent_seed=7, demo_delay=0, clock=lambda: 0.0)

    async def ready(pilot):
        from textual.widgets import Input

        await library_loaded(pilot)
        await pilot.press("r")
        await pilot.pause()
        app.screen.query_one("#runs", Input).value = "10"
        app.screen.query_one("#label", Input).value = "snapshot"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=120, what="the session")
        # the plan's "cannot decide" toast lives 12 s of wall time, which a loaded machine's session outlasts (CI
        # drew it without the toast): the picture is taken without toasts, its text is checked in test_launch_plan
        app.clear_notifications()
        await live_screen_caught_up(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_run_review_snapshot(project_root, snap_compare):
    write_history(project_root)
    app = make_app(project_root)

    async def ready(pilot):
        await library_loaded(pilot)
        app.push_screen(ReviewScreen(SID, "write-one-line"))
        await review_loaded(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
