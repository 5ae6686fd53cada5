"""Textual's Header and Select, safe to close while they open (tui/mounting.py says why).

Their own Mount handlers look up the children they compose (Header its title, Select its overlay);
when the widget is being removed before those were built, these stop the handler instead (an event's
`prevent_default` keeps Textual from calling the base classes' handlers). Everything else is Textual's.
"""

from __future__ import annotations

from textual import events
from textual import widgets as textual_widgets

from scarbook.tui.mounting import being_removed


class Header(textual_widgets.Header):
    def _on_mount(self, event: events.Mount) -> None:
        if being_removed(self):
            event.prevent_default()


class Select(textual_widgets.Select):
    def _on_mount(self, event: events.Mount) -> None:
        if being_removed(self):
            event.prevent_default()
