"""The library: invalid cases listed with their error, filter as you type, sort, stale marks, palette."""

from __future__ import annotations

import os
from datetime import UTC

import pytest

from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo
from scarbook.tui.app import make_app
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.launch import LaunchScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    move_library_cursor,
    palette_offers,
    plain,
    project_root,
    type_text,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


def write_invalid_case(root):
    folder = root / "cases" / "broken-case"
    folder.mkdir()
    (folder / "case.yaml").write_text("id: broken-case\ntask: do it\nbogus: 1\nchecks:\n  - {type: file_exists, path: a}\n")
    return folder / "case.yaml"


def record_session(root, sid: str, started_at: str, fingerprint: str, statuses: dict[str, list[str]],
                   state: str = "finished", partial: bool = False) -> None:
    history = History(root / "workspaces")
    info = SessionInfo(id=sid, label="old", started_at=started_at, runs_per_case=max(map(len, statuses.values())),
                       case_ids=list(statuses),
                       fingerprint=fingerprint, agent="demo", state=state, partial=partial)
    history.start_session(info)
    for cid, sts in statuses.items():
        for k, st in enumerate(sts, 1):
            history.record_run(RunRecord(session_id=sid, case_id=cid, k=k, status=st, reason=st,
                                         started_at=started_at))
    history.finish_session(info)


async def test_invalid_case_file_shows_its_error_in_the_library(project_root):
    path = write_invalid_case(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        row = next(r for r in lib.rows if r.key == "broken-case")
        assert row.problem is not None
        table = lib.query_one("#cases")
        assert str(table.get_cell("broken-case", "title")) == "invalid: unknown key 'bogus'"
        await move_library_cursor(pilot, "broken-case")
        expected = (f"{path.relative_to(project_root)}:3: unknown key 'bogus' — a case takes: id, title, task, tags, threshold, "
                    "timeout_s, network, seed, checks, scar")
        assert plain(lib.query_one("#detail")) == expected
        assert len([r for r in lib.rows if r.case]) == 4  # the good cases are all still there
        await pilot.press("e")  # cannot be edited here: says why instead of crashing
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen)


async def test_filter_as_you_type_and_sort_by_column(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await pilot.press("slash")
        await type_text(pilot, "json")
        assert [r.key for r in lib.shown] == ["fix-json-config"]
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await type_text(pilot, "claim")  # matches the scar family and tags too
        assert sorted(r.key for r in lib.shown) == ["review-api-claims", "write-one-line"]
        await pilot.press("escape")
        lib.query_one("#filter").value = ""
        await pilot.pause()
        lib.sort_by("title")
        titles = [r.title.lower() for r in lib.shown]
        assert titles == sorted(titles)
        lib.sort_by("title")  # same column again: reversed
        assert [r.title.lower() for r in lib.shown] == sorted(titles, reverse=True)
        table = lib.query_one("#cases")
        from scarbook.text import cut_words

        assert str(table.get_row_at(0)[1]) == cut_words(lib.shown[0].title, lib.columns["title"])


async def test_stale_mark_for_old_sessions_and_other_configs(project_root):
    from scarbook.project import Project

    current = Project.discover(project_root).config.fingerprint()
    record_session(project_root, "20200101-000000-aaaa", "2020-01-01T00:00:00+00:00", current,
                   {"write-one-line": ["pass", "fail", "pass"]})
    from datetime import datetime
    now = datetime.now(UTC).isoformat(timespec="seconds")
    record_session(project_root, "29990101-000000-bbbb", now, "another-config", {"fix-json-config": ["pass"] * 3})
    app = make_app(project_root)
    async with app.run_test(size=(200, 50)) as pilot:  # wide enough for the latest-runs strip beside the trend
        lib = await library_loaded(pilot)
        rows = {r.key: r for r in lib.rows}
        assert rows["write-one-line"].stale == "older than 7 days"
        assert rows["fix-json-config"].stale == "ran under a different config"
        assert rows["rename-function"].stale == ""
        table = lib.query_one("#cases")
        assert str(table.get_cell("write-one-line", "strip")) == "✓✗✓"
        assert str(table.get_cell("write-one-line", "rate")) == "67%"
        assert str(table.get_cell("write-one-line", "notes")) == "stale"
        assert str(table.get_cell("rename-function", "notes")) == ""


async def test_list_and_the_library_show_the_same_rates_and_marks(project_root):
    """`scarbook list` prints the library's rows: same rate, same marks for a latest session that was
    cancelled, partial (judge skipped) or interrupted (its process died: state left at running)."""
    from datetime import datetime

    from scarbook.project import Project
    from tests.conftest import run_cli

    fp = Project.discover(project_root).config.fingerprint()
    now = datetime.now(UTC).isoformat(timespec="seconds")
    record_session(project_root, "20261101-100000-000aa", now, fp, {"write-one-line": ["pass"] * 3})
    record_session(project_root, "20261101-110000-000bb", now, fp, {"write-one-line": ["pass", "fail"]},
                   state="cancelled")
    record_session(project_root, "20261101-120000-000cc", now, fp, {"fix-json-config": ["pass", "pass"]},
                   partial=True)
    record_session(project_root, "20261101-130000-000dd", now, fp, {"rename-function": ["fail"]}, state="running")
    record_session(project_root, "20261101-140000-000ee", now, fp, {"review-api-claims": ["pass"]},
                   state="stopped: budget")
    listed = run_cli(project_root, "list")
    cli = {ln.split()[0]: ln.split() for ln in listed.stdout.splitlines()[1:]}
    assert {cid: (row[1], row[7]) for cid, row in cli.items() if len(row) > 7 and row[4:6] == ["just", "now"]} == {
        "write-one-line": ("50%", "cancelled"), "fix-json-config": ("100%", "partial"),
        "rename-function": ("0%", "interrupted"), "review-api-claims": ("100%", "budget-stopped")}
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        table = lib.query_one("#cases")
        shown = {cid: (str(table.get_cell(cid, "rate")).strip(), str(table.get_cell(cid, "notes")))
                 for cid in ("write-one-line", "fix-json-config", "rename-function", "review-api-claims")}
        assert shown == {cid: (row[1], row[7]) for cid, row in cli.items() if cid in shown}
        await move_library_cursor(pilot, "write-one-line")
        assert ("latest session 20261101-110000-000bb is cancelled: its rate covers only what that session ran "
                "and judged") in plain(lib.query_one("#detail"))


async def test_command_palette_jumps_to_a_case_and_runs_it(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "open rename-function")
        await palette_offers(pilot, "open rename-function")
        await pilot.press("enter")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        assert app.screen.case.id == "rename-function"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "run write-one-line")
        await palette_offers(pilot, "run write-one-line")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        assert "selected: write-one-line" in str(app.screen.query_one("#scope-selected").label)


