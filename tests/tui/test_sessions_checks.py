"""Sessions screen (list, open, compare two) and the check editor (add by type, edit, reorder, delete)."""

from __future__ import annotations

import pytest
import yaml
from textual.widgets import Input, Select

from scarbook.tui.app import make_app
from scarbook.tui.screens.compare import CompareScreen
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.session_table import SessionTableScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    click,
    editor_ready,
    fast_demo,
    gate,
    library_loaded,
    move_library_cursor,
    plain,
    project_root,
    review_loaded,
    save_done,
    wait_until,
)
from tests.tui.test_library import record_session

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


async def test_sessions_list_open_and_compare_two(project_root):
    record_session(project_root, "20260101-000000-aaaa", "2026-01-01T00:00:00+00:00", "fp",
                   {"write-one-line": ["pass"] * 10, "fix-json-config": ["pass"] * 9 + ["fail"]})
    record_session(project_root, "20260102-000000-bbbb", "2026-01-02T00:00:00+00:00", "fp",
                   {"write-one-line": ["fail"] * 9 + ["pass"], "fix-json-config": ["pass"] * 9 + ["fail"]})
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 2,
                         what="the sessions list")
        table = app.screen.query_one("#sessions-table")
        assert str(table.get_cell("20260102-000000-bbbb", "figures")) == "10/10/0/0"  # pass/fail/err/unjudged
        assert str(table.get_cell("20260101-000000-aaaa", "started")) == "2026-01-01 00:00"
        await pilot.press("space", "down", "space", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded, what="the comparison")
        cmp = app.screen.query_one("#compare-table")
        assert str(cmp.get_cell("write-one-line", "a")) == "100% (10/10)"
        assert str(cmp.get_cell("write-one-line", "b")) == "10% (1/10)"
        assert str(cmp.get_cell("write-one-line", "diff")) == "-90%"
        assert str(cmp.get_cell("write-one-line", "verdict")) == "regressed"
        assert str(cmp.get_cell("fix-json-config", "verdict")) == "no detectable change"
        await pilot.press("escape")
        await pilot.press("enter")  # open the highlighted (older) session
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded, what="the session table")
        st = app.screen.query_one("#session-table")
        assert str(st.get_cell("fix-json-config", "count")) == "9/10"
        assert str(st.get_cell("fix-json-config", "strip")) == "✓✓✓✓✓✓✓✓✓✗"
        await pilot.press("enter")
        await review_loaded(pilot)
        assert len(app.screen.runs) == 10


