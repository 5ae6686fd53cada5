"""Opening the editor reads its files off the UI thread, and keys typed right after `e` are never lost:
they wait until the form is ready, then act in the order they were typed."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time

import pytest
import yaml
from textual.widgets import Input

from scarbook.tui.app import make_app
from scarbook.tui.screens import editor
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.widgets import seed_files
from tests.helpers.after_paint import drop_after_paint
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    gate,
    library_loaded,
    move_library_cursor,
    plain,
    project_root,
    save_done,
    type_at_once,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = "write-one-line"
TITLE = "Wrote the whole README into tmp.txt and claimed one line"
TYPED = " again"  # after `end`: the title field selects all when it gets focus
KEYS = ["end", "space", "a", "g", "a", "i", "n"]
SLOW_S = 1.0


@pytest.fixture
def slow_disk(monkeypatch):
    """Every file the editor reads while opening (the case, its seed listing, its artifact preview)
    takes SLOW_S more, on whatever thread reads it."""
    def slowed(fn):
        def slow(*args, **kw):
            time.sleep(SLOW_S)
            return fn(*args, **kw)
        return slow
    for module in (editor, seed_files):
        for name in ("load_case", "list_seed", "preview_text"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, slowed(getattr(module, name)))


def saved_title(root) -> str:
    return yaml.safe_load((root / "cases" / CASE / "case.yaml").read_text())["title"]


async def type_after_e_and_save(pilot, root) -> None:
    await library_loaded(pilot)
    await move_library_cursor(pilot, CASE)
    type_at_once(pilot.app, ["e", *KEYS, "ctrl+s"])  # no pause between `e` and the typing
    await wait_until(pilot, lambda: saved_title(root) != TITLE, what="the case to be saved")
    await save_done(pilot)  # the file is written on a thread; the form takes its clean state after
    ed = pilot.app.screen
    assert isinstance(ed, EditorScreen) and not ed.dirty


async def test_keys_typed_right_after_e_are_in_the_saved_case(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await type_after_e_and_save(pilot, project_root)
    assert saved_title(project_root) == TITLE + TYPED


async def test_keys_typed_while_a_slow_disk_reads_the_case_wait_for_the_editor(project_root, slow_disk):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await type_after_e_and_save(pilot, project_root)
    assert saved_title(project_root) == TITLE + TYPED


async def test_the_editor_shows_loading_at_once_and_takes_the_keys_when_ready(project_root, monkeypatch, gate):
    # The case's read is held until the test lets it go (a fixed slow read raced the machine's load: under
    # load, `press` itself took longer than the read): the screen must be there, saying it is loading,
    # while the read has not returned, so the library's loop is not waiting on it.
    release = gate
    load_case = editor.load_case

    def held(*args, **kw):
        release.hold()
        return load_case(*args, **kw)

    monkeypatch.setattr(editor, "load_case", held)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        await pilot.press("e")
        ed = app.screen
        assert isinstance(ed, EditorScreen) and not ed.accepts_keys
        assert plain(ed.query_one("#editor-loading")) == f"loading {CASE}…"
        await pilot.press(*KEYS, "ctrl+s")  # typed while the read is still held: they wait, none is lost
        assert saved_title(project_root) == TITLE
        release.set()
        await wait_until(pilot, lambda: saved_title(project_root) != TITLE, what="the case to be saved")
    assert saved_title(project_root) == TITLE + TYPED


async def test_escape_typed_while_the_case_loads_goes_back_at_once(project_root, slow_disk):
    """Issue 26.17: Escape acts at once while the editor is still loading; the key typed before it was for
    the editor that never opened and is dropped, so there is nothing to ask about and nothing is saved."""
    from scarbook.tui.dialogs.confirm import ConfirmScreen

    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        await pilot.press("e", "x", "escape")
        await wait_until(pilot, lambda: app.screen is lib, what="the library")
        await pilot.pause(0.3)
        assert app.screen is lib and not any(isinstance(s, ConfirmScreen) for s in app.screen_stack)
    assert saved_title(project_root) == TITLE


async def test_a_case_that_cannot_be_read_any_more_says_why_and_escape_goes_back(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        (project_root / "cases" / CASE / "case.yaml").write_text("id: write-one-line\ntask: [unclosed\n")
        await pilot.press("e")
        ed = app.screen
        await wait_until(pilot, lambda: ed.accepts_keys, what="the editor to give up")
        shown = plain(ed.query_one("#editor-loading"))
        assert shown.startswith(f"cannot open the case: {project_root / 'cases' / CASE / 'case.yaml'}")
        assert shown.endswith("\nEscape goes back")
        await pilot.press("ctrl+s", "escape")  # nothing to save; Escape leaves without asking
        await wait_until(pilot, lambda: app.screen is lib, what="the library")
        assert isinstance(app.screen, LibraryScreen)


async def test_keys_held_for_a_screen_that_goes_before_it_is_ready_do_not_stop_later_keys(project_root):
    """A loading screen that is closed without releasing its keys (an error path, a worker that never
    ends) must not leave the queue stuck: the next key typed goes through, with those held before it."""
    from textual.screen import Screen

    from scarbook.tui.screens.help import HelpScreen

    class NeverReady(Screen):
        accepts_keys = False

    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        app.push_screen(NeverReady())
        await wait_until(pilot, lambda: isinstance(app.screen, NeverReady), what="the loading screen")
        type_at_once(app, ["o"])  # held: the screen is not ready
        await wait_until(pilot, lambda: len(app.keys.keys) == 1, what="the key to be held")
        app.pop_screen()  # gone without release()
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), timeout=10, what="the help screen")
        assert not app.keys.keys


async def test_the_save_runs_off_the_ui_thread_and_keys_typed_meanwhile_wait_for_it(project_root, monkeypatch,
                                                                                    gate):
    """Saving writes case.yaml and copies scar and seed files (scarbook.cases.editing) on a thread: while
    a slow disk holds the save, the app keeps its loop, and keys typed meanwhile act after the save, on
    the saved form (they are not lost, and do not land in the case being written)."""
    real = editor.save_form_case

    def gated(*args, **kw):
        gate.hold()
        return real(*args, **kw)

    monkeypatch.setattr(editor, "save_form_case", gated)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        t = time.monotonic()
        await pilot.press(*KEYS, "ctrl+s", "end", "x")
        assert time.monotonic() - t < 5  # the loop was not held by the gated save
        assert ed.saving and saved_title(project_root) == TITLE
        assert ed.query_one("#case-title", Input).value == TITLE + TYPED  # "x" waits for the save
        gate.set()
        await wait_until(pilot, lambda: saved_title(project_root) == TITLE + TYPED, what="the case to be saved")
        await wait_until(pilot, lambda: ed.query_one("#case-title", Input).value == TITLE + TYPED + "x",
                         what="the key typed during the save")
        assert ed.dirty and not ed.saving


@pytest.fixture
def rest_gated(monkeypatch):
    """The part of the form below the first screenful (the check editor) finishes mounting only once the
    test sets the returned event: what the user types meanwhile is seen while the rest is being built.
    (Pilot's press and pause wait for every widget on the screen, the gated one too: while it is closed
    the test types with `type_at_once` and waits with `until`.)"""
    from scarbook.tui.widgets.check_editor import CheckEditor

    gate = asyncio.Event()
    real = CheckEditor.on_mount

    async def gated(self) -> None:
        with contextlib.suppress(TimeoutError):  # a failed test still ends (after `until` gave up)
            await asyncio.wait_for(gate.wait(), 20)
        real(self)

    monkeypatch.setattr(CheckEditor, "on_mount", gated)
    return gate


async def until(condition, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        await asyncio.sleep(0.01)


async def test_keys_typed_right_after_e_land_in_the_title_while_the_rest_of_the_form_is_built(
        project_root, rest_gated):
    """Issue 26.17: the editor takes keys once its first screenful is built, before the rubric, checks
    and seed files below it are. Typing goes into the title at once; Tab (which may go to the part not
    built yet) waits for it, and the keys typed after Tab wait behind it, so each lands in its field;
    Ctrl+S saves the whole form. Before: every key waited for the whole form."""
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        type_at_once(app, ["e", *KEYS, "tab", "y", "ctrl+s"])
        await until(lambda: isinstance(app.screen, EditorScreen) and app.screen.accepts_keys
                    and app.screen.query_one("#case-title", Input).value == TITLE + TYPED,
                    "the typed title while the rest of the form is built")
        ed = app.screen
        assert isinstance(ed, EditorScreen) and not ed.built and ed.focused is ed.query_one("#case-title")
        await until(lambda: ed.query("#checks"), "the rest of the form to be mounting")
        await asyncio.sleep(0.2)
        assert [k.key for k in app.keys.keys] == ["tab", "y", "ctrl+s"]  # they wait for the whole form
        assert ed.query_one("#case-tags", Input).value == "files, false-claim" and not ed.built
        rest_gated.set()
        await wait_until(pilot, lambda: saved_title(project_root) != TITLE, what="the case to be saved")
        await save_done(pilot)
        assert ed.built and ed.query_one("#case-tags", Input).value == "y"  # Tab selected the tags: y replaced them
        assert not ed.dirty
    saved = yaml.safe_load((project_root / "cases" / CASE / "case.yaml").read_text())
    assert (saved["title"], saved["tags"]) == (TITLE + TYPED, ["y"])
    assert [c["type"] for c in saved["checks"]] == ["file_exists", "contains", "line_count", "only_changed"]


async def test_escape_while_the_rest_of_the_form_is_built_asks_about_what_was_typed(project_root, rest_gated):
    """Escape acts at once while the rest of the form is still built: after typing it asks about the
    unsaved change, and Keep editing keeps it (before: Escape left while the editor was not ready and
    the typed key was dropped without asking)."""
    from scarbook.tui.dialogs.confirm import ConfirmScreen

    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        type_at_once(app, ["e", "end", "x", "escape"])
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the question")
        ed = app.screen_stack[-2]
        assert isinstance(ed, EditorScreen) and not ed.built and ed.dirty
        type_at_once(app, ["n"])  # keep editing
        await until(lambda: app.screen is ed, "the editor again")
        await until(lambda: ed.query("#checks"), "the rest of the form to be mounting")
        assert not ed.built
        rest_gated.set()
        await wait_until(pilot, lambda: editor_ready(app), what="the whole form")
        assert ed.query_one("#case-title", Input).value == TITLE + "x" and ed.dirty
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is lib, what="the library")
    assert saved_title(project_root) == TITLE


async def test_the_rest_of_the_form_is_built_when_a_dialog_took_its_request_and_went(project_root, monkeypatch):
    """The first screenful asks for the rest of the form after its paint (`call_after_refresh`). Textual
    hands that callback to the screen on top when it is handled: Escape's "discard changes?" dialog, when
    it came first. Dismissed (`n`, keep editing) before its own next paint, the dialog dropped the
    callback unrun (seen under load: SCARBOOK_TEST_PAINT=1, 2 of 17 runs), and the editor stayed half
    built, holding Tab and Ctrl+S for ever. Here the request is let go only once the dialog is on top, and
    the dialog drops it as a dismissed one does: the editor asks again when it is back on top (before:
    `#checks` never came)."""
    from scarbook.tui.dialogs.confirm import ConfirmScreen

    asked: list = []
    monkeypatch.setattr(editor, "when_keys_handled", lambda _app, callback: asked.append(callback))
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        type_at_once(app, ["e", "end", "x", "escape"])
        await until(lambda: isinstance(app.screen, ConfirmScreen) and asked, "the question")
        ed = app.screen_stack[-2]
        assert isinstance(ed, EditorScreen) and not ed.query("#checks")
        dropped = drop_after_paint(app.screen, EditorScreen._show_rest)  # as when it is dismissed that fast
        asked.pop()()  # the keys were handled: the first screenful asks for the rest, the dialog on top
        await until(lambda: dropped, "the dialog to take the request")
        type_at_once(app, ["n"])  # keep editing
        await until(lambda: app.screen is ed, "the editor again")
        await until(lambda: ed.query("#checks"), "the rest of the form to be mounting")
        await wait_until(pilot, lambda: editor_ready(app), what="the whole form")
        assert ed.query_one("#case-title", Input).value == TITLE + "x" and ed.dirty
        await pilot.press("tab", "ctrl+s")  # the keys that wait for the whole form act
        await wait_until(pilot, lambda: saved_title(project_root) == TITLE + "x", what="the case to be saved")
        await save_done(pilot)


async def test_the_library_read_is_frozen_out_of_the_collectors_full_scans(project_root, monkeypatch):
    """Issue 26.17: a full garbage collection scanned the library's rows (with 1,000 cases ~200,000
    objects) at nearly every `e`, 0.2-0.28 s of the editor's open: once the library is read, alone on
    screen, what is alive is frozen out of the collector's scans (gc.freeze), once per process."""
    from scarbook.tui.screens.library import trends

    gc.unfreeze()  # another test's app may have frozen its own already: as in a new process
    monkeypatch.setattr(trends, "_frozen", False)
    try:
        app = make_app(project_root)
        async with app.run_test(size=SIZE) as pilot:
            lib = await library_loaded(pilot)
            row = lib.rows[0]
            assert gc.get_freeze_count() > 0
            assert not any(o is row for o in gc.get_objects())  # in no generation the collector scans
    finally:
        gc.unfreeze()