async def test_a_damaged_history_file_is_said_in_the_library_once(project_root):
    record_session(project_root, "20261101-100000-000aa", "2026-11-01T10:00:00+00:00", "abc",
                   {"write-one-line": ["pass", "fail", "pass"]})
    runs_file = project_root / "workspaces" / "history" / "20261101-100000-000aa" / "runs-write-one-line.jsonl"
    runs_file.unlink()
    os.mkfifo(runs_file)  # reading it must neither hang the library nor crash it
    expected = (f"history file {runs_file} is damaged (it is a FIFO, not a file); the other sessions are "
                f"unaffected — move it aside to silence this: mv {runs_file} {runs_file}.damaged")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        told = [(n.title, n.message, n.severity) for n in app._notifications]
        assert told == [("history", expected, "warning")]
        row = next(r for r in lib.rows if r.key == "write-one-line")
        assert row.runs == [] and row.stats.rate is None  # its only session is unreadable: no rate is made up
        lib.reload()
        await wait_until(pilot, lambda: lib.loaded, what="the reload")
        await pilot.pause(0.2)
        assert len([n for n in app._notifications if n.title == "history"]) == 1


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_the_line_under_the_table_has_the_highlighted_cases_figures_at_any_width(project_root, size):
    # issue 26.14: the README promises the line under the table always has the highlighted case's figures;
    # at 80 columns the rate, interval and runs columns are dropped, and it showed only the task
    from datetime import datetime

    from scarbook.project import Project

    fp = Project.discover(project_root).config.fingerprint()
    now = datetime.now(UTC).isoformat(timespec="seconds")
    record_session(project_root, "20261101-100000-000aa", now, fp,
                   {"write-one-line": ["pass"] * 7 + ["fail", "error", "pass"]})
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        detail = lib.query_one("#detail")
        lines = plain(detail).splitlines()
        assert lines[0].startswith("write-one-line: 89% (8/9), 95% CI 57–98%, threshold 80% · ")
        assert "threshold 80% · 1 error · 10 runs · last run " in lines[0]
        assert lines[1].startswith("task: ")
        # nothing of the figures is cut: the line fits the widget's width or wraps inside its height
        assert detail.content_region.height >= sum(-(-len(ln) // detail.content_region.width) for ln in lines[:2])
        await move_library_cursor(pilot, "fix-json-config")
        assert plain(detail).splitlines()[0] == "fix-json-config: never run"


async def test_trends_read_as_the_app_closes_are_dropped_not_a_crash(project_root):
    """The library's reload worker hands its trends to the UI thread; when the app is closing by then
    (the table already taken down) they are dropped. Before: NoMatches('#cases') failed the worker, and
    the app's exit raised WorkerFailed (tests/tui/test_pipeline's rejected-judge-key test did, in a full run)."""
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await lib.query_one("#cases").remove()  # as the app's shutdown does, before the screen goes
        lib._show_trends(lib.trends, [])
        assert lib.trends_loaded


async def test_rows_read_as_the_app_closes_are_dropped_not_a_crash(project_root):
    """The same for the rows a reload hands over (a save's reload finishing as the app quits: Before,
    NoMatches('#cases') in _refill failed the worker and the app's exit raised WorkerFailed —
    tests/tui/test_open's loading test did, in a full run)."""
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        rows = lib.rows
        await lib.query_one("#cases").remove()  # as the app's shutdown does, before the screen goes
        lib._show_rows(rows, [])
        assert lib.rows is rows and lib.loaded


@pytest.mark.parametrize("days, said", [("1", "older than 1 day"), ("1.5", "older than 1.5 days")])
async def test_the_stale_mark_counts_days_in_english(project_root, days, said):
    """stale_after_days: 1 marked old results "older than 1 days"."""
    import re

    from scarbook.project import Project

    config = project_root / "scarbook.yaml"
    config.write_text(re.sub(r"(?m)^stale_after_days:.*$", f"stale_after_days: {days}", config.read_text()))
    current = Project.discover(project_root).config.fingerprint()
    record_session(project_root, "20200101-000000-aaaa", "2020-01-01T00:00:00+00:00", current,
                   {"write-one-line": ["pass"]})
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        assert next(r for r in lib.rows if r.key == "write-one-line").stale == said
