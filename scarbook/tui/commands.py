"""Command palette (ctrl+p): jump to a case, run it, or file a new scar."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ScarbookCommands(Provider):
    def _library(self):
        from scarbook.tui.screens.library import LibraryScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, LibraryScreen):
                return screen
        return None

    def _entries(self) -> list[tuple[str, object, str]]:
        out: list[tuple[str, object, str]] = [("new scar", self._new_case, "file a new case from nothing")]
        lib = self._library()
        for row in (lib.rows if lib else []):
            if row.case is None:
                continue
            out.append((f"open {row.key}", partial(self._open, row.key), row.title or row.case.task))
            out.append((f"run {row.key}", partial(self._launch_case, row.key), "launch runs of this case"))
        return out

    async def discover(self) -> Hits:
        for name, callback, help_text in self._entries()[:50]:
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._entries():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)

    def _new_case(self) -> None:
        from scarbook.tui.screens.editor import EditorScreen

        self.app.push_screen(EditorScreen(None))

    def _go_to(self, key: str):
        lib = self._library()
        if lib is None:
            return None
        while self.app.screen is not lib:
            self.app.pop_screen()
        lib.query_one("#filter").value = ""
        lib._refill()
        keys = [r.key for r in lib.shown]
        if key in keys:
            lib.query_one("#cases").move_cursor(row=keys.index(key))
        return lib

    def _open(self, key: str) -> None:
        lib = self._go_to(key)
        if lib is not None:
            lib.action_edit_case()

    def _launch_case(self, key: str) -> None:
        lib = self._go_to(key)
        if lib is not None:
            lib.action_launch()
