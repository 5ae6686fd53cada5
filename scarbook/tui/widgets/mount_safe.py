"""Textual's Header and Select, safe to close while they open (tui/mounting.py says why).

Their own Mount handlers look up the children they compose (Header its title, Select its overlay);
when the widget is being removed before those were built, these stop the handler instead (an event's
`prevent_default` keeps Textual from calling the base classes' handlers). Everything else is Textual's.

The Header's Mount is scarbook's own: Textual's watches the titles with an async function, whose first
call is a coroutine parked on the app and the screen until they next handle a message; a screen closed
in the tick it opened may never handle another, and Python warns that the coroutine was never awaited.
This one shows the title at once (tests/tui/test_closed_while_opening.py).
"""

from __future__ import annotations

from textual import events
from textual import widgets as textual_widgets
from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.widgets import Static

from scarbook.tui.mounting import being_removed


class Header(textual_widgets.Header):
    def _on_mount(self, event: events.Mount) -> None:
        # Textual's Header handler is replaced by this one (and a Widget's, which only shows the scrollbars
        # of a widget whose overflow is `scroll`: a header's never is)
        event.prevent_default()
        if being_removed(self):
            return
        for node in (self.app, self.screen):
            self.watch(node, "title", self._show_title)
            self.watch(node, "sub_title", self._show_title)

    def _show_title(self) -> None:
        try:
            self.query_one("HeaderTitle", Static).update(self.format_title())
        except (NoMatches, NoScreen):  # closed while it opened: its title was never built, nobody sees it
            pass


class Select(textual_widgets.Select):
    def _on_mount(self, event: events.Mount) -> None:
        if being_removed(self):
            event.prevent_default()
