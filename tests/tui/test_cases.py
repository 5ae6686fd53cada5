"""Case management from the library, by keys: d (delete, after a yes) -> the trash -> T restores;
R renames (a bad id is refused inline, then a good one works); D duplicates; and snapshots of the
dialogs at 80x24."""

from __future__ import annotations

import io
from datetime import UTC

import pytest
from rich.console import Console

from scarbook.cases.io import load_case
from scarbook.cases.trash import list_trash
from scarbook.project import Project
from scarbook.tui.app import make_app
from scarbook.tui.dialogs.case_dialogs import RenameCaseScreen, TrashScreen
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.views.library_rows import build_rows
from tests.helpers.paths import FIXTURES
from tests.helpers.tui_fixtures import SIZE, fast_demo, library_loaded, plain, project_root, type_text, wait_until  # noqa: F401
from tests.tui.test_library import record_session
from tests.tui.test_snapshots import freeze_cursors

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


def keys_of(lib) -> list[str]:
    return [r.key for r in lib.rows]


def cursor_key(lib) -> str | None:
    return lib.current_key()


async def to_row(pilot, lib, case_id: str) -> None:
    """Move the library cursor by arrow keys, as a user does."""
    keys = [r.key for r in lib.shown]
    step = keys.index(case_id) - keys.index(cursor_key(lib))
    await pilot.press(*(["down"] * step if step > 0 else ["up"] * -step))
    await wait_until(pilot, lambda: cursor_key(lib) == case_id, what=f"the cursor on {case_id}")


async def press_and_wait(pilot, key: str, screen: type, what: str):
    """Press `key`, then wait for `screen` on top (the trash: also read)."""
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, screen) and getattr(pilot.app.screen, "loaded", True),
                     what=what)
    return pilot.app.screen


async def delete(pilot, lib, case_id: str) -> None:
    """d on the case, y in the dialog; the case leaves the library."""
    await to_row(pilot, lib, case_id)
    await press_and_wait(pilot, "d", ConfirmScreen, "the confirm dialog")
    await pilot.press("y")
    await wait_until(pilot, lambda: case_id not in keys_of(lib), what=f"{case_id} to leave the library")


