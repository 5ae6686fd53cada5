"""A dialog's first focus is the field it means, from the moment it has any: it never lands on another
widget first and moves a tick later. Textual focuses a screen's first focusable widget once it is built;
a focus() from on_mount comes one turn of the App's queue after that. A key typed in between (a user
quick on the keys, a test on a loaded machine) acted on the wrong widget: Tab went from the launch
form's runs field to the next one after the focus had come back (tests/tui/test_agents_live.py: "tab
never reached #runs"), Enter in the delete question pressed Yes, not the No it shows focused."""

from __future__ import annotations

import pytest
from textual import events

from scarbook.tui.app import make_app
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.screens.launch import LaunchScreen
from tests.helpers.tui_fixtures import SIZE, fast_demo, library_loaded, project_root, wait_until  # noqa: F401


@pytest.mark.parametrize(("key", "screen", "field"), [("r", LaunchScreen, "runs"), ("d", ConfirmScreen, "no")])
async def test_a_dialog_focuses_its_field_first(project_root, key, screen, field) -> None:
    focused: list[str | None] = []  # each widget focused on the dialog, in order
    seen: set[int] = set()

    def hook(message) -> None:  # a DescendantFocus bubbles: the same message reaches each parent
        if isinstance(message, events.DescendantFocus) and id(message) not in seen:
            seen.add(id(message))
            if isinstance(message.widget.screen, screen):
                focused.append(message.widget.id)

    app = make_app(project_root)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await library_loaded(pilot)
        await pilot.press(key)
        await wait_until(pilot, lambda: isinstance(app.screen, screen) and app.focused is not None
                         and app.focused.id == field, what=f"#{field} focused")
        await pilot.pause()
        assert focused == [field]
