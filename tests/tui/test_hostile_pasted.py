"""Raw controls put into the TUI's Inputs (tests/tui/test_hostile_text.py has what the screens show of others'
text). A key typed with a control character (ctrl+g is BEL; ESC is the escape key) never lands in an Input — Textual
inserts printable characters only — but a terminal's bracketed paste hands the focused field its text as it is: a
line copied from an agent's log with its colour codes, a BEL, a bidi override. Before, an Input drew them raw to the
terminal (ESC [31m recoloured the screen) and the editor saved them into case.yaml. The real app at 80x24 and wide,
the paste posted as Textual's terminal driver posts it: nothing crashes, nothing raw is drawn, a notification says
what was done, and what is saved (a case's title, a session's label) is the text the field shows."""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TextArea

from scarbook.cases.io import load_case
from scarbook.tui.app import PASTE_CLEANED, make_app
from scarbook.tui.screens.import_scar import ImportScreen
from scarbook.tui.screens.live import LiveScreen
from tests.helpers.tui_fixtures import editor_ready, library_loaded, save_done, screen_text, wait_until
from tests.tui.test_hostile_text import SIZES, assert_inert, evaluated, hostile, judge_server  # noqa: F401
from tests.tui.test_launch_plan import focus, launch_form

PASTED = "a\x1b[31mred\x1b[0m\x07\u202etxt.exe [b]x[/]"
SHOWN = "ared\\x07\\u202etxt.exe [b]x[/]"  # what the field holds: the colour codes left out, the rest as escapes


async def paste(pilot, text: str) -> None:
    """What Textual's driver does with a bracketed paste: a Paste event to the app, which hands it to the focus."""
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


def said(app) -> list[str]:
    return [n.message for n in app._notifications]


@SIZES
async def test_the_library_filter_takes_typed_controls_never_and_pasted_ones_as_shown(evaluated, size):
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("slash", "ctrl+g", "x")
        field = app.screen.query_one("#filter", Input)
        assert field.value == "x"
        await paste(pilot, PASTED)
        assert field.value == "x" + SHOWN
        assert said(app) == [PASTE_CLEANED]
        assert_inert(app, "the library filtered by a pasted line")


@SIZES
async def test_a_pasted_title_is_saved_as_the_editor_shows_it(evaluated, size):
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        app.screen.query_one("#case-title", Input).focus()
        await pilot.press("end", "ctrl+u")
        await paste(pilot, PASTED)
        assert_inert(app, "the editor, a title pasted")
        await pilot.press("ctrl+s")
        await save_done(pilot)
    assert load_case(evaluated / "cases" / "c").title == SHOWN


async def test_a_task_pasted_with_a_terminals_carriage_returns_keeps_its_lines(evaluated):
    """A terminal pastes each newline as CR: the task keeps its lines (a lone CR is no control to show), unsaid."""
    app = make_app(evaluated)
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        task = app.screen.query_one("#task", TextArea)
        task.focus()
        task.clear()  # (the case's own task out of the way: the paste is the task)
        await paste(pilot, "first line\rsecond line\r\nthird")
        assert said(app) == []
        await pilot.press("ctrl+s")
        await save_done(pilot)
    assert load_case(evaluated / "cases" / "c").task == "first line\nsecond line\nthird"


@SIZES
async def test_a_pasted_label_runs_a_session_labelled_as_shown_and_the_live_screen_draws_it_inert(evaluated, size):
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await launch_form(pilot)
        await focus(pilot, "label")
        await paste(pilot, PASTED)
        assert_inert(app, "the launch form, a label pasted")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        live = app.screen.live
        await wait_until(pilot, lambda: live.done, timeout=120, what="the session to end")
        await pilot.pause()
        assert live.info.label == SHOWN
        assert_inert(app, "the live screen", shows=(f"session [{SHOWN}]",))


@SIZES
async def test_a_pasted_case_id_on_the_import_screen_is_refused_saying_why(evaluated, size):
    app = make_app(evaluated)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("v")
        await wait_until(pilot, lambda: getattr(app.screen, "loaded", False), what="the review")
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, ImportScreen) and app.screen.transcript is not None,
                         what="the import screen on the run's transcript")
        app.screen.query_one("#import-id", Input).focus()
        await pilot.press("ctrl+shift+a", "backspace")
        await paste(pilot, PASTED)
        await pilot.press("enter")
        await pilot.pause()
        assert_inert(app, "the import screen, an id pasted")
        assert (f"not created: case id {SHOWN!r} is not valid: use lowercase letters, digits, '-' and '_', starting "
                "with a letter or digit") in " ".join(screen_text(app).split())
    assert sorted(p.name for p in (evaluated / "cases").iterdir()) == ["c", "j"]
