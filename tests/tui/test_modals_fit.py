"""Issue 26.17: the trash dialog and the other modals fit 80 columns; a long id or title is cut with
`…` or wraps inside the dialog, never off its edge. Driven by keys at 80×24."""

from __future__ import annotations

import pytest

from scarbook.tui.app import make_app
from scarbook.tui.dialogs.case_dialogs import RenameCaseScreen, TrashScreen
from scarbook.tui.dialogs.confirm import ConfirmScreen
from tests.helpers.tui_fixtures import fast_demo, library_loaded, move_library_cursor, project_root, wait_until  # noqa: F401

pytestmark = pytest.mark.usefixtures("inprocess_demo")
LONG = "refactor-the-config-loader-keeps-comments-and-flow-lists"  # 56 characters
TITLE = "The loader rewrote the whole YAML file and dropped every comment in it"


def inside(app, dialog_selector: str) -> None:
    """The dialog, and every widget in it, is within the 80×24 screen and within the dialog."""
    dialog = app.screen.query_one(dialog_selector)
    screen = app.screen.region
    assert screen.contains_region(dialog.region), (dialog_selector, dialog.region)
    for widget in dialog.query("*"):
        if widget.display and widget.region.area:
            assert dialog.region.contains_region(widget.region), (widget, widget.region, dialog.region)


async def test_the_delete_rename_trash_and_purge_dialogs_fit_80_columns_with_a_long_id(project_root):
    folder = project_root / "cases" / LONG
    folder.mkdir()
    (folder / "case.yaml").write_text(f"id: {LONG}\ntitle: {TITLE}\ntask: x\n"
                                      "checks:\n  - {type: file_exists, path: out.txt}\n")
    app = make_app(project_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, LONG)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RenameCaseScreen), what="the rename dialog")
        await pilot.pause(0.2)
        inside(app, "#rename-case")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, RenameCaseScreen), what="rename to close")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the delete question")
        await pilot.pause(0.2)
        inside(app, "#confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen)
                         and LONG not in [r.key for r in app.screen.rows], what="the case to go to the trash")
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, TrashScreen) and app.screen.loaded, what="the trash")
        await pilot.pause(0.2)
        inside(app, "#trash")
        table = app.screen.query_one("#trash-table")
        case_cell = str(table.get_row_at(0)[0])
        title_cell = str(table.get_row_at(0)[2])
        assert case_cell == LONG[:23] + "…"  # before: cut at 24 with no sign it was cut
        assert title_cell == "The loader rewrote…"
        widths = sum(col.get_render_width(table) for col in table.columns.values())
        assert widths <= table.content_region.width
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the purge question")
        await pilot.pause(0.2)
        inside(app, "#confirm")
        question = app.screen.query_one("#question")
        assert question.size.height >= 5  # the long name wraps inside the dialog
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TrashScreen), what="back to the trash")
        await pilot.press("q")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrashScreen), what="q to close the trash")
