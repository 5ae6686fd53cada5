"""issue 27 (4) in the TUI: after ctrl+s changes a rubric, the case editor offers to rejudge the last
session with it; accepting runs `scarbook rejudge`'s pipeline on the live screen (judge calls only).

The judge is the real anthropic SDK against tests/helpers/judge_server.py; the agent of the project at
rejudge time would leave ran.txt if it ever started."""

from __future__ import annotations

import json
import uuid

import pytest
from textual.widgets import Input

from scarbook.tui.app import make_app
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.screens.editor import EditorScreen
from scarbook.tui.screens.live import LiveScreen
from tests.conftest import run_cli
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.tui_fixtures import (
    SIZE,
    calls_on_ui_thread,
    click,
    editor_ready,
    library_loaded,
    move_library_cursor,
    save_done,
    wait_until,
)
from tests.tools.test_rejudge import AGENT, CASE, exploding_agent, write_config


@pytest.fixture
def judged_once(tmp_path, judge_server, monkeypatch):
    """A project whose session `before-edit` judged three runs of judge-me (artifacts kept), and whose
    agent now would leave ran.txt; the judge now answers FAIL to the first item."""
    module = f"rejudge_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(AGENT)
    write_config(tmp_path, judge_server.url, f"agent: {{type: python, function: '{module}:act'}}")
    (tmp_path / "cases" / "judge-me").mkdir(parents=True)
    (tmp_path / "cases" / "judge-me" / "case.yaml").write_text(CASE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    judge_server.default = tool_reply([("PASS", "one line"), ("PASS", "title")])
    source = run_cli(tmp_path, "eval", "-q", "-l", "before-edit", "--json", str(tmp_path / "source.json"))
    assert source.exit_code == 0, source.output
    assert len(judge_server.requests) == 3
    write_config(tmp_path, judge_server.url, exploding_agent(tmp_path))
    judge_server.default = tool_reply([("FAIL", "it ends with a newline"), ("PASS", "title")])
    return json.loads((tmp_path / "source.json").read_text())["session"]["id"]


async def test_a_saved_rubric_change_offers_the_rejudge_and_y_runs_it_without_the_agent(tmp_path, judge_server,
                                                                                       judged_once):
    sid = judged_once
    app = make_app(tmp_path, judge_env={"ANTHROPIC_API_KEY": "sk-e2e"})
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "judge-me")
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        ed.query_one("#case-title", Input).value = "A new title"
        await pilot.press("ctrl+s")  # the rubric did not change: nothing is offered
        await save_done(pilot)
        assert isinstance(app.screen, EditorScreen)
        for wording, answer in (("tmp.txt holds one line", "n"), ("tmp.txt holds one line and no trailing newline", "y")):
            options = ed.query_one("#rubric-list")
            options.focus()
            options.highlighted = 0
            await pilot.press("enter")  # the first item into the input
            ed.query_one("#rubric-input", Input).value = wording
            await click(pilot, "#rubric-update")
            await pilot.press("ctrl+s")
            await save_done(pilot)
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the rejudge offer")
            if answer == "n":  # not now: back in the editor, nothing started
                await pilot.press("n")
                await wait_until(pilot, lambda: app.screen is ed, what="the editor again")
                assert app.live is None and len(judge_server.requests) == 3
        question = str(app.screen.question)
        assert question == (f"The rubric of judge-me changed. Rejudge the last session, {sid} (before-edit), with "
                            "this rubric? 3 kept artifacts graded again: judge calls only, no agent runs.")
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the rejudge to finish")
        info = app.live.info
        assert info.label == "rejudge of before-edit" and info.rerun_of.session == sid
        assert info.rerun_of.rejudge is True and info.rerun_of.regraded == 3
        assert len(judge_server.requests) == 6  # three judge calls under the new rubric
        assert "no trailing newline" in json.dumps(judge_server.bodies()[-1])
        assert not (tmp_path / "ran.txt").exists()  # the agent never started
    runs = [json.loads(line) for p in (tmp_path / "workspaces" / "history" / info.id).glob("*.jsonl")
            for line in p.read_text().splitlines()]
    assert sorted((r["k"], r["status"]) for r in runs) == [(1, "fail"), (2, "fail"), (3, "fail")]


async def test_d_deletes_an_item_and_the_offered_rejudge_moves_the_cases_rate(tmp_path, judge_server, judged_once,
                                                                              monkeypatch):
    """Issue 35.4: an item deleted on the rubric list by key (d), ctrl+s, y to the offer: the last session is
    graded again under the edited rubric and the case's rate moves from 3/3 to 0/3 (the judge now fails the
    item that is left). The rejudge is prepared on a thread (the pick from history, the judge's calibration),
    as an eval's launch is: accepting the offer does not hold the UI's loop while history is read."""
    from scarbook.tools import rejudge

    on_ui_thread = calls_on_ui_thread(monkeypatch, rejudge, "calibration_for")
    judge_server.default = tool_reply([("FAIL", "it ends with a newline")])  # one item left to grade
    app = make_app(tmp_path, judge_env={"ANTHROPIC_API_KEY": "sk-e2e"})
    async with app.run_test(size=(80, 24)) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "judge-me")
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        ed = app.screen
        ed.query_one("#rubric-list").focus()
        await pilot.press("end", "d")
        assert ed.query_one("#rubric").items == ["tmp.txt contains exactly one line"]
        await pilot.press("ctrl+s")
        await save_done(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the rejudge offer")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, what="the rejudge to finish")
        [case] = app.live.cases
        stats = app.live.stats(case)
        assert (stats.passes, stats.fails, stats.rate) == (0, 3, 0.0)  # before the edit: 3 of 3 passed
    assert on_ui_thread == [False]  # read once, on a worker thread
