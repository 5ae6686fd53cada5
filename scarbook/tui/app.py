"""The scarbook App: owns the project and navigation, and (as a SessionHost) the session it runs.

Screens do not know each other: a screen asks for another one (or for an app-wide step: start or
cancel a session, verify a scar, reload the library) with a message from tui/messages.py, and the App,
the one place that imports every screen, handles it here. It imports each one when it is first opened: a
launch loads the library alone, which then takes keys sooner (issue 38.5).

The session itself — starting it on the live screen (a launch, a rejudge, a resume), the worker that runs
it, the coalesced updates, cancelling it and a quit that waits for it to record its end — is the App's side
in tui/session_host.py (ScarbookApp is a SessionHost).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel

from scarbook.errors import ScarbookError
from scarbook.project import Project
from scarbook.text import screen_text
from scarbook.tui.commands import ScarbookCommands
from scarbook.tui.key_queue import KeyQueue
from scarbook.tui.messages import (
    AppRequest,
    BackToLibrary,
    CasesChanged,
    OpenCalibrate,
    OpenComparison,
    OpenEditor,
    OpenFlakes,
    OpenImport,
    OpenLaunch,
    OpenLive,
    OpenReview,
    OpenSession,
    OpenSessions,
    VerifyScar,
)
from scarbook.tui.screens.library import LibraryScreen
from scarbook.tui.session_host import REFRESH_HZ, SessionHost

if TYPE_CHECKING:
    from scarbook.models import Case

# Only the library is imported with the app: it is the screen a launch shows first. Every other screen,
# and the core's use cases behind them (the runner, certification, rejudging, the judge's SDK), is imported
# when it is first opened or started, so the first screen takes keys sooner (issue 38.5;
# tests/tui/test_startup_imports.py names what a launch must not load).


PASTE_CLEANED = ("its terminal escape sequences were left out and its other control characters written as escapes "
                 "(\\x07, \\u202e): the field holds the text as you see it")


class ScarbookApp(SessionHost):
    CSS_PATH = "scarbook.tcss"
    TITLE = "scarbook"
    COMMANDS = App.COMMANDS | {ScarbookCommands}
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True, show=False),  # listed by `?`, not in every footer
                Binding("question_mark", "help", "Help"), Binding("f1", "help", "Help", show=False)]

    def __init__(self, project: Project, *, clock: Callable[[], float] = time.monotonic,
                 judge_env: Mapping[str, str] | None = None, **kw) -> None:
        super().__init__(**kw)
        self.project = project
        self.clock = clock
        self.judge_env = judge_env  # None: this process's (proc.credentials.environ()), as the CLI's
        self.keys = KeyQueue(self)  # keys typed while a screen is still opening wait for it

    def post_message(self, message: Message) -> bool:
        if isinstance(message, AppRequest) and hasattr(self, "keys"):
            self.keys.request_posted()  # the key being handled waits for this request too (key_queue.py)
        return super().post_message(message)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.keys.hold(event):
            return
        if isinstance(event, events.Paste) and not event.is_forwarded:
            event = self._pasted(event)
        await super().on_event(event)

    def _pasted(self, event: events.Paste) -> events.Paste:
        """A terminal's bracketed paste hands the focused field its text as it is — a line copied from an agent's
        log brings its colour codes, a BEL, a bidi override, which an Input would draw raw to the terminal and a
        case would save. Keys never do (an Input takes printable characters only), so the paste is where they come
        in: it is shown as every screen shows text (scarbook.text.screen_text), said, and the field keeps what it
        shows."""
        lines = event.text.replace("\r\n", "\n").replace("\r", "\n")  # a terminal pastes a newline as CR
        shown = screen_text(lines)
        if shown == event.text:
            return event
        if shown != lines:
            self.notify(PASTE_CLEANED, title="pasted text", timeout=8)
        return events.Paste(shown)

    def on_mount(self) -> None:
        self.push_screen(LibraryScreen())
        self.set_interval(1 / REFRESH_HZ, self._flush_live)

    def action_help(self) -> None:
        """The keys of the screen on top (its live bindings, hidden ones too)."""
        from scarbook.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        name = type(self.screen).__name__.removesuffix("Screen").lower() or "screen"
        self.push_screen(HelpScreen(f"the {name} screen", self.screen.active_bindings))

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification is plain text (issue 25.4): scarbook's messages quote paths, case files and
        the agent's or a transcript's text, so none is read as markup (a "[bold]" in a folder name, a
        "[/]" in an error) and their control sequences are removed. `markup` is ignored."""
        super().notify(screen_text(str(message)), title=screen_text(title, one_line=True), severity=severity,
                       timeout=timeout, markup=False)

    def judge_key_present(self) -> bool:
        from scarbook.session.plan import judge_key_in

        return judge_key_in(self.project.config.judge, self.judge_env)

    @work(exclusive=True, group="verify", exit_on_error=False)
    async def verify_in_background(self, case: Case, imported: bool = False) -> None:
        """Does the case catch its own scar? Shown as a notification and as the library badge; for a
        draft just `imported`, titled with its certification (partial without a good artifact)."""
        from scarbook.cases.verifications import CATCHES, UNVERIFIED, badge_of, partial_note
        from scarbook.session.certify import verify_cases

        try:
            [result] = (await verify_cases(self.project, [case], skip_judge=not self.judge_key_present(),
                                           env=self.judge_env)).results
        except ScarbookError as exc:
            self.notify(str(exc), title=f"verify {case.id}", severity="error")
            return
        severity: SeverityLevel = "information" if result.outcome in (CATCHES, UNVERIFIED) else "error"
        detail = result.detail
        if result.outcome == UNVERIFIED and case.judge_checks and not self.judge_key_present():
            detail += f" — set ${self.project.config.judge.api_key_env} to let the judge run"
        title = f"{case.id}: {result.outcome}"
        if imported:
            title = f"{case.id}: certification: {badge_of(result)}"
            if case.scar is None or not case.scar.good_artifact:
                title = f"{case.id}: certification partial ({badge_of(result)})"
                detail += f"\n{partial_note(result)} — mark one with g on the import screen, or add scar.good_artifact"
        # the detail quotes checks and the judge's reasons: text, never markup
        self.notify(detail, title=title, severity=severity, timeout=8, markup=False)
        self.query_library_reload()

    def query_library_reload(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, LibraryScreen):
                screen.reload()

    # -- what screens ask for (tui/messages.py) --------------------------------------------------
    def on_verify_scar(self, message: VerifyScar) -> None:
        self.verify_in_background(message.case, message.imported)

    def on_cases_changed(self, _: CasesChanged) -> None:
        self.query_library_reload()

    def on_open_editor(self, message: OpenEditor) -> None:
        """A case from disk is read in a thread (the screen shows at once; keys typed meanwhile wait)."""
        from scarbook.tui.screens.editor import EditorScreen

        if message.case_id is not None:
            self.push_screen(EditorScreen(None, folder=self.project.cases_dir / message.case_id, notes=message.notes))
        else:
            self.push_screen(EditorScreen(None, draft=message.draft))

    def on_open_review(self, message: OpenReview) -> None:
        from scarbook.tui.screens.review import ReviewScreen

        self.push_screen(ReviewScreen(message.session_id, message.case_id))

    def on_open_import(self, message: OpenImport) -> None:
        from scarbook.tui.screens.import_scar import ImportScreen

        self.push_screen(ImportScreen(message.transcript))

    def on_open_calibrate(self, _: OpenCalibrate) -> None:
        from scarbook.tui.screens.calibrate import CalibrateScreen

        self.push_screen(CalibrateScreen(), lambda _=None: self.query_library_reload())

    def on_open_sessions(self, _: OpenSessions) -> None:
        from scarbook.tui.screens.sessions import SessionsScreen

        self.push_screen(SessionsScreen())

    def on_open_session(self, message: OpenSession) -> None:
        from scarbook.tui.screens.session_table import SessionTableScreen

        self.push_screen(SessionTableScreen(message.info))

    def on_open_comparison(self, message: OpenComparison) -> None:
        from scarbook.tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(message.a, message.b))

    def on_open_live(self, _: OpenLive) -> None:
        from scarbook.tui.screens.live import LiveScreen

        if self.live is not None:
            self.push_screen(LiveScreen(self.live))

    def on_open_launch(self, message: OpenLaunch) -> None:
        from scarbook.tui.screens.launch import LaunchScreen

        self.push_screen(LaunchScreen(message.selected, message.filtered, message.all_cases))

    def on_open_flakes(self, message: OpenFlakes) -> None:
        from scarbook.tui.screens.flakes import FlakeScreen

        self.push_screen(FlakeScreen(message.trends, message.case_ids))

    def on_back_to_library(self, _: BackToLibrary) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, LibraryScreen):
            self.pop_screen()



def make_app(root: Path, *, agent_seed: int | str | None = None, demo_delay: float | None = None,
             **kw) -> ScarbookApp:
    """The app over the project at (or above) `root`. `agent_seed` seeds the demo agent and `demo_delay`
    sets its seconds per run (both go into this app's agent spec; the process environment is left alone)."""
    project = Project.discover(Path(root))
    demo = {key: value for key, value in (("seed", agent_seed), ("delay", demo_delay)) if value is not None}
    if demo and project.config.agent.get("type", "demo") == "demo":  # this app's agent: a new config, not a change
        project = replace(project, config=project.config.with_overrides(agent={**project.config.agent, **demo}))
    return ScarbookApp(project, **kw)
