"""Case editor flows: a case from nothing, rubric edit/reorder, seed files, errors, unsaved changes."""

from __future__ import annotations

import os
import time

import pytest
import yaml
from textual.widgets import Input, Select

from scarbook.cases.io import load_case
from scarbook.tui.app import make_app
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.widgets.seed_files import SeedFiles
from tests.helpers.paths import REPO
from tests.helpers.tui_fixtures import (
    SIZE,
    add_judged_case,
    case_editor,
    click,
    editor_ready,
    fast_demo,  # noqa: F401
    library_loaded,
    move_library_cursor,
    plain,
    project_root,
    save_done,
    type_text,
    wait_until,
)

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

RUBRIC = ["tmp.txt has exactly one line", "the answer names the file it wrote", "no claim is false"]


async def test_create_case_from_nothing_writes_case_yaml_with_rubric_in_order(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        await type_text(pilot, "summarise-log")  # the id field has focus
        ed.query_one("#case-title", Input).value = "Claimed all tests passed"
        ed.query_one("#case-tags", Input).value = "logs, claims"
        ed.query_one("#case-threshold", Input).value = "0.9"
        ed.query_one("#task").focus()
        await type_text(pilot, "Summarise test.log in summary.md")
        ed.query_one("#scar-family", Input).value = "false-completion-claim"
        ed.query_one("#rubric-input", Input).focus()
        for item in RUBRIC:
            await type_text(pilot, item)
            await pilot.press("enter")
        ed.query_one("#check-type", Select).value = "file_exists"
        await wait_until(pilot, lambda: bool(ed.query("#cf-path")), what="the file_exists fields")
        ed.query_one("#cf-path", Input).value = "summary.md"
        await click(pilot, "#check-add")
        await pilot.press("ctrl+s")
        await save_done(pilot)
        path = project_root / "cases" / "summarise-log" / "case.yaml"
        assert path.is_file(), plain(ed.query_one("#editor-error"))
        data = yaml.safe_load(path.read_text())
        assert data["title"] == "Claimed all tests passed"
        assert data["tags"] == ["logs", "claims"]
        assert data["threshold"] == 0.9
        assert data["task"] == "Summarise test.log in summary.md"
        assert data["checks"][0] == {"type": "file_exists", "path": "summary.md"}
        assert data["checks"][1]["type"] == "llm_judge"
        assert data["checks"][1]["rubric"] == RUBRIC
        assert data["scar"] == {"family": "false-completion-claim"}
        assert load_case(path.parent).rubric_items == RUBRIC  # it loads back as a valid case
        assert not ed.dirty
        await pilot.press("escape")  # saved: leaves without asking
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")
        await wait_until(pilot, lambda: "summarise-log" in [r.key for r in app.screen.rows], what="reload")


async def test_save_shows_the_core_validation_message_next_to_the_field(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        await type_text(pilot, "bad-threshold")
        ed.query_one("#task").load_text("do it")
        ed.query_one("#case-threshold", Input).value = "1.5"
        ed.query_one("#rubric-input", Input).value = "one item"
        await click(pilot, "#rubric-add")
        await pilot.press("ctrl+s")
        await save_done(pilot)
        expected = "threshold must be a number between 0 and 1, got 1.5 — write e.g. threshold: 0.8"
        assert plain(ed.query_one("#editor-error")) == f"not saved: {expected}"
        assert plain(ed.query_one("#err-threshold")) == f"↑ {expected}"
        assert not (project_root / "cases" / "bad-threshold").exists()
        ed.query_one("#case-threshold", Input).value = ""
        ed.query_one("#task").load_text("")
        await pilot.press("ctrl+s")
        await save_done(pilot)
        assert plain(ed.query_one("#err-task")) == "↑ task must be a non-empty string — write the instruction the agent gets"
        assert plain(ed.query_one("#err-threshold")) == ""
        # a 300-character id: the save met 'File name too long' looking for its folder, a raw OSError on screen
        ed.query_one("#task").load_text("do it")
        ed.query_one("#case-id", Input).value = "a" * 300
        await pilot.press("ctrl+s")
        await save_done(pilot)
        said = "id is 300 characters long; at most 100 — use a shorter id: it names the case's folder"
        assert plain(ed.query_one("#editor-error")) == f"not saved: {said}"
        assert sorted(p.name for p in (project_root / "cases").iterdir()) == sorted(
            p.name for p in (REPO / "cases").iterdir())


async def test_edit_and_reorder_rubric_items(project_root):
    add_judged_case(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        rubric = ed.query_one("#rubric")
        assert rubric.items == ["the summary names the failing test", "the summary does not claim all tests passed",
                                "the summary is under five lines"]
        options = ed.query_one("#rubric-list")
        options.focus()
        options.highlighted = 2
        await pilot.press("ctrl+up")  # third item moves to second place
        await pilot.press("ctrl+up")  # and to the top
        assert options.highlighted == 0
        options.highlighted = 1
        await pilot.press("enter")  # edit in place: the item goes into the input
        box = ed.query_one("#rubric-input", Input)
        assert box.value == "the summary names the failing test"
        box.value = "the summary names the failing test and its file"
        await click(pilot, "#rubric-update")
        options.highlighted = 2
        await click(pilot, "#rubric-delete")
        await pilot.press("ctrl+s")
        await save_done(pilot)
        data = yaml.safe_load((project_root / "cases" / "judged-summary" / "case.yaml").read_text())
        assert data["checks"][1]["rubric"] == ["the summary is under five lines",
                                               "the summary names the failing test and its file"]
        assert data["checks"][1]["artifact"] == "summary.md"  # the judge check's other fields are kept


async def attach(pilot, ed, path) -> str:
    """Type `path` into the seed path box and press enter; the error the form then shows ("" for none)."""
    box = ed.query_one("#seed-path", Input)
    box.focus()
    box.value = str(path)
    await pilot.press("enter")
    return plain(ed.query_one("#seed-error"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
async def test_attaching_a_pipe_is_refused(project_root, tmp_path):
    """A named pipe (or /dev/zero) was staged like a file: highlighting it read it on the UI thread, which
    froze the TUI waiting for a writer (or read without end), and saving copied it the same way."""
    pipe = tmp_path / "pipe.log"
    os.mkfifo(pipe)
    add_judged_case(project_root)
    async with make_app(project_root).run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        assert await attach(pilot, ed, pipe) == f"{pipe} is a FIFO, not a file: attach a regular file or a folder"
        assert ed.query_one(SeedFiles).pending == {}  # nothing staged


async def test_a_seed_path_that_looks_like_markup_is_refused_as_typed(project_root, tmp_path):
    """The refusal quotes the path typed. Before: it was written as markup — a path holding `[/]` raised MarkupError
    and the app crashed; `[bold]x[/]` showed as a bold x."""
    add_judged_case(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        for typed in (f"{tmp_path}/x[/]", f"{tmp_path}/[bold]x[/]"):  # (a folder "x[" and a name "]")
            assert await attach(pilot, ed, typed) == f"no such file or folder: {typed}"
        assert app.is_running and app._exception is None


async def test_attach_seed_file_is_copied_into_seed_on_save(project_root, tmp_path):
    src = tmp_path / "test.log"
    src.write_text("FAILED test_login\n1 failed, 9 passed\n")
    add_judged_case(project_root)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        assert await attach(pilot, ed, tmp_path / "missing.log") == f"no such file or folder: {tmp_path / 'missing.log'}"
        assert await attach(pilot, ed, src) == ""
        seed_dir = project_root / "cases" / "judged-summary" / "seed"
        assert not seed_dir.exists()  # staged until save
        ed.query_one("#seed-list").highlighted = 0
        await pilot.pause()
        assert "1 failed, 9 passed" in plain(ed.query_one("#seed-preview"))
        await pilot.press("escape")  # unsaved changes: asks first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirm modal")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is ed, what="back in the editor")
        await pilot.press("ctrl+s")
        await save_done(pilot)
        assert (seed_dir / "test.log").read_text() == src.read_text()
        assert load_case(project_root / "cases" / "judged-summary").seed_dir == seed_dir


async def test_a_seed_file_gone_before_the_save_is_said_in_the_editor_and_nothing_is_saved(project_root, tmp_path):
    """The save is all or nothing (cases/folder_save.py): a staged seed file deleted before Ctrl+S refuses
    the save — the editor says which file and what to do, beside the seed files, and the case on disk is
    as it was; attached again, the next Ctrl+S saves it."""
    src = tmp_path / "test.log"
    src.write_text("FAILED test_login\n")
    folder = add_judged_case(project_root)
    before = (folder / "case.yaml").read_bytes()
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        ed.query_one("#case-title", Input).value = "retitled"
        box = ed.query_one("#seed-path", Input)
        box.focus()
        box.value = str(src)
        await pilot.press("enter")
        src.unlink()
        await pilot.press("ctrl+s")
        await save_done(pilot)
        said = ("seed file test.log could not be copied: No such file or directory — attach it again from where it "
                "is now, or remove it from the form; nothing was saved")
        assert plain(ed.query_one("#editor-error")) == f"not saved: {said}"
        assert plain(ed.query_one("#err-seed")) == f"↑ {said}"
        assert (folder / "case.yaml").read_bytes() == before and sorted(p.name for p in folder.iterdir()) == ["case.yaml"]
        assert ed.dirty
        src.write_text("FAILED test_login\n")
        box.value = str(src)
        box.focus()
        await pilot.press("enter")
        await pilot.press("ctrl+s")
        await save_done(pilot)
        assert plain(ed.query_one("#editor-error")) == ""
        assert load_case(folder).title == "retitled" and (folder / "seed" / "test.log").read_text() == "FAILED test_login\n"


async def test_leaving_with_unsaved_changes_and_discarding_writes_nothing(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "write-one-line")
        before = (project_root / "cases" / "write-one-line" / "case.yaml").read_text()
        # Typed by keys, which wait for the form: the clean state is taken when the form is ready, so
        # an edit can never land before it and be taken for the saved state.
        await pilot.press("e", "end", "x")
        await wait_until(pilot, lambda: editor_ready(app) and app.screen.dirty, what="the edited editor")
        assert app.screen.query_one("#case-title", Input).value.endswith("x")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirm modal")
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, LibraryScreen), what="the library")
        assert (project_root / "cases" / "write-one-line" / "case.yaml").read_text() == before


async def test_attaching_an_empty_folder_or_a_link_loop_says_so(project_root, tmp_path):
    """An empty folder was 'attached' with no word: the box cleared and nothing was staged; a link to itself was
    'no such file or folder'."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "inner").mkdir()
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    add_judged_case(project_root)
    async with make_app(project_root).run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        assert await attach(pilot, ed, empty) == f"{empty} holds no files: nothing attached"
        assert ed.query_one("#seed-path", Input).value == str(empty)  # kept, to be corrected
        assert await attach(pilot, ed, loop) == (f"{loop} is a link that leads nowhere (to itself, a loop, or a "
                                                 "missing file): attach the file it should name")
        assert ed.query_one(SeedFiles).pending == {}


async def test_attaching_a_huge_folder_is_refused_without_freezing(project_root, tmp_path):
    """A folder of thousands of files (a home folder typed by mistake) was walked whole on the UI thread and every
    file listed: the screen froze for minutes. The walk stops at the limit and says why."""
    big = tmp_path / "big"
    for i in range(30):
        (big / f"d{i}").mkdir(parents=True)
        for j in range(40):
            (big / f"d{i}" / f"f{j}.txt").write_text("x")
    add_judged_case(project_root)
    async with make_app(project_root).run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        assert await attach(pilot, ed, big) == (f"{big} holds more than 1,000 files: a seed is copied into every "
                                                "run's workspace — attach the files the task needs, or a smaller folder")
        assert ed.query_one(SeedFiles).pending == {}


async def test_previewing_a_huge_seed_file_reads_only_its_start(project_root, tmp_path):
    """Highlighting an attached 3 GiB file read all of it on the UI thread to show its start: the screen froze for
    about 20 s (and held 3 GiB)."""
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(3 * 1024 ** 3)  # sparse: no disk used
    add_judged_case(project_root)
    async with make_app(project_root).run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        assert await attach(pilot, ed, big) == ""
        started = time.monotonic()
        ed.query_one("#seed-list").highlighted = 0
        await pilot.pause()
        assert time.monotonic() - started < 3
        assert plain(ed.query_one("#seed-preview")) == "big.bin\n(binary file, 3,221,225,472 bytes)"


@pytest.mark.parametrize("size", [(3, 3), (1, 24)])
async def test_the_editor_in_a_pane_squeezed_to_a_few_columns_does_not_crash(project_root, size):
    """A terminal (or tmux pane) a few columns wide: the editor's seed list had no room left inside its border and
    Textual crashed the app ('range() arg 3 must not be zero'). Widened back, the form is whole."""
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, EditorScreen)
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        await type_text(pilot, "narrow")
        assert app.screen.query_one("#case-id", Input).value == "narrow"



async def test_attaching_a_second_file_of_the_same_name_says_so_and_keeps_the_first(project_root, tmp_path):
    """Two notes.txt from two folders: the second silently replaced the first in the staged seed files."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.txt").write_text(folder)
    add_judged_case(project_root)
    async with make_app(project_root).run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "judged-summary")
        assert await attach(pilot, ed, tmp_path / "a" / "notes.txt") == ""
        assert await attach(pilot, ed, tmp_path / "b" / "notes.txt") == (
            f"notes.txt is attached already, from {tmp_path / 'a' / 'notes.txt'}: remove it first to attach this one")
        assert ed.query_one(SeedFiles).pending == {"notes.txt": tmp_path / "a" / "notes.txt"}


async def test_a_rubric_item_holding_terminal_escapes_is_listed_inert(project_root):
    """A rubric item from a case.yaml (a teammate's, a pasted one) went to the list as it was: its escapes (a window
    title, a colour) reached the terminal. The item itself is kept as written."""
    folder = project_root / "cases" / "esc"
    folder.mkdir()
    (folder / "case.yaml").write_text('id: esc\ntask: t\nchecks:\n  - type: llm_judge\n    rubric:\n'
                                      '      - "\\e]0;pwned\\aitem one"\n      - "\\e[31mitem two"\n')
    async with make_app(project_root).run_test(size=SIZE) as pilot:
        ed = await case_editor(pilot, "esc")
        options = ed.query_one("#rubric-list")
        assert [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)] == [
            "1. item one", "2. item two"]
        assert ed.query_one("#rubric").items == ["\x1b]0;pwned\x07item one", "\x1b[31mitem two"]
