"""Issue 38.5: the library takes keys at its first paint and its rows fill in behind. With 1,000 cases
and a 10,000-run history the first paint came at 2.18 s and keys were taken at 4.01 s: every key waited
for the rows. Now only keys that act on a case wait for them (and then act on them)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Input

from scarbook.tui.app import make_app
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.views import library_rows
from tests.helpers.after_paint import HeldRequests, drop_after_paint
from tests.helpers.tui_fixtures import SIZE, editor_ready, fast_demo, project_root, type_at_once, wait_until  # noqa: F401

pytestmark = pytest.mark.usefixtures("inprocess_demo")


async def test_typing_at_the_first_paint_goes_at_once_and_a_case_key_waits_for_the_rows(project_root,
                                                                                       monkeypatch) -> None:
    rows_may_come = threading.Event()  # the rows are read only once the test lets them
    real = library_rows.build_rows  # the library's worker imports it when it reads (after the first paint)

    def held(project):
        rows_may_come.wait(60)
        return real(project)

    monkeypatch.setattr(library_rows, "build_rows", held)
    app = make_app(project_root)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")
            await pilot.pause()
            library = app.screen
            type_at_once(app, ["slash", "w", "r", "i"])  # "r" is a key of the library: here it is typed text
            await wait_until(pilot, lambda: library.query_one("#filter", Input).value == "wri", timeout=10,
                             what="the text typed at the first paint in the filter")
            assert not library.loaded, "the rows were there already: this test proves nothing"
            type_at_once(app, ["escape", "e"])  # back to the table; edit the highlighted case: needs the rows
            await pilot.pause(0.3)
            assert isinstance(app.screen, LibraryScreen) and not library.loaded
            rows_may_come.set()
            await wait_until(pilot, lambda: editor_ready(app), what="the editor, once the rows came")
            assert isinstance(app.screen, EditorScreen) and app.screen.case.id == "write-one-line"
    finally:
        rows_may_come.set()


async def test_the_rows_are_read_when_help_at_launch_took_the_first_read_and_went(project_root, monkeypatch) -> None:
    """The library asks for its first read after its first paint (`call_after_refresh`). Textual hands
    that callback to the screen on top when it is handled: help, when `?` came first (help never waits
    for the rows), and help left before its next paint drops it unrun. Here the request is let go only
    once help is on top, and help drops it as a screen left that fast does: back on the library, it asks
    again and the rows come (before: "loading cases and history…" for ever)."""
    from scarbook.tui.screens.help import HelpScreen

    requests = HeldRequests(monkeypatch, LibraryScreen)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen) and requests.held, what="the library")
        library = app.screen
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        dropped = drop_after_paint(app.screen, LibraryScreen._first_read)  # as when help is left that fast
        requests.let_go()  # the first read's request, handled with help on top
        await wait_until(pilot, lambda: dropped, what="help to take the request")
        assert not library.loaded
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is library, what="the library again")
        await wait_until(pilot, lambda: library.loaded and library.rows, what="the rows")
