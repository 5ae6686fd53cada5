"""Command palette (ctrl+p): every action by name — the screen's own keys, the library's actions
(sessions, import, calibrate, verify, ...) from anywhere, and jumping to or running a case."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from scarbook.tui.messages import OpenEditor
from scarbook.tui.screens.library import LibraryScreen

# Reachable from any screen: the palette goes back to the library and does it there.
LIBRARY_ACTIONS = [("sessions", "sessions", "past sessions: state, figures, tokens, cost; compare two"),
                   ("import transcript", "import_transcript", "a draft case from an agent transcript"),
                   ("calibrate judge", "calibrate", "grade the judge's verdicts yourself, see the agreement"),
                   ("verify scar", "verify", "does the highlighted case catch its own scar?"),
                   ("run cases", "launch", "launch runs of the highlighted, filtered or all cases"),
                   ("live session", "watch", "back to the running (or last) session"),
                   ("review runs", "review", "the highlighted case's runs in its latest session"),
                   ("delete case", "delete_case", "move the highlighted case to the trash (asks first)"),
                   ("rename case", "rename_case", "a new id for the highlighted case"),
                   ("duplicate case", "duplicate_case", "copy the highlighted case under a new id"),
                   ("restore from trash", "trash", "deleted cases; restore one to cases/"),
                   ("trends: cases × sessions", "trends", "flake view: each case's rate per session, flakiest first"),
                   ("help", "app.help", "the keys of this screen")]


class ScarbookCommands(Provider):
    def _library(self) -> LibraryScreen | None:
        for screen in self.app.screen_stack:
            if isinstance(screen, LibraryScreen):
                return screen
        return None

    def _entries(self) -> list[tuple[str, Callable[[], Any], str]]:
        out: list[tuple[str, Callable[[], Any], str]] = [("new scar", self._new_case, "file a new case from nothing")]
        seen = {"new scar"}
        for active in self.screen.active_bindings.values():  # the keys of the screen under the palette
            b = active.binding
            name = b.description.lower().rstrip("…")
            if b.description and not b.system and name not in seen:
                seen.add(name)
                out.append((name, partial(self.app.run_action, b.action, active.node),
                            f"key {self.app.get_key_display(b)}"))
        for name, action, help_text in LIBRARY_ACTIONS:
            if name not in seen:
                seen.add(name)
                out.append((name, partial(self._library_action, action), help_text))
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
        self.app.post_message(OpenEditor())

    def _go_to(self, key: str):
        lib = self._library()
        if lib is None:
            return None
        while self.app.screen is not lib:
            self.app.pop_screen()
        lib.show_case(key)
        return lib

    def _open(self, key: str) -> None:
        lib = self._go_to(key)
        if lib is not None:
            lib.action_edit_case()

    async def _library_action(self, action: str) -> None:
        lib = self._library()
        if lib is None:
            return
        while self.app.screen is not lib:
            self.app.pop_screen()
        await self.app.run_action(action, lib)  # a coroutine: not awaited, the action never ran

    def _launch_case(self, key: str) -> None:
        lib = self._go_to(key)
        if lib is not None:
            lib.action_launch()
