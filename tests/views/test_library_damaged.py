"""A case whose latest runs file could be read only in part is marked "damaged" wherever its rate is
shown (`scarbook list`, the TUI library's notes column and detail line): the rate of the lines that
could be read is never shown as if it were the whole session's."""

from __future__ import annotations

import pytest
from rich.text import Text

from scarbook.history.store import History
from scarbook.tui.app import make_app
from scarbook.views.library_rows import build_rows
from tests.helpers.tui_fixtures import library_loaded, move_library_cursor, plain, raised_notifications  # noqa: F401

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASE = "write-one-line"
LINE4 = ("history file {p} line 4 is not counted: it lacks session_id, case_id, k, status, reason — the runner "
         "never writes that (forged or damaged); delete it to silence this: sed -i '4d' {p}")


@pytest.fixture
def damaged(project):
    """Session `one` of three passing runs; its runs file then gets a line the runner never wrote."""
    project.bundled(agent_seed=7)
    assert project.cli("eval", CASE, "--runs", "3", "-q", "-l", "one").exit_code == 0
    (session,) = History(project.workspaces).sessions()
    runs_file = project.workspaces / "history" / session.id / f"runs-{CASE}.jsonl"
    with open(runs_file, "ab") as fh:
        fh.write(b"{}\n")
    return project, session, runs_file


def test_the_row_of_a_damaged_runs_file_carries_the_damage(damaged) -> None:
    project, session, runs_file = damaged
    rows = {r.key: r for r in build_rows(project.load())}
    assert rows[CASE].damaged == [LINE4.format(p=runs_file)]
    assert len(rows[CASE].runs) == 3
    assert rows["fix-json-config"].damaged == []  # not run: nothing read, nothing damaged


def test_scarbook_list_marks_the_damaged_row(damaged) -> None:
    project, session, runs_file = damaged
    listed = project.cli("list")
    assert (listed.exit_code, listed.stderr) == (0, "history: " + LINE4.format(p=runs_file) + "\n")
    header, *lines = listed.stdout.splitlines()
    row = next(ln for ln in lines if ln.startswith(CASE))
    assert row.split()[1:4] == ["100%", "44–100%", "3/0/0"]
    assert row[header.index("notes"):].split()[0] == "damaged"
    others = [ln for ln in listed.stdout.splitlines()[1:] if not ln.startswith(CASE)]
    assert others and not any("damaged" in ln for ln in others)


async def test_the_library_shows_damaged_in_the_notes_and_says_why_in_the_detail(damaged) -> None:
    project, session, runs_file = damaged
    app = make_app(project.root)
    async with app.run_test(size=(200, 50)) as pilot:
        lib = await library_loaded(pilot)
        await move_library_cursor(pilot, CASE)
        table = lib.query_one("#cases")
        notes = table.get_cell(CASE, "notes")
        assert isinstance(notes, Text) and notes.plain == "damaged"
        assert table.get_cell("fix-json-config", "notes").plain == ""
        rel = runs_file.relative_to(project.root)
        assert (f"damaged: the rate counts only the 3 runs that could be read in session {session.id} — "
                + LINE4.format(p=rel)) in plain(lib.query_one("#detail")).splitlines()


def test_a_cases_folder_that_cannot_be_listed_is_one_row_named_after_it(project) -> None:
    """cases/load_cases says a cases folder closed to the user as its problem (tests/cases/test_io.py); the library
    lists it as the row `cases` with that error, not under the project folder's name as a case's would be."""
    from scarbook.cases.io import CaseSet
    from scarbook.errors import CaseError

    opened = project.load()
    problem = CaseError(opened.cases_dir, "cannot list the cases folder: Permission denied", fix="make it readable")
    (row,) = build_rows(opened, CaseSet(problems=[problem]))
    assert (row.key, row.problem) == ("cases", problem)


VERIFY_DAMAGED = ("history file {p} is damaged ({why}); the other sessions are unaffected — move it aside to silence "
                  "this: mv {p} {p}.damaged")


@pytest.mark.parametrize(("text", "why"), [
    ("garbage", "Expecting value: line 1 column 1"),
    ('{"_default": {"1": {"case_id": "write-one-line"}}}', "it is not scarbook's verification record"),
])
async def test_a_damaged_verify_json_is_said_and_the_library_still_opens(project, text, why) -> None:
    """A verify.json that is not what `scarbook verify` writes stopped `scarbook list` (exit 2, no table) and
    crashed the TUI as it opened (the library's read raised HistoryError in its worker). The cases are listed,
    the file named with its fix, and no scar badge is shown rather than a wrong one."""
    project.bundled()
    verify = project.workspaces / "history" / "verify.json"
    verify.parent.mkdir(parents=True)
    verify.write_text(text)
    said = VERIFY_DAMAGED.format(p=verify, why=why)
    listed = project.cli("list")
    assert (listed.exit_code, listed.stderr) == (0, f"history: {said}\n")
    assert [ln.split()[0] for ln in listed.stdout.splitlines()[1:]] == [
        "fix-json-config", "rename-function", "review-api-claims", "write-one-line"]
    app = make_app(project.root)
    raised = raised_notifications(app)
    async with app.run_test(size=(80, 24)) as pilot:
        lib = await library_loaded(pilot)
        assert [r.key for r in lib.rows] == ["fix-json-config", "rename-function", "review-api-claims",
                                             "write-one-line"]
        assert all(r.badge == "" for r in lib.rows)
        await pilot.press("down")
        assert app.is_running and said in [n.message for n in raised]
