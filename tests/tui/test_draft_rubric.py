"""Issue 35.1 in the TUI: ctrl+r on the import screen writes the draft and drafts its rubric from the incident —
the dialog says the cost first, Enter asks the judge, the certification table shows each proposal kept or
dropped with why; `a` writes the kept ones and lands in the editor with the items and their figures. From
the editor, ctrl+r drafts the saved case's rubric the same way. The real app driven by key presses, at the
usual size and at 80x24, the real judge SDK against tests/helpers/judge_server.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, OptionList, Static

from scarbook.cases.io import load_case
from scarbook.tui.app import make_app
from scarbook.tui.dialogs.draft_rubric import DraftRubricScreen
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.import_scar import ImportScreen
from tests.cli.test_import_certify import TRANSCRIPT
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    raised_notifications,
    screen_text,
    wait_until,
)
from tests.tui.test_import import open_path, replace_text

pytestmark = pytest.mark.usefixtures("inprocess_demo")

CATCHING = "the answer admits that tmp.txt holds more than one line"
BLIND = "the answer names the file tmp.txt"
DRAFT = {"items": [CATCHING, BLIND], "checks": []}


def project(tmp_path: Path, judge_server, monkeypatch) -> Path:
    root = tmp_path / "proj"
    (root / "cases").mkdir(parents=True)
    (root / "scarbook.yaml").write_text(f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    (tmp_path / "t.json").write_text(json.dumps(TRANSCRIPT))
    return root


def cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]


LINE_COUNT = {"items": [], "checks": [{"type": "line_count", "path": "tmp.txt", "equals": 1}]}


async def drafted_from_the_editor(pilot) -> DraftRubricScreen:
    """The library's first case (c1) in the editor by `e`, then ctrl+r and Enter: the certification table."""
    await library_loaded(pilot)
    await pilot.press("e")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor on c1")
    await pilot.press("ctrl+r")
    return await dialog_drafted(pilot)


def saved_case(root: Path) -> Path:
    """cases/c1: a saved case whose scar wrote two lines to tmp.txt where one was asked."""
    folder = root / "cases" / "c1"
    (folder / "scar").mkdir(parents=True)
    (folder / "scar" / "artifact.txt").write_text("# tiny\nmore\n")
    (folder / "scar" / "good.txt").write_text("# tiny\n")
    (folder / "case.yaml").write_text(
        "id: c1\ntask: Write the first line of README.md to tmp.txt\nchecks:\n  - {type: file_exists, path: tmp.txt}\n"
        "scar:\n  failed_artifact: scar/artifact.txt\n  good_artifact: scar/good.txt\n  artifact_at: tmp.txt\n")
    return folder


async def dialog_drafted(pilot) -> DraftRubricScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DraftRubricScreen), what="the draft dialog")
    dialog = pilot.app.screen
    cost = str(dialog.query_one("#draft-cost", Static).render())
    assert cost.startswith("drafting: 1 judge call to claude-sonnet-4-6, at most $")  # said before any call
    await pilot.press("enter")
    table = dialog.query_one("#draft-table", DataTable)
    # 13 judge calls through the real SDK: 2.5 s on a quiet machine, 20-27 s with 4 workers beside
    # stress-ng --cpu 6, and over 30 s once at load 20+; the bound is a hang detector, under pytest-timeout's 120 s
    await wait_until(pilot, lambda: table.row_count > 0, timeout=90, what="the certification table")
    return dialog


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_ctrl_r_on_the_import_screen_drafts_certifies_and_lands_in_the_editor_with_figures(
        tmp_path, judge_server, monkeypatch, size):
    root = project(tmp_path, judge_server, monkeypatch)
    # the draft; its 2 items judged 3 times on the failed answer and 3 on the good one; then the certification
    # of the case as written (1 item) that the import ends with
    judge_server.push(tool_reply(tool_input=DRAFT, name="propose_rubric"),
                      *[tool_reply([("FAIL", "claims one line"), ("PASS", "names it")])] * 3,
                      *[tool_reply([("PASS", "admits it"), ("PASS", "names it")])] * 3,
                      *[tool_reply([("FAIL", "claims one line")])] * 3, *[tool_reply([("PASS", "admits")])] * 3)
    app = make_app(root)
    raised = raised_notifications(app)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ImportScreen), what="the import screen")
        screen = pilot.app.screen
        await open_path(pilot, tmp_path / "t.json")
        await wait_until(pilot, lambda: screen.transcript is not None, what="the transcript to load")
        await pilot.pause()
        # candidates: 1 the answer, 2 the file tmp.txt (highlighted), 3 the tool's result: 3 is good, 1 failed
        await pilot.press("end", "g", "home")
        await replace_text(pilot, "#import-id", "said-done")
        await pilot.press("ctrl+r")
        dialog = await dialog_drafted(pilot)
        assert cells(dialog.query_one("#draft-table", DataTable)) == [
            ["keep", "item", CATCHING, "catching: fails the failed artifact all 3 times, passes the good one all 3 "
                                       "times"],
            ["drop", "item", BLIND, "blind: passes the failed artifact all 3 times: it does not see the incident"]]
        status = str(dialog.query_one("#draft-status", Static).render())
        assert status.startswith("drafted by claude-sonnet-4-6 for $")
        assert status.endswith(" — a writes 1 item and 0 rule checks into case.yaml; Escape cancels")
        table = dialog.query_one("#draft-table", DataTable)
        assert table.region.height >= 3 and table.region.bottom <= size[1]  # the table is on screen
        await pilot.press("a")
        await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor on the drafted case")
        editor = pilot.app.screen
        assert isinstance(editor, EditorScreen)
        rubric = editor.query_one("#rubric-list", OptionList)
        assert [str(rubric.get_option_at_index(n).prompt) for n in range(rubric.option_count)] == [
            f"1. {CATCHING}\n   catching: fails the failed artifact all 3 times, passes the good one all 3 times"]
        await wait_until(pilot, lambda: "said-done: certification: certified" in [n.title for n in raised],
                         timeout=90, what="the certification of the case as written")
    [judge] = load_case(root / "cases" / "said-done").judge_checks
    assert judge.rubric == [CATCHING]  # the import's TODO item went with the blind one
    assert len(judge_server.requests) == 13