async def test_delete_asks_then_moves_to_trash_and_T_restores_it(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await to_row(pilot, lib, "rename-function")
        await press_and_wait(pilot, "d", ConfirmScreen, "the confirm dialog")
        assert plain(app.screen.query_one("#question")) == (
            "Delete case rename-function?\n\nIts folder moves to the trash (workspaces/.trash/): press T in the "
            "library to restore it. Its runs stay in history.")
        await pilot.press("n")  # No keeps it
        await wait_until(pilot, lambda: app.screen is lib, what="the library")
        assert (project_root / "cases" / "rename-function").is_dir()
        await delete(pilot, lib, "rename-function")
        assert cursor_key(lib) == "review-api-claims"  # the row that took its place
        assert not (project_root / "cases" / "rename-function").exists()
        assert [e.case_id for e in list_trash(Project.at(project_root))] == ["rename-function"]

        await press_and_wait(pilot, "T", TrashScreen, "the trash")
        table = app.screen.query_one("#trash-table")
        assert [str(table.get_row_at(0)[0]), str(table.get_row_at(0)[2])] == [
            "rename-function", "Renamed the function…"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is lib and "rename-function" in keys_of(lib),
                         what="the case back in the library")
        await wait_until(pilot, lambda: cursor_key(lib) == "rename-function", what="the cursor on the restored case")
        assert load_case(project_root / "cases" / "rename-function").id == "rename-function"
        assert list_trash(Project.at(project_root)) == []


async def test_restore_refused_while_the_id_is_taken_says_how_to_fix_it(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await delete(pilot, lib, "write-one-line")
        assert cursor_key(lib) == "review-api-claims"  # the last row went: the one above it
        await to_row(pilot, lib, "fix-json-config")
        await press_and_wait(pilot, "R", RenameCaseScreen, "the rename dialog")
        await pilot.press(*["backspace"] * 20)
        await type_text(pilot, "write-one-line")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "write-one-line" in keys_of(lib) and "fix-json-config" not in keys_of(lib),
                         what="the rename")
        await press_and_wait(pilot, "T", TrashScreen, "the trash")
        await pilot.press("enter")
        taken = project_root / "cases" / "write-one-line"
        await wait_until(pilot, lambda: any(f"a case named 'write-one-line' exists again ({taken})" in str(n.message)
                                            for n in app._notifications), what="the refusal")
        assert [e.case_id for e in list_trash(Project.at(project_root))] == ["write-one-line"]


async def test_rename_shows_a_bad_id_inline_then_takes_a_good_one(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await to_row(pilot, lib, "write-one-line")
        await press_and_wait(pilot, "R", RenameCaseScreen, "the rename dialog")
        dialog = app.screen
        error = dialog.query_one("#rename-error")
        await pilot.press(*["backspace"] * len("write-one-line"))
        await type_text(pilot, "One Line")
        await pilot.press("enter")  # refused: the dialog stays and says why
        await pilot.pause()
        assert app.screen is dialog
        assert plain(error) == ("case id 'One Line' is not valid: use lowercase letters, digits, '-' and '_', "
                                "starting with a letter or digit")
        await pilot.press(*["backspace"] * len("One Line"))
        await type_text(pilot, "fix-json-config")
        await wait_until(pilot, lambda: plain(error).startswith("a case named 'fix-json-config' already exists"),
                         what="the taken id refused as typed")
        await pilot.press(*["backspace"] * len("fix-json-config"))
        await type_text(pilot, "one-line")
        await wait_until(pilot, lambda: plain(error) == "", what="the error to clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "one-line" in keys_of(lib), what="the renamed case")
        await wait_until(pilot, lambda: cursor_key(lib) == "one-line", what="the cursor on it")
        assert "write-one-line" not in keys_of(lib)
        assert load_case(project_root / "cases" / "one-line").id == "one-line"
        assert "renamed from write-one-line on " in plain(lib.query_one("#detail"))


async def test_D_duplicates_and_the_cursor_lands_on_the_copy_and_help_and_palette_list_the_actions(project_root):
    from scarbook.tui.screens.help import HelpScreen

    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await to_row(pilot, lib, "fix-json-config")
        await pilot.press("D")
        await wait_until(pilot, lambda: cursor_key(lib) == "fix-json-config-copy", what="the copy, highlighted")
        copy = load_case(project_root / "cases" / "fix-json-config-copy")
        assert copy.title == "Left a trailing comma in config.json and the service would not start (copy)"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "duplicate case")
        await wait_until(pilot, lambda: any("duplicate case" in str(o.prompt) for o in
                                            app.screen.query("CommandList").first().options
                                            ) if app.screen.query("CommandList") else False,
                         what="the palette to offer it")
        await pilot.press("enter")
        await wait_until(pilot, lambda: cursor_key(lib) == "fix-json-config-copy-2", what="a second copy")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.table)
        text = " ".join(console.export_text().split())
        for key, does in [("d", "Delete case"), ("R", "Rename case"), ("D", "Duplicate case"),
                          ("T", "Restore from trash")]:
            assert f"{key} {does}" in text, (key, text)


# -- snapshots -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialog", ["confirm", "rename", "trash"])
@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_case_dialogs_fit(project_root, snap_compare, dialog, size):
    """Each dialog is whole at 80x24 and centred at 200x50: the delete question names the case and says
    T restores it; the rename dialog shows its inline error; the trash lists a deleted case and says
    how to restore it or delete it for good."""
    from scarbook.cases.trash import trash_case

    if dialog == "trash":
        trash_case(Project.at(project_root), "review-api-claims")
    app = make_app(project_root)

    async def ready(pilot):
        lib = await library_loaded(pilot)
        freeze_cursors(app)
        await pilot.pause(0.3)
        if dialog == "confirm":
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirm dialog")
        elif dialog == "rename":
            await pilot.press("R")
            await wait_until(pilot, lambda: isinstance(app.screen, RenameCaseScreen), what="the rename dialog")
            await type_text(pilot, "/x")
            await wait_until(pilot, lambda: plain(app.screen.query_one("#rename-error")) != "", what="the error")
        else:
            await pilot.press("T")
            await wait_until(pilot, lambda: isinstance(app.screen, TrashScreen) and app.screen.loaded,
                             what="the trash")
            table = app.screen.query_one("#trash-table")
            table.update_cell_at((0, 1), "2026-12-03 15:00")  # the deletion time, fixed for the snapshot
        assert lib.loaded
        freeze_cursors(app)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=ready)


