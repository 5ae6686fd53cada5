"""Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer rebuilds every one of its keys (a FooterKey widget each, mounted and styled anew) whenever
its screen says its bindings may have changed. A focus change says so twice: once when the screen's
`focused` changes and once more after the next refresh. So each Tab, each click into a field, each screen
brought back rebuilt the whole footer twice, mostly into what it already showed: 10–15% of the CPU of a
session of keys. This one compares what it would show (each shown binding, whether it is enabled, its
tooltip, and the command palette's key) with what it shows, and rebuilds only when they differ. What it
shows is Textual's own (the same compose).

Each key it builds is mounted as it will be shown. Textual's FooterKey starts compact and is then told the
footer's `compact` (False here): its class went on and came off again, each a restyle of the key, so every
rebuild styled each key twice more (issue 37: 4% of the TUI tests' CPU). The look is Textual's.
"""

from __future__ import annotations

from typing import Any

from textual import widgets as textual_widgets
from textual.app import ComposeResult
from textual.widgets._footer import FooterKey


class Footer(textual_widgets.Footer):
    _shown: Any = None  # what the last rebuild showed (None: nothing built yet)

    def _to_show(self) -> tuple:
        """Everything Footer.compose reads that can change while the footer is mounted."""
        if not self._bindings_ready:
            return ()
        active = self.screen.active_bindings
        keys = tuple((binding, enabled, tooltip) for _, binding, enabled, tooltip in active.values() if binding.show)
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            entry = active.get(self.app.COMMAND_PALETTE_BINDING)
            palette = entry and entry[1:]
        return keys, palette

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):  # its `compact` set before it mounts: no class to put on or undo
                # Textual binds each key's to the footer's, but the palette's key keeps FooterKey's own (compact)
                compact = True if widget.has_class("-command-palette") else self.compact
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        if not self.is_attached or self._pruning:
            return
        to_show = self._to_show()
        if to_show == self._shown:
            return  # the same keys: nothing to rebuild
        self._shown = to_show
        await super().recompose()
