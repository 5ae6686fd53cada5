"""The sessions screen and a session's case table against hostile text (tests/tui/test_hostile_text.py has the other
screens, tests/tui/test_hostile_pasted.py the live screen): a session's label — `eval --label` refuses control
characters but takes markup and a bidi override (a script's branch name), and session.json is within an agent's reach
(isolation: none), so its label and note may hold anything. Before, both screens drew U+202E raw in the label (the
list's column and the whole label under it). The real app driven by keys at 80x24 and wide."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.tui.app import make_app
from scarbook.tui.screens.session_table import SessionTableScreen
from scarbook.tui.screens.sessions import SessionsScreen
from tests.helpers.tui_fixtures import library_loaded, wait_until
from tests.tui.test_hostile_text import HOSTILE, SIZES, assert_inert, hostile, judge_server  # noqa: F401

LABEL = "[bold red]x[/] \u202etxt.exe [@click=app.quit]Q[/]"


@pytest.fixture
def labelled(hostile):  # noqa: F811
    """One session labelled LABEL by `eval --label`; then, as an agent that reaches the history (isolation: none)
    would, its session.json given a label with terminal escapes and a hostile note, its state `judging` (the table
    shows the note then)."""
    result = CliRunner().invoke(main, ["-C", str(hostile), "eval", "-q", "--label", LABEL], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    (path,) = (hostile / "workspaces" / "history").glob("*/session.json")
    doc = json.loads(path.read_text())
    for table in doc.values():  # a TinyDB file: tables of records
        for record in table.values():
            record.update({"label": LABEL + " \x1b[2J\x07\x9b", "state": "judging", "note": "note " + HOSTILE})
    path.write_text(json.dumps(doc))
    return hostile


@SIZES
async def test_sessions_and_a_sessions_table_show_its_label_inert(labelled, size):
    app = make_app(labelled)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == 1,
                         what="the sessions list")
        await pilot.pause()
        assert_inert(app, "the sessions screen", shows=("[bold red]x[/]",))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionTableScreen) and app.screen.loaded,
                         what="the session table")
        await pilot.pause()
        assert_inert(app, "the session table", shows=("[bold red]x[/]", "note [bold red]x[/]"))

