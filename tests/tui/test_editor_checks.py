"""The new-case editor's checks by keys alone (issue 37.15): Enter on the checks list opens the check-type
select, Add refuses a check its required fields leave incomplete and says why, and a save's refusal
("checks must be a non-empty list") goes once the form no longer has that problem."""

from __future__ import annotations

import pytest
import yaml
from textual.widgets import Select

from scarbook.tui.app import make_app
from tests.helpers.tui_fixtures import (
    SIZE,
    editor_ready,
    fast_demo,  # noqa: F401
    library_loaded,
    plain,
    project_root,  # noqa: F401
    save_done,
    type_text,
    wait_until,
)

pytestmark = pytest.mark.usefixtures("inprocess_demo")


async def tab_to(pilot, selector: str, back: bool = False) -> None:
    """Tab (or Shift+Tab) until the widget `selector` names has the focus, as a user would."""
    target = pilot.app.screen.query_one(selector)
    for _ in range(40):
        if pilot.app.focused is target:
            return
        await pilot.press("shift+tab" if back else "tab")
    raise AssertionError(f"{selector} never got the focus (it is at {pilot.app.focused})")


async def new_case_refused_for_no_checks(pilot):
    """`n`, an id and a task typed, Ctrl+S: the save is refused for want of a check."""
    app = pilot.app
    await library_loaded(pilot)
    await pilot.press("n")
    await wait_until(pilot, lambda: editor_ready(app), what="the editor")
    await type_text(pilot, "new-one")
    await tab_to(pilot, "#task")
    await type_text(pilot, "write out.txt")
    await pilot.press("ctrl+s")
    await save_done(pilot)
    assert plain(app.screen.query_one("#editor-error")) == REFUSED
    return app.screen


REFUSED = "not saved: checks must be a non-empty list — add at least one check, e.g. - {type: file_exists, path: out.txt}"


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_enter_on_the_checks_list_opens_the_check_type_select(project_root, size):  # noqa: F811
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        ed = await new_case_refused_for_no_checks(pilot)
        await tab_to(pilot, "#check-list")
        await pilot.pause()
        for button in ("add", "update", "delete", "up", "down"):  # the whole row on screen, at 80 columns too
            region = ed.query_one(f"#check-{button}").region
            assert region.right <= size[0] - 2, f"#check-{button} at {region} is off the {size[0]}-column screen"
        await pilot.press("enter")
        select = ed.query_one("#check-type", Select)
        await wait_until(pilot, lambda: select.expanded, what="the check-type list to open")
        await pilot.press("down", "enter")  # the first type: file_exists
        assert select.value == "file_exists"
        await wait_until(pilot, lambda: bool(ed.query("#cf-path")), what="the file_exists fields")


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_add_refuses_an_incomplete_check_and_the_stale_refusal_goes(project_root, size):  # noqa: F811
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        ed = await new_case_refused_for_no_checks(pilot)
        await tab_to(pilot, "#check-type")
        await pilot.press("enter", "down", "enter")  # the first type: file_exists
        await wait_until(pilot, lambda: bool(ed.query("#cf-path")), what="the file_exists fields")
        await tab_to(pilot, "#check-add")
        await pilot.press("enter")  # Add with the path left empty
        await pilot.pause()
        assert ed.query_one("#checks").checks == []
        assert plain(ed.query_one("#check-problem")) == ("not added: file_exists check is missing required key "
                                                         "'path' — fill in path")
        assert plain(ed.query_one("#editor-error")) == REFUSED  # still true: no check yet

        await tab_to(pilot, "#cf-path")
        await type_text(pilot, "out.txt")
        await tab_to(pilot, "#check-add", back=True)
        await pilot.press("enter")
        await wait_until(pilot, lambda: ed.query_one("#checks").checks == [{"type": "file_exists",
                                                                            "path": "out.txt"}], what="the check")
        assert plain(ed.query_one("#check-problem")) == ""
        assert plain(ed.query_one("#editor-error")) == ""  # the refusal is no longer true: it goes
        assert plain(ed.query_one("#err-checks")) == ""
        await pilot.press("ctrl+s")
        await save_done(pilot)
    data = yaml.safe_load((project_root / "cases" / "new-one" / "case.yaml").read_text())
    assert data["checks"] == [{"type": "file_exists", "path": "out.txt"}]


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_a_file_rules_path_is_not_labelled_required_where_artifact_can_stand_in(project_root, size):  # noqa: F811
    """contains (and every rule that can read a tool call's input) takes `artifact: {tool, field}` in place of
    `path`: the form said "path: required" and "artifact: optional", and Add with both empty said "fill in path,
    text". It says path or artifact now, and a check with artifact and no path is added."""
    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        ed = await new_case_refused_for_no_checks(pilot)
        await tab_to(pilot, "#check-type")
        await pilot.press("enter", "down", "down", "down", "enter")  # the third type: contains
        await wait_until(pilot, lambda: bool(ed.query("#cf-artifact")), what="the contains fields")
        assert str(ed.query_one("#cf-path").placeholder) == "a workspace-relative path, required unless artifact"
        assert str(ed.query_one("#cf-artifact").placeholder) == (
            "a tool call's input, {tool: mcp__github__create_pull_request, field: body}, instead of path")
        await tab_to(pilot, "#check-add")
        await pilot.press("enter")  # Add with every field empty
        await pilot.pause()
        assert plain(ed.query_one("#check-problem")) == ("not added: contains check is missing required key 'path' — "
                                                         "fill in path (or artifact), text")
        await tab_to(pilot, "#cf-artifact")
        await type_text(pilot, "{tool: Bash, field: command}")
        await tab_to(pilot, "#cf-text", back=True)
        await type_text(pilot, "gh pr create")
        await tab_to(pilot, "#check-add")
        await pilot.press("enter")
        await wait_until(pilot, lambda: ed.query_one("#checks").checks == [
            {"type": "contains", "text": "gh pr create", "artifact": {"tool": "Bash", "field": "command"}}],
            what="the check read from the tool call")
        assert plain(ed.query_one("#check-problem")) == ""
