"""Trajectory checks in the TUI (issue 28.4): the case editor adds them by key presses, as a user would (pick the type in
the check-type list, fill its fields, Add, save; a bad value is refused in the core's words), and the import screen
shows the ones the incident suggests."""

from __future__ import annotations

import pytest
import yaml

from scarbook.checks.spec import CHECK_SPECS
from scarbook.tui.app import make_app
from tests.helpers.paths import FIXTURES
from tests.helpers.tui_fixtures import (  # noqa: F401  (the fixtures these tests use)
    SIZE,
    editor_ready,
    fast_demo,
    library_loaded,
    plain,
    project_root,
    save_done,
    wait_until,
)

pytestmark = pytest.mark.usefixtures("inprocess_demo")
KEYS = {" ": "space", "-": "minus", ".": "full_stop", "/": "slash", "_": "underscore", "|": "vertical_line",
        "*": "asterisk"}


async def type_keys(pilot, text: str) -> None:
    await pilot.press(*[KEYS.get(ch, ch) for ch in text])


async def focus(pilot, widget_id: str) -> None:
    """Move the focus (the Tab presses between are not what these tests are about)."""
    pilot.app.screen.query_one(f"#{widget_id}").focus()
    await wait_until(pilot, lambda: pilot.app.focused is not None and pilot.app.focused.id == widget_id,
                     what=f"#{widget_id} to have focus")


async def add_check(pilot, ctype: str, fields: dict[str, str]) -> None:
    """Open the check-type list with Enter, walk to `ctype` (End, then Up), Enter; type each field; Enter on Add."""
    await focus(pilot, "check-type")
    await pilot.press("enter")
    await pilot.pause()
    ups = len(CHECK_SPECS) - 1 - list(CHECK_SPECS).index(ctype)  # the trajectory types sit near the end
    await pilot.press("end", *["up"] * ups, "enter")
    first = next(iter(fields))
    await wait_until(pilot, lambda: pilot.app.screen.query_one("#check-type").value == ctype
                     and pilot.app.screen.query(f"#cf-{first}"), what=f"the {ctype} fields")
    for key, text in fields.items():
        await focus(pilot, f"cf-{key}")
        await type_keys(pilot, text)
    await focus(pilot, "check-add")
    await pilot.press("enter")


async def new_case(pilot, case_id: str) -> None:
    await library_loaded(pilot)
    await pilot.press("n")
    await wait_until(pilot, lambda: editor_ready(pilot.app), what="the editor")
    pilot.app.screen.query_one("#case-id").value = case_id
    pilot.app.screen.query_one("#task").load_text("write the summary")


async def test_the_editor_adds_trajectory_checks_by_keys(project_root):
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await new_case(pilot, "looped")
        await add_check(pilot, "no_writes_outside", {"paths": "out.txt|docs/*"})
        await pilot.press("ctrl+s")
        await save_done(pilot)
        path = project_root / "cases" / "looped" / "case.yaml"
        assert path.is_file(), plain(app.screen.query_one("#editor-error"))
    assert yaml.safe_load(path.read_text())["checks"] == [
        {"type": "no_writes_outside", "paths": ["out.txt", "docs/*"]},
    ]


async def test_a_negative_bound_is_refused_in_the_cores_words(project_root):
    """The project's agent is a command agent that keeps no transcript: the editor's hints say so."""
    yaml_file = project_root / "scarbook.yaml"
    yaml_file.write_text(yaml_file.read_text().replace("agent:\n  type: demo\n", "agent:\n  type: command\n  argv: [x]\n"))
    assert "type: command" in yaml_file.read_text()
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await new_case(pilot, "bounded")
        ed = app.screen
        ed.query_one("#check-type").value = "max_turns"
        await wait_until(pilot, lambda: bool(ed.query("#cf-n")), what="the max_turns fields")
        ed.query_one("#cf-n").value = "-3"
        ed.query_one("#check-add").press()  # refused at Add since issue 37.15 (it was the save that refused it)
        await wait_until(pilot, lambda: plain(ed.query_one("#check-problem")) == (
            "not added: max_turns.n must be 0 or more, got -3 — write e.g. n: 12"), what="the refusal")
        assert ed.query_one("#checks").checks == []
        ed.query_one("#cf-n").value = "3"
        ed.query_one("#check-add").press()
        await wait_until(pilot, lambda: "needs-transcript" in plain(ed.query_one("#lint-hints")), what="the hint")
        assert "hint (needs-transcript): max_turns reads each run's transcript, but the project's agent keeps none" \
            in plain(ed.query_one("#lint-hints"))
        assert plain(ed.query_one("#check-problem")) == ""
    assert not (project_root / "cases" / "bounded").exists()


async def test_the_import_screen_shows_the_trajectory_checks_the_incident_suggests(project_root):
    """With the artifact picked, the preview says which trajectory checks would catch the incident;
    picking another artifact changes them (the answer: no file write was wanted at all)."""
    from pathlib import Path

    from scarbook.tui.screens.import_scar import ImportScreen

    looped = FIXTURES / "transcripts" / "looped_readme.jsonl"
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        screen = ImportScreen(looped)
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.transcript is not None and screen.is_mounted, what="the transcript")
        await pilot.pause()
        preview = plain(screen.query_one("#candidate-preview"))
        assert screen.cands[screen.artifact_number - 1].path == "docs/usage.md"  # the default: the last file written
        assert ('suggested check {type: no_writes_outside, paths: ["docs/usage.md"]}: the incident wrote README.md '
                "(rewrote it whole) besides the artifact docs/usage.md") in preview
        assert ("suggested check {type: max_tool_calls, n: 20}: the incident made 41 tool calls, the same run_tests "
                "call 38 times (a loop); a run past 20 fails") in preview
        await pilot.press("home")  # candidate 1: the final answer
        await pilot.pause()
        assert "suggested check {type: no_writes_outside, paths: []}" in plain(screen.query_one("#candidate-preview"))
