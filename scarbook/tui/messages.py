"""The messages of the TUI: the App posts session news down to its screens, and screens ask the App to
go somewhere or do something app-wide ("attributes down, messages up").

Screens never import each other or the App (an import-linter contract): a screen that wants another
one posts a request here to the App (`self.app.post_message(OpenReview(...))`), and the App, the one
place that knows every screen, opens it. A request is posted to the App itself rather than bubbled
from the screen, so a screen that dismisses itself right after asking cannot lose it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the fields' types only: importing a message must not load the core behind it (start-up)
    from scarbook.cases.drafts import CaseDraft
    from scarbook.models import Case, SessionInfo
    from scarbook.run.plan import SessionPlan
    from scarbook.stats.trends import Trends
    from scarbook.views.live_state import LiveSession


# -- the App to its screens --------------------------------------------------------------------------
@dataclass
class SessionUpdated(Message):
    """Posted at most ~10x a second while a session runs: the live state changed."""

    state: LiveSession


@dataclass
class SessionEnded(Message):
    """The session finished, was cancelled or aborted; `state.info` holds the final SessionInfo."""

    state: LiveSession


# -- screens to the App: app-wide steps ----------------------------------------------------------------
class AppRequest(Message):
    """A screen asks the App for something (another screen, an app-wide step). The App's key queue gives
    the App's messages one more turn after a key that posted one, so the next key finds its effect."""


@dataclass
class CasesChanged(AppRequest):
    """A case was saved or created: the library reloads."""

    case_id: str | None = None


@dataclass
class StartSession(AppRequest):
    """Run `plan` (built by the launch screen as `scarbook eval` builds it) through prepare_session and
    run_session; `executor` is "local", "ray", or None for scarbook.yaml's."""

    plan: SessionPlan
    executor: str | None = None
    notes: tuple[str, ...] = ()  # plan_eval's: what of scarbook.yaml this session sets aside, said at launch


@dataclass
class RejudgeSession(AppRequest):
    """Grade session `session_id`'s kept artifacts of `case_ids` (all: empty) again under today's rubric
    and judge, with no agent runs: `scarbook rejudge`'s pipeline, shown on the live screen."""

    session_id: str
    case_ids: tuple[str, ...] = ()


@dataclass
class ResumeSession(AppRequest):
    """Run the runs session `session_id` (interrupted or cancelled) is missing, under its own id: `scarbook
    resume`'s pipeline, shown on the live screen."""

    session_id: str


class CancelSession(AppRequest):
    """Cancel the running session (the live screen asked first); finished runs are kept."""


@dataclass
class VerifyScar(AppRequest):
    """Does `case` catch its own scar? Checked in the background; the answer is a notification.
    `imported`: the draft the import screen just wrote — the notification says its certification,
    partial when the scar has no good artifact."""

    case: Case
    imported: bool = False


# -- screens to the App: where to go -------------------------------------------------------------------
@dataclass
class OpenEditor(AppRequest):
    """The case editor: on the case `case_id` (read from disk in a thread), on a `draft` to finish, or
    on a new empty case (neither)."""

    case_id: str | None = None
    draft: CaseDraft | None = None
    notes: dict[str, str] | None = None  # a figure line per rubric item, by its words (a rubric just drafted)


@dataclass
class OpenReview(AppRequest):
    """The runs of `case_id` in session `session_id`."""

    session_id: str
    case_id: str


@dataclass
class OpenImport(AppRequest):
    """The import flow (a draft case from an agent transcript), on `transcript` when it is known."""

    transcript: Path | None = None


class OpenCalibrate(AppRequest):
    """Grade the judge's verdicts; the library reloads (its calibration line) when it is left."""


class OpenSessions(AppRequest):
    """Past sessions (and the comparison of two)."""


@dataclass
class OpenSession(AppRequest):
    """One session's case table (the sessions screen's Enter)."""

    info: SessionInfo


@dataclass
class OpenComparison(AppRequest):
    """Two sessions side by side per case: `a` the older, `b` the newer (the sessions screen's c)."""

    a: SessionInfo
    b: SessionInfo


class OpenLive(AppRequest):
    """The running (or last) session."""


@dataclass
class OpenLaunch(AppRequest):
    """The launch dialog over these scopes of cases (an empty scope is not offered)."""

    selected: list[Case] = field(default_factory=list)
    filtered: list[Case] = field(default_factory=list)
    all_cases: list[Case] = field(default_factory=list)


@dataclass
class OpenFlakes(AppRequest):
    """The flake view (cases × sessions) over the trends the library read."""

    trends: Trends
    case_ids: list[str]


class BackToLibrary(AppRequest):
    """Close every screen above the library."""
