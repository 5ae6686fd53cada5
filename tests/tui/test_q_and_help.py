"""Issue 26.14 and 26.17, keys: `q` means the same on every screen (back; on the library, quit), `?`
lists scarbook's own keys before the focused widget's cursor keys, and Escape leaves the editor or the
run review at once while it is still loading. Driven by key presses at 80×24."""

from __future__ import annotations

import io
import threading

import pytest
from rich.console import Console

from scarbook.tui.app import make_app
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.help import HelpScreen
from scarbook.tui.screens.launch import LaunchScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.screens.review import ReviewScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.tui_fixtures import (  # noqa: F401
    Gate,
    fast_demo,
    library_loaded,
    move_library_cursor,
    project_root,
    review_loaded,
    wait_until,
)
from tests.tui.test_snapshots import write_history

pytestmark = pytest.mark.usefixtures("inprocess_demo")
SMALL = (80, 24)


def help_lines(app) -> list[str]:
    console = Console(width=78, record=True, file=io.StringIO())
    console.print(app.screen.table)
    return [" ".join(line.split()) for line in console.export_text().splitlines() if line.strip()]


def on_library(app) -> bool:
    return type(app.screen) is LibraryScreen


async def test_q_goes_back_on_review_sessions_launch_and_quits_on_the_library(project_root):
    """Before: q on the run review did nothing (only the library bound it)."""
    write_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SMALL) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("v")
        await review_loaded(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: on_library(app), what="q to leave the review")
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), what="the sessions")
        await pilot.press("q")
        await wait_until(pilot, lambda: on_library(app), what="q to leave the sessions")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch dialog")
        await wait_until(pilot, lambda: app.focused is not None, what="the form's first focus (the runs field)")
        await pilot.press("tab")  # off the runs field: q typed in a field is text
        await pilot.press("q")
        await wait_until(pilot, lambda: on_library(app), what="q to close the launch dialog")
        assert app.live is None  # closed, not run
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, what="q to quit on the library")


async def test_help_lists_the_apps_own_keys_first_and_says_what_q_means(project_root):
    """Before: on the review the OptionList's cursor keys (Up, Down, Page up…) came before Back/Next failed."""
    write_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SMALL) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        await pilot.press("v")
        await review_loaded(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        lines = help_lines(app)
        assert lines[0] == "keys on the review screen"
        assert lines[1] == "esc / q Back", lines
        assert lines.index("^q Quit") < lines.index("? / F1 this help") < lines.index("moving around")
        assert not [line for line in lines if line.endswith(" Help")]  # once, as "this help"
        cursor = [i for i, line in enumerate(lines) if line in ("↑ Up", "↓ Down", "pgup Page Up")]
        assert cursor and min(cursor) > lines.index("moving around"), lines
        said = str(app.screen.query_one("#help-q").render())
        assert said.startswith("q goes back, like Escape, on every screen and dialog")
        assert "on the library, the first screen, it quits" in said
        await pilot.press("q")  # q closes the help too
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="help to close")


@pytest.fixture
def gated_reads(monkeypatch):
    """The editor's and the review's reads wait for the test (a slow disk, a huge history)."""
    import scarbook.tui.screens.editor as editor
    import scarbook.tui.screens.review as review

    gate = Gate()
    real_case, real_review = editor.load_case, review.load_review

    def slow_case(*a, **kw):
        gate.hold()
        return real_case(*a, **kw)

    def slow_review(*a, **kw):
        gate.hold()
        return real_review(*a, **kw)

    monkeypatch.setattr(editor, "load_case", slow_case)
    monkeypatch.setattr(review, "load_review", slow_review)
    yield gate
    gate.set()


@pytest.mark.parametrize("key", ["e", "v"])
async def test_escape_leaves_at_once_while_the_editor_or_review_is_loading(project_root, gated_reads, key):
    """Before: Escape waited in the key queue until the read finished (here: never, within the test)."""
    write_history(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SMALL) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        opens = EditorScreen if key == "e" else ReviewScreen
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, opens), what="the screen to open")
        assert not app.screen.accepts_keys  # still loading
        await pilot.press("f", "escape")  # f is held for the loading screen; escape is not
        await wait_until(pilot, lambda: on_library(app), what="escape to leave at once")
        assert not app.keys.keys  # the held f went nowhere
        gated_reads.set()
        await pilot.pause(0.3)
        assert on_library(app)
