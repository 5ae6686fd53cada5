"""The test process draws a headless screen when something looks at it (tests/helpers/textual_speed.py):
not at each refresh, but for a snapshot, a test's own `render_strips()`, and once at the end of every
test. A widget that cannot be drawn still fails the test that shows it, and what a test draws is the
screen as it is now."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Static


class Undrawable(Widget):
    """Laid out as any widget (a fixed size: nothing measures its content), it fails only when drawn."""

    DEFAULT_CSS = "Undrawable { width: 20; height: 3; }"

    def render(self) -> str:  # called to draw it (its size is fixed: nothing measures its content)
        raise RuntimeError("this widget cannot be drawn")


class OneWidget(App):
    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def test_a_widget_that_cannot_be_drawn_fails_the_test_that_shows_it() -> None:
    app = OneWidget(Undrawable())
    with pytest.raises(RuntimeError, match="this widget cannot be drawn"):
        async with app.run_test(size=(40, 5)) as pilot:
            await pilot.pause()


async def test_what_a_test_draws_is_the_screen_as_it_is_now() -> None:
    app = OneWidget(Static("before", id="text"))
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        app.query_one("#text", Static).update("after")
        await pilot.pause()
        drawn = [strip.text for strip in app.screen._compositor.render_strips()]
        assert drawn[0].rstrip() == "after"
        assert app.export_screenshot().count("after") >= 1
