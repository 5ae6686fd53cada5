"""The import screen offers what the agent sent through a tool (a PR body given to an MCP tool) as a candidate,
as `scarbook import --list` does; picked by keys, it drafts a case whose artifact is that tool call's input, and
the editor shows and keeps it. Driven through the real app at 80x24 and wide."""

from __future__ import annotations

import pytest
import yaml
from textual.widgets import Input, OptionList

from scarbook.tui.app import make_app
from tests.cli.test_import_tool_input import BODY, PR_BODY, PR_LOG
from tests.helpers.tui_fixtures import (  # noqa: F401
    SIZE,
    editor_ready,
    fast_demo,
    plain,
    project_root,
    save_done,
    wait_until,
)
from tests.tui.test_editor_checks import tab_to
from tests.tui.test_import import open_import, replace_text

pytestmark = pytest.mark.usefixtures("inprocess_demo")

SHOWN = "{tool: mcp__github__create_pull_request, field: body}"


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_a_pr_body_picked_by_keys_becomes_the_drafts_artifact(project_root, size):
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        screen, results = await open_import(pilot, PR_LOG)
        options = screen.query_one("#candidates", OptionList)
        assert options.option_count == 8
        await pilot.press("end")  # the last candidate: the PR's title (under 40 characters, after the long inputs)
        assert screen.artifact_number == 8
        assert plain(screen.query_one("#candidate-preview")) == (
            "input of mcp__github__create_pull_request: title\nFix the README title typo")
        await pilot.press("up")  # the one before: the PR body
        assert screen.artifact_number == 7
        assert plain(screen.query_one("#candidate-preview")) == (
            f"input of mcp__github__create_pull_request: body\n{PR_BODY}")
        await pilot.press("up")  # the one before: the Bash command line
        assert plain(screen.query_one("#candidate-preview")).startswith(
            "input of Bash: command\ngit commit -am 'Fix the README title typo'")
        await pilot.press("down")
        await replace_text(pilot, "#import-id", "pr-claims")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: results, what="the import screen to close")
        assert results == ["pr-claims"]
        await wait_until(pilot, lambda: editor_ready(app), what="the editor on the draft")
        assert app.screen.query_one("#scar-at", Input).value == SHOWN
        checks = app.screen.query_one("#check-list", OptionList)
        assert str(checks.get_option_at_index(0).prompt) == f"1. llm_judge: 1 rubric items, artifact {SHOWN}"
        title = app.screen.query_one("#case-title", Input)
        title.focus()
        await pilot.press("end", "!")
        await tab_to(pilot, "#check-list")  # the judge check in the form: its artifact as case.yaml writes it
        await wait_until(pilot, lambda: bool(app.screen.query("#cf-artifact")), what="the judge check's fields")
        assert app.screen.query_one("#cf-artifact", Input).value == SHOWN
        await tab_to(pilot, "#check-update")
        await pilot.press("enter")  # updated from the form as shown: still the tool call's input
        await pilot.press("ctrl+s")  # and the title's edit keeps it where it was
        await save_done(pilot)
    folder = project_root / "cases" / "pr-claims"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert case["title"].endswith("!")
    assert case["scar"]["artifact_at"] == BODY
    assert [c.get("artifact") for c in case["checks"]] == [BODY]
    assert (folder / "scar" / "artifact.txt").read_text() == PR_BODY
