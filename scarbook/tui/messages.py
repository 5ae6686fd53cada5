"""Messages the App posts to its screens ("attributes down, messages up")."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from scarbook.views.live_state import LiveSession


@dataclass
class SessionUpdated(Message):
    """Posted at most ~10x a second while a session runs: the live state changed."""

    state: LiveSession


@dataclass
class SessionEnded(Message):
    """The session finished, was cancelled or aborted; `state.info` holds the final SessionInfo."""

    state: LiveSession


@dataclass
class CasesChanged(Message):
    """A case was saved or created: the library reloads."""

    case_id: str | None = None