async def test_check_editor_add_by_type_edit_reorder_delete(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        checks = ed.query_one("#checks")
        assert [c["type"] for c in checks.checks] == ["file_exists", "contains", "line_count", "only_changed"]
        ed.query_one("#check-type", Select).value = "line_count"
        await wait_until(pilot, lambda: bool(ed.query("#cf-max")), what="line_count's fields")
        # (artifact: a tool call's input, read instead of the file at path)
        assert {w.id for w in ed.query("#check-fields Input")} == {"cf-path", "cf-equals", "cf-min", "cf-max",
                                                                   "cf-artifact"}
        ed.query_one("#cf-path", Input).value = "tmp.txt"
        ed.query_one("#cf-max", Input).value = "3"
        await click(pilot, "#check-add")
        assert checks.checks[-1] == {"type": "line_count", "path": "tmp.txt", "max": 3}
        await click(pilot, "#check-up")  # the new check moves before only_changed
        assert [c["type"] for c in checks.checks][3:] == ["line_count", "only_changed"]
        ed.query_one("#check-list").highlighted = 1  # contains: its fields fill the form
        await wait_until(pilot, lambda: ed.query("#cf-text") and ed.query_one("#cf-text", Input).value == "# tiny-agent",
                         what="the contains check in the form")
        ed.query_one("#cf-text", Input).value = "tiny-agent"
        await click(pilot, "#check-update")
        ed.query_one("#check-list").highlighted = 0
        await pilot.pause()
        await click(pilot, "#check-delete")
        await pilot.press("ctrl+s")
        # the save runs on a thread: read case.yaml once the editor says it is done (beside stress-ng the old
        # case.yaml, its file_exists check still first, was read after a bare pause)
        await save_done(pilot)
        data = yaml.safe_load((project_root / "cases" / "write-one-line" / "case.yaml").read_text())
        assert data["checks"] == [{"type": "contains", "path": "tmp.txt", "text": "tiny-agent"},
                                  {"type": "line_count", "path": "tmp.txt", "equals": 1},
                                  {"type": "line_count", "path": "tmp.txt", "max": 3},
                                  {"type": "only_changed", "paths": ["tmp.txt"]}]
        # a value of the wrong type reaches the core's validation at Update (issue 37.15): its message is shown
        # under the check's fields and the check keeps its value
        ed.query_one("#check-list").highlighted = 1
        await wait_until(pilot, lambda: ed.query("#cf-equals") and ed.query_one("#cf-equals", Input).value == "1",
                         what="the line_count check in the form")
        ed.query_one("#cf-equals", Input).value = "one"
        await click(pilot, "#check-update")
        assert plain(ed.query_one("#check-problem")) == (
            "not updated: line_count.equals must be an integer, got str — write equals as an integer")
        assert checks.checks[1] == {"type": "line_count", "path": "tmp.txt", "equals": 1}


async def test_a_session_opens_with_its_runs_read_off_the_ui_thread_and_keys_typed_meanwhile_act(
        project_root, monkeypatch, gate):
    """h, Enter on a session, then `down` and Enter typed while its runs are still being read (the
    reader held by a gate): the table shows "loading…", the read is not on the UI thread, and once
    the runs are there the two keys open the review of the second case."""
    import threading

    from scarbook.history.store import History
    from scarbook.tui.screens.review import ReviewScreen
    from tests.helpers.tui_fixtures import type_at_once

    record_session(project_root, "20260101-000000-aaaa", "2026-01-01T00:00:00+00:00", "fp",
                   {"write-one-line": ["pass"] * 3, "fix-json-config": ["fail"] * 3})
    threads = []
    real_runs = History.runs

    def gated_runs(self, session_id, *a, **kw):
        if session_id == "20260101-000000-aaaa" and gate_armed:
            threads.append(threading.current_thread() is threading.main_thread())
            gate.hold()
        return real_runs(self, session_id, *a, **kw)

    gate_armed = False
    monkeypatch.setattr(History, "runs", gated_runs)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 1,
                         what="the sessions list")
        gate_armed = True
        type_at_once(app, ["enter", "down", "enter"])
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and threads, what="the read")
        assert threads == [False]  # not the UI thread
        assert plain(app.screen.query_one("#sessions-help")) == "loading…"
        assert len(app.keys.keys) == 2  # down, enter: held for the table
        gate.set()
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review from the held keys")
        await review_loaded(pilot)
        table = app.screen_stack[-2].query_one("#session-table")
        rows = [str(table.get_cell_at((i, 0))) for i in range(table.row_count)]
        assert len(rows) == 2 and app.screen.case_id == rows[1]  # `down` acted before `enter`


async def test_a_case_with_unjudged_runs_shows_no_rate_nor_fraction_in_compare_and_session_table(project_root):
    # Issue 26.12: 9 of 10 runs unjudged (the judge skipped) and one rule fail showed "0% (0/1)" in the
    # compare and "0/1" in the session table: no verdict, no rate (stats.rates.rate_of), no fraction either.
    record_session(project_root, "20260101-000000-aaaa", "2026-01-01T00:00:00+00:00", "fp",
                   {"write-one-line": ["pass"] * 10, "fix-json-config": ["pass"] * 10})
    record_session(project_root, "20260102-000000-bbbb", "2026-01-02T00:00:00+00:00", "fp",
                   {"write-one-line": ["fail"] + ["unjudged"] * 9, "fix-json-config": ["error"] * 10})
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 2,
                         what="the sessions list")
        await pilot.press("space", "down", "space", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded, what="the comparison")
        cmp = app.screen.query_one("#compare-table")
        assert [str(cmp.get_cell("write-one-line", k)) for k in ("a", "b", "diff", "ci", "p", "verdict")] == [
            "100% (10/10)", "– (1 fail, 9 unjudged)", "–", "–", "–", "no detectable change"]
        assert str(cmp.get_cell("fix-json-config", "b")) == "– (no verdict)"  # all ten errored
        assert "mean change per case – ·" in plain(app.screen.query_one("#sessions-help"))
        await pilot.press("escape")
        await pilot.press("up", "enter")  # the newer session (listed first)
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session table")
        st = app.screen.query_one("#session-table")
        assert [str(st.get_cell("write-one-line", k)) for k in ("count", "err", "rate", "ci")] == [
            "1 fail, 9 unjudged", "0", "–", "–"]
        assert [str(st.get_cell("fix-json-config", k)) for k in ("count", "err", "rate")] == ["no verdict", "10", "–"]