async def test_delete_and_rename_are_refused_while_a_session_runs_the_case(project_root):
    from scarbook.models import SessionInfo

    history = Project.at(project_root).history  # another process's session, still running
    sid = history.new_session_id()
    history.start_session(SessionInfo(id=sid, started_at="2026-12-03T10:00:00+00:00", case_ids=["write-one-line"]))
    try:
        app = make_app(project_root)
        async with app.run_test(size=SIZE) as pilot:
            lib = await library_loaded(pilot)
            await to_row(pilot, lib, "write-one-line")
            await press_and_wait(pilot, "d", ConfirmScreen, "the confirm dialog")
            await pilot.press("y")
            said = (f"case 'write-one-line' is in session {sid}, which is still running — wait for it to finish "
                    "(or cancel it), then try again")
            await wait_until(pilot, lambda: any(str(n.message) == said for n in app._notifications), what="the refusal")
            assert (project_root / "cases" / "write-one-line" / "case.yaml").is_file()
            assert cursor_key(lib) == "write-one-line" and "write-one-line" in keys_of(lib)
    finally:
        info = history.read_session(sid)
        info.state = "finished"
        history.finish_session(info)


def freed_note(cid: str) -> str:
    from datetime import datetime

    day = datetime.now(UTC).strftime("%Y-%m-%d")
    return (f"the id {cid} was freed on {day} (deleted or renamed): the runs recorded under it before then "
            "belong to that case, not this one")


async def test_a_new_case_saved_under_an_id_whose_folder_was_removed_by_hand_starts_with_no_runs(project_root):
    """n, type the id of a case that has runs but whose folder was deleted by hand, save: the library
    shows the new case as never run, with the id's note, not the old case's rate."""
    import shutil

    from textual.widgets import Input

    from scarbook.tui.screens.editor import EditorScreen
    from tests.helpers.tui_fixtures import click

    record_session(project_root, "20261101-100000-000aa", "2026-11-01T10:00:00+00:00", "",
                   {"write-one-line": ["pass", "pass"]})  # another case's runs, under this id
    shutil.rmtree(project_root / "cases" / "write-one-line")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await press_and_wait(pilot, "n", EditorScreen, "the editor")
        ed = app.screen
        await type_text(pilot, "write-one-line")  # the id field has focus
        ed.query_one("#task").load_text("write out.txt")
        ed.query_one("#rubric-input", Input).value = "out.txt exists"
        await click(pilot, "#rubric-add")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (project_root / "cases" / "write-one-line" / "case.yaml").is_file(),
                         what="the case saved")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is lib and "write-one-line" in keys_of(lib), what="the new row")
        row = next(r for r in lib.rows if r.key == "write-one-line")
        assert (row.runs, row.session_id, row.history_note) == ([], "", freed_note("write-one-line"))


async def test_a_draft_imported_under_an_id_whose_folder_was_removed_by_hand_starts_with_no_runs(project_root):
    import shutil
    from pathlib import Path

    from tests.tui.test_import import open_import, replace_text

    record_session(project_root, "20261101-100000-000aa", "2026-11-01T10:00:00+00:00", "",
                   {"write-one-line": ["pass", "pass"]})  # another case's runs, under this id
    shutil.rmtree(project_root / "cases" / "write-one-line")
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        screen, results = await open_import(pilot, FIXTURES / "transcripts"
                                            / "claude_code_session.jsonl")
        await replace_text(pilot, "#import-id", "write-one-line")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results == ["write-one-line"], what="the draft written")
    row = {r.key: r for r in build_rows(Project.at(project_root))}["write-one-line"]
    assert (row.runs, row.session_id, row.history_note) == ([], "", freed_note("write-one-line"))


async def test_compare_leaves_out_an_id_given_to_another_case_between_the_two_sessions(project_root):
    """h, pick two sessions, c: write-one-line was deleted (and filed again) between them, so its
    100% -> 0% is two different cases, not a regression: not a row, and the help line says why."""
    from scarbook.cases.lineage import CaseIdLog, IdEntry
    from scarbook.tui.screens.compare import CompareScreen
    from scarbook.tui.screens.sessions import SessionsScreen

    for sid, day, wol in [("20260101-000000-aaaa", "01", "pass"), ("20260102-000000-bbbb", "02", "fail")]:
        record_session(project_root, sid, f"2026-01-{day}T00:00:00+00:00", "fp",
                       {"write-one-line": [wol] * 10, "fix-json-config": ["pass"] * 9 + ["fail"]})
    CaseIdLog(project_root / "workspaces").update({"write-one-line": IdEntry("2026-01-01T12:00:00+00:00")})
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 2,
                         what="the sessions list")
        await pilot.press("space", "down", "space", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.loaded, what="the comparison")
        table = app.screen.query_one("#compare-table")
        assert [str(table.get_cell_at((i, 0))) for i in range(table.row_count)] == ["fix-json-config"]
        assert plain(app.screen.query_one("#sessions-help")).splitlines()[1:] == [
            "not compared (the id was given to another case between the two sessions: renamed, deleted or reused — "
            "`scarbook list` says which): write-one-line"]