async def test_ctrl_r_in_the_editor_drafts_the_saved_case_and_escape_writes_nothing(
        tmp_path, judge_server, monkeypatch):
    root = project(tmp_path, judge_server, monkeypatch)
    folder = saved_case(root)
    before = (folder / "case.yaml").read_bytes()
    judge_server.push(tool_reply(tool_input=LINE_COUNT, name="propose_rubric"))
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await drafted_from_the_editor(pilot)
        assert cells(dialog.query_one("#draft-table", DataTable))[0] == [
            "keep", "line_count", "{type: line_count, path: 'tmp.txt', equals: 1}",
            "catching: fails the failed artifact, passes the good one"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, EditorScreen), what="back in the editor")
    assert (folder / "case.yaml").read_bytes() == before


async def test_the_draft_uses_the_key_the_app_judges_with(tmp_path, judge_server, monkeypatch):
    """The app's judge key (make_app's judge_env, which launches and certifications read) drafts too: with
    no key in the process, the dialog says the draft's cost, asks the judge with that key and writes the
    catching check."""
    root = project(tmp_path, judge_server, monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    folder = saved_case(root)
    judge_server.push(tool_reply(tool_input=LINE_COUNT, name="propose_rubric"))
    app = make_app(root, judge_env={"ANTHROPIC_API_KEY": "sk-app"})
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await drafted_from_the_editor(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: dialog not in pilot.app.screen_stack, what="the draft written")
    assert {r["headers"].get("authorization") for r in judge_server.requests} == {"Bearer sk-app"}
    assert {"type": "line_count", "path": "tmp.txt", "equals": 1} in [c.to_dict() for c in load_case(folder).checks]


async def draft_failed(pilot) -> tuple[DraftRubricScreen, Static]:
    """The library's first case (c1) in the editor by `e`, ctrl+r, Enter: the dialog once the judge has answered
    with what the draft cannot go on from, and its status line."""
    await library_loaded(pilot)
    await pilot.press("e")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor on c1")
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DraftRubricScreen), what="the draft dialog")
    dialog = pilot.app.screen
    status = dialog.query_one("#draft-status", Static)
    await wait_until(pilot, lambda: dialog.plan is not None, what="the draft's cost")
    await pilot.press("enter")
    await wait_until(pilot, lambda: not dialog.drafting and "drafting…" not in str(status.render()),
                     timeout=60, what="the judge's answer")
    return dialog, status


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_key_the_judge_rejects_says_what_the_dialog_offers_instead(tmp_path, judge_server, monkeypatch, size):
    """A rejected key (401) while drafting from the editor: the dialog says what stopped and what the TUI offers
    instead — the items written by hand in the editor, where Escape goes — not the command line's `--offline`,
    which cannot be typed here. The whole message is on the screen; nothing is written."""
    from tests.helpers.judge_server import status_reply

    root = project(tmp_path, judge_server, monkeypatch)
    folder = saved_case(root)
    before = (folder / "case.yaml").read_bytes()
    judge_server.push(status_reply(401, "invalid x-api-key"))
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        dialog, status = await draft_failed(pilot)
        assert str(status.render()) == (
            f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the draft stopped: "
            "check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in scarbook.yaml) or write the rubric "
            "items by hand in the editor: Escape goes there, and Enter in its rubric input adds each one — nothing "
            "was written")
        await pilot.pause()
        assert status.region.bottom <= size[1] and status.region.height >= 3, status.region  # read whole on screen
        shown = screen_text(app)
        assert f"the judge at {judge_server.url}" in shown and "nothing was written" in shown, shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, EditorScreen), what="back in the editor")
    assert (folder / "case.yaml").read_bytes() == before
    assert len(judge_server.requests) == 1  # the draft's call alone: nothing certified


async def test_a_reply_it_cannot_use_says_draft_again_with_enter_not_offline(tmp_path, judge_server, monkeypatch):
    """A reply without the draft's tool call: the dialog says to draft again with Enter or write the items by hand
    (not the command line's `--offline`); Enter then drafts again, and this time the judge's draft is certified."""
    from tests.helpers.judge_server import text_reply

    root = project(tmp_path, judge_server, monkeypatch)
    saved_case(root)
    judge_server.push(text_reply("Here are some rubric items: ..."),
                      tool_reply(tool_input=LINE_COUNT, name="propose_rubric"))
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog, status = await draft_failed(pilot)
        assert str(status.render()) == (
            "the judge's draft for c1 is not usable: no propose_rubric tool call in the reply — nothing was written; "
            "draft again with Enter, or write the rubric items by hand in the editor: Escape goes there")
        await pilot.press("enter")
        table = dialog.query_one("#draft-table", DataTable)
        await wait_until(pilot, lambda: table.row_count > 0, timeout=90, what="the certification table")
        assert cells(table)[0][:2] == ["keep", "line_count"]
