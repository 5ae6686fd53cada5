"""What the screens and dialogs use of the running app beyond Textual's App: the project, the live
session, the key queue, the judge's environment. Declared here, below the screens, so a screen can
type `self.app` without importing the app (ScarbookApp is the one subclass of Host).

`HostScreen` / `HostModalScreen` change nothing at run time: they only tell the type checker that a
scarbook screen's `app` is a Host (textual.getters.app, declared for the checker only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from textual import getters
from textual.app import App
from textual.screen import ModalScreen, Screen

from scarbook.tui.key_queue import KeyQueue

if TYPE_CHECKING:
    from scarbook.project import Project
    from scarbook.views.live_state import LiveSession

ResultT = TypeVar("ResultT")


class Host(App[Any]):
    project: Project
    live: LiveSession | None  # this app's session, running or the last one
    keys: KeyQueue  # keys typed while a screen is still opening wait for it
    judge_env: Mapping[str, str] | None  # where the judge's API key is looked up (None: the process's)

    def quit_after_session(self) -> None:  # ScarbookApp's: exit once a running session has recorded its end
        self.exit()

    if TYPE_CHECKING:
        def judge_key_present(self) -> bool: ...


class HostScreen(Screen[ResultT]):
    if TYPE_CHECKING:  # Textual's own way to type `app` (its getter asserts the class at run time)
        app = getters.app(Host)


class HostModalScreen(ModalScreen[ResultT]):
    if TYPE_CHECKING:
        app = getters.app(Host)