async def test_x_in_the_trash_deletes_an_entry_for_good_after_a_yes(project_root):
    from scarbook.cases.trash import trash_case

    kept = trash_case(Project.at(project_root), "review-api-claims")
    gone = trash_case(Project.at(project_root), "write-one-line")  # the newest: first in the list
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        trash = await press_and_wait(pilot, "T", TrashScreen, "the trash")
        assert [e.name for e in trash.entries] == [gone.name, kept.name]
        assert plain(trash.query_one("#trash-help")) == ("Enter restores the highlighted case to cases/; x deletes it "
                                                         "for good; Esc closes")
        await press_and_wait(pilot, "x", ConfirmScreen, "the confirm dialog")
        assert plain(app.screen.query_one("#question")) == (
            f"Delete write-one-line for good?\n\nIts folder in the trash ({gone.name}) is deleted and cannot be "
            "restored. Runs recorded under its id stay in history.")
        await pilot.press("n")  # Keep
        await wait_until(pilot, lambda: app.screen is trash, what="back in the trash")
        assert gone.path.is_dir()
        await press_and_wait(pilot, "x", ConfirmScreen, "the confirm dialog")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is trash and [e.name for e in trash.entries] == [kept.name],
                         what="the entry to leave the trash")
        assert not gone.path.exists() and kept.path.is_dir()
        assert any(str(n.message) == f"deleted {gone.name} for good" for n in app._notifications)


async def test_a_planted_link_in_the_trash_is_refused_on_enter(project_root, tmp_path):
    import os

    outside = tmp_path / "outside"
    outside.mkdir()
    (project_root / "workspaces" / ".trash").mkdir(parents=True)
    link = project_root / "workspaces" / ".trash" / "evil--20261203T150000Z"
    os.symlink(outside, link)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        trash = await press_and_wait(pilot, "T", TrashScreen, "the trash")
        assert str(trash.query_one("#trash-table").get_cell_at((0, 2))) == "(a symlink)"
        await pilot.press("enter")
        said = (f"{link} is a symlink to {outside}, not a case scarbook deleted (planted?): it is never restored — "
                "`scarbook case purge evil--20261203T150000Z` removes the link only")
        await wait_until(pilot, lambda: any(str(n.message) == said for n in app._notifications), what="the refusal")
        assert "evil" not in keys_of(lib) and not (project_root / "cases" / "evil").exists()


def test_d_then_y_on_a_read_only_cases_folder_says_why_and_keeps_the_case(project_root):
    """Issue 37.4: d then y on a case in a read-only cases/ killed the app with a traceback
    (cases/admin.py _move_dir). The app runs in a process of its own, where cases/ is read-only."""
    import json
    import sys

    from tests.helpers.paths import REPO
    from tests.helpers.read_only import READ_ONLY_WHY, read_only
    from tests.helpers.read_only import run as run_program

    cases = project_root / "cases"
    before = sorted(p.name for p in cases.iterdir())
    out = run_program(read_only(cases, [sys.executable, "-m", "tests.helpers.read_only", str(project_root)]), cwd=REPO)
    try:
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        seen = json.loads(out.stdout.splitlines()[-1])
        case = seen["case"]
        assert seen["said"] == [["not done", f"cannot delete {case}: cannot create files in {cases}: {READ_ONLY_WHY} "
                                             f"— make {cases} a writable folder, or point cases_dir in scarbook.yaml "
                                             "at one; nothing was changed"]]
        assert case in seen["rows"] and seen["running"]
        assert sorted(p.name for p in cases.iterdir()) == before
        assert not (project_root / "workspaces" / ".trash").exists() or list_trash(Project.at(project_root)) == []
    finally:
        cases.chmod(0o755)
