"""Issue 35.3/35.4 in the editor: the rubric list shows each item's figures across history (the planted 500
runs of tests/helpers/item_history.py), and on the list m merges an item with the one it is redundant with,
d deletes a dead item, c turns an item a rule decides into that rule check; ctrl+s saves the edited rubric.
The real app driven by key presses at 80x24."""

from __future__ import annotations

from textual.widgets import OptionList

from scarbook.cases.io import load_case
from scarbook.models.rubric import implicit_item_id
from scarbook.tui.app import make_app
from scarbook.tui.messages import OpenEditor
from tests.helpers.item_history import ONE_LINE, plant_bundled
from tests.helpers.tui_fixtures import editor_ready, fast_demo, library_loaded, wait_until  # noqa: F401

DECIDED = 'tmp.txt does not contain the text "more"'


def prompts(options: OptionList) -> list[str]:
    return [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]


async def editor_on(pilot, case_id: str, notes: list[str]):
    """The editor opened on `case_id`, its notifications collected in `notes`."""
    await library_loaded(pilot)
    pilot.app.post_message(OpenEditor(case_id))
    await wait_until(pilot, lambda: editor_ready(pilot.app), what=f"the editor on {case_id}")
    editor = pilot.app.screen
    real_notify = editor.notify
    editor.notify = lambda message, **kw: (notes.append(str(message)), real_notify(message, **kw))[1]
    return editor


async def test_the_editor_shows_figures_and_merges_deletes_and_converts_items_by_keys(project, fast_demo):
    proj, _, _ = plant_bundled(project)
    app = make_app(project.root)
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await editor_on(pilot, "write-one-line", notes)
        rubric = editor.query_one("#rubric-list", OptionList)
        shown = prompts(rubric)
        assert shown[0].startswith(f"1. {ONE_LINE['a']}\n   380 runs judged (4 sessions) · FAIL ")
        assert shown[2].startswith(f"3. {ONE_LINE['c']}\n   380 runs judged (4 sessions) · FAIL 0%")
        assert "dead: never failed in 380 runs over 4 sessions" in shown[2]
        rubric.focus()
        await pilot.press("home", "m")  # a is redundant with b: b goes
        await wait_until(pilot, lambda: len(editor.query_one("#rubric").items) == 4, what="the merge")
        assert notes[-1] == f"merged: item 2 went; {ONE_LINE['a']!r} stays — ctrl+s saves"
        await pilot.press("home", "down", "d")  # c, the dead item
        assert editor.query_one("#rubric").items == [ONE_LINE["a"], ONE_LINE["d"], ONE_LINE["e"]]
        await pilot.press("home", "c")  # a: no rule decides it
        assert notes[-1] == "no rule check decides item 1: it stays for the judge"
        editor.query_one("#rubric-input").focus()
        await pilot.press(*DECIDED, "enter")
        rubric.focus()
        await pilot.press("end", "c")
        assert notes[-1] == ("item 4 is now the rule check {type: not_contains, path: 'tmp.txt', text: 'more'} "
                             "— ctrl+s saves")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(n.startswith("saved ") for n in notes), what="the save")
    case = load_case(proj.cases_dir / "write-one-line")
    [judge] = case.judge_checks
    assert judge.rubric == [ONE_LINE["a"], ONE_LINE["d"], ONE_LINE["e"]]
    types = [c.type for c in case.checks]
    assert types.index("not_contains") < types.index("llm_judge")
    assert {"type": "not_contains", "path": "tmp.txt", "text": "more"} in [c.to_dict() for c in case.checks]



MARKED = """\
id: c1
task: write the first line of README.md to tmp.txt
checks:
  - {type: file_exists, path: tmp.txt}
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - {id: first-line, text: tmp.txt holds the first line of README.md and nothing more}
      - {id: names-it, text: the final answer names tmp.txt}
      - the final answer does not claim a line count it did not check
"""
REWORDED = "the final answer names the file tmp.txt"


async def test_the_editor_keeps_each_items_id_through_a_move_and_a_delete_and_not_through_a_rewording(
        project, fast_demo):
    """Issue 35.3: an item's written id stays with it through a reorder (ctrl+down) and another item's
    delete (d), so its figures across history stay its own after ctrl+s; an item reworded in the editor and
    an added one are new items with their words' ids (a rewording keeps its figures only when the user keeps
    its id in case.yaml)."""
    project.case("c1", MARKED)
    assert load_case(project.cases_dir / "c1").judge_checks[0].rubric_ids[:2] == ["first-line", "names-it"]
    app = make_app(project.root)
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        editor = await editor_on(pilot, "c1", notes)
        editor.query_one("#rubric-list", OptionList).focus()
        await pilot.press("home", "ctrl+down")  # first-line goes second
        await pilot.press("end", "d")  # the third item goes
        await pilot.press("home", "enter")  # names-it into the input, reworded
        await wait_until(pilot, lambda: editor.query_one("#rubric-input").has_focus, what="the item's input")
        await pilot.press("ctrl+u", *REWORDED, "enter", "tab", "ctrl+u", *"tmp.txt ends with a newline", "enter")
        assert editor.query_one("#rubric").items == [
            REWORDED, "tmp.txt holds the first line of README.md and nothing more", "tmp.txt ends with a newline"]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(n.startswith("saved ") for n in notes), what="the save")
    [judge] = load_case(project.cases_dir / "c1").judge_checks
    assert judge.rubric_ids == [implicit_item_id(REWORDED), "first-line", implicit_item_id("tmp.txt ends with a newline")]
