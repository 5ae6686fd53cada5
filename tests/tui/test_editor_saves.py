"""The editor saves only what was edited (issue 37.10): a long value the user did not touch, a folded
task, comments and flow lists keep their bytes; only the edited field's line changes."""

from __future__ import annotations

import json
import textwrap

import pytest

from scarbook.cases.io import load_case
from tests.helpers.tui_fixtures import (
    SIZE,
    editor_ready,
    fast_demo,  # noqa: F401
    library_loaded,
    move_library_cursor,
    project_root,  # noqa: F401
    save_done,
    wait_until,
)

pytestmark = pytest.mark.usefixtures("inprocess_demo")

WHAT = "wrote the entire README into tmp.txt, then reported done with one line; the reviewer believed it all."
CASE = textwrap.dedent(f"""\
    # kept: the incident of 2026-11-14
    id: long-notes
    title: Claimed one line
    task: >-
      Extract the first line of README.md and write it to tmp.txt, then say in one sentence what you
      wrote and where.
    tags: [files]   # flow on purpose
    checks:
      - {{type: file_exists, path: tmp.txt}}
    scar:
      date: 2026-11-14
      what_went_wrong: {WHAT}
      family: false-completion-claim-with-a-long-family-name-that-runs-on-past-the-margin-of-a-hundred
    """)


async def edit_and_save(root, size, keys: list[str], field: str | None = None):
    """Open the case with `e` from the library, type `keys` into `field` (the title when None), save."""
    from scarbook.tui.app import make_app

    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "long-notes")
        await pilot.press("e")
        await wait_until(pilot, lambda: editor_ready(app), what="the editor")
        if field is not None:
            app.screen.query_one(field).focus()
        await pilot.press(*keys)
        await pilot.press("ctrl+s")
        await save_done(pilot)
        assert not app.screen.dirty


@pytest.fixture
def long_notes(project_root):  # noqa: F811
    folder = project_root / "cases" / "long-notes"
    folder.mkdir()
    (folder / "case.yaml").write_text(CASE)
    return folder


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_save_changes_only_the_edited_line(project_root, long_notes, size):  # noqa: F811
    assert len(WHAT) == 101 and max(len(line) for line in CASE.splitlines()) > 100
    await edit_and_save(project_root, size, ["end", "space", "o", "n", "l", "y"])
    assert (long_notes / "case.yaml").read_text() == CASE.replace("title: Claimed one line",
                                                                  "title: Claimed one line only")
    assert load_case(long_notes).scar.what_went_wrong == WHAT


async def test_a_scar_edit_keeps_the_untouched_long_value_beside_it(project_root, long_notes):  # noqa: F811
    """The date is edited, bare as it was; what_went_wrong beside it keeps its one line."""
    await edit_and_save(project_root, (80, 24), ["end", "backspace", "5"], field="#scar-date")
    assert (long_notes / "case.yaml").read_text() == CASE.replace("date: 2026-11-14", "date: 2026-11-15")


# Tags load accepts, each kept as written when the editor saves another field: its tags field joins them with
# ", " and splits on "," (a tag with a comma, or spaces around it, is refused at load: it could not come back).
ODD_TAGS = ["files", "two words", "ünïcode", "a:b", "'q'", "[x]", "#h", "a;b", "x/y", "tab\there", "new\nline"]


async def test_the_editor_saves_back_every_tag_load_accepts(project_root, long_notes):  # noqa: F811
    text = CASE.replace("tags: [files]   # flow on purpose",
                        f"tags: [{', '.join(json.dumps(t, ensure_ascii=False) for t in ODD_TAGS)}]")
    (long_notes / "case.yaml").write_text(text)
    assert load_case(long_notes).tags == ODD_TAGS
    await edit_and_save(project_root, (80, 24), ["end", "space", "o", "n", "l", "y"])
    assert (long_notes / "case.yaml").read_text() == text.replace("title: Claimed one line",
                                                                  "title: Claimed one line only")
    assert load_case(long_notes).tags == ODD_TAGS
