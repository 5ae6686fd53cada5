"""The scarbook App: owns the project, the run worker, the live-session fold, and navigation.

Screens do not know each other: a screen asks for another one (or for an app-wide step: start or
cancel a session, verify a scar, reload the library) with a message from tui/messages.py, and the App,
the one place that imports every screen, handles it here. It imports each one when it is first opened: a
launch loads the library alone, which then takes keys sooner (issue 38.5).

The App (not a screen) owns the session worker, because popping a screen cancels that screen's
workers. The worker iterates `run_session` and folds each event into a `LiveSession`; a 10 Hz timer
posts one `SessionUpdated` per tick when something changed, so hundreds of events a second cost the
screens at most ten refreshes.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from scarbook.text import clean_text
from scarbook.tui.commands import ScarbookCommands
from scarbook.tui.host import Host
from scarbook.tui.key_queue import KeyQueue
from scarbook.tui.messages import (
    AppRequest,
    BackToLibrary,
    CancelSession,
    CasesChanged,
    OpenCalibrate,
    OpenEditor,
    OpenFlakes,
    OpenImport,
    OpenLaunch,
    OpenLive,
    OpenReview,
    OpenSessions,
    RejudgeSession,
    ResumeSession,
    SessionEnded,
    SessionUpdated,
    StartSession,
    VerifyScar,
)
from scarbook.tui.screens.library import LibraryScreen

if TYPE_CHECKING:
    from textual.worker import Worker

    from scarbook.models import Case
    from scarbook.run.runner import SessionControl
    from scarbook.run.session import Preparation, ReadySession, SessionPlan
    from scarbook.views.live_state import LiveSession

# Only the library is imported with the app: it is the screen a launch shows first. Every other screen,
# and the core's use cases behind them (the runner, certification, rejudging, the judge's SDK), is imported
# when it is first opened or started, so the first screen takes keys sooner (issue 38.5;
# tests/tui/test_startup_imports.py names what a launch must not load).

REFRESH_HZ = 10
SESSION_WIND_DOWN_S = 10.0  # how long a quit waits for a cancelled session to record its end


class ScarbookApp(Host):
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
        self.live: LiveSession | None = None
        self.preparing = False  # a session is being prepared on a thread (_prepare)
        self.control: SessionControl | None = None
        self._session_worker: Worker | None = None  # the running session's, awaited by a quit (quit_after_session)
        self._posted_version = -1
        self.keys = KeyQueue(self)  # keys typed while a screen is still opening wait for it

    def post_message(self, message: Message) -> bool:
        if isinstance(message, AppRequest) and hasattr(self, "keys"):
            self.keys.request_posted()  # the key being handled waits for this request too (key_queue.py)
        return super().post_message(message)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and self.keys.hold(event):
            return
        await super().on_event(event)

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

    # -- sessions -----------------------------------------------------------------------------
    @property
    def session_running(self) -> bool:
        return self.live is not None and not self.live.done

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification is plain text (issue 25.4): scarbook's messages quote paths, case files and
        the agent's or a transcript's text, so none is read as markup (a "[bold]" in a folder name, a
        "[/]" in an error) and their control sequences are removed. `markup` is ignored."""
        super().notify(clean_text(str(message)), title=clean_text(title, one_line=True), severity=severity,
                       timeout=timeout, markup=False)

    def judge_key_present(self) -> bool:
        from scarbook.session.plan import judge_key_in

        return judge_key_in(self.project.config.judge, self.judge_env)

    def start_session(self, plan: SessionPlan, executor: str | None = None, notes: tuple[str, ...] = ()) -> None:
        """Prepare the session (the same pipeline as `scarbook eval`) on a thread; on configuration errors
        show them and start nothing, else say `notes` (plan_eval's), open the live screen and start the worker
        (one at a time)."""
        self._refuse_second_session()
        from scarbook.run.plan import SessionSite
        from scarbook.run.ray.executor import make_executor
        from scarbook.session.prepare import prepare_eval

        site = SessionSite.of(self.project)
        self._prepare(lambda: (prepare_eval(site, plan),
                               lambda ready: make_executor(site.config.executor, ready, executor)),
                      "cannot start the session", notes)

    def start_rejudge(self, session_id: str, case_ids: tuple[str, ...] = ()) -> None:
        """`scarbook rejudge`'s pipeline (tools/rejudge.py), prepared on a thread: the session's kept artifacts
        graded again, no agent runs, shown on the live screen; why not, as a notification."""
        self._refuse_second_session()
        from scarbook.run.plan import SessionSite
        from scarbook.tools.rejudge import RejudgeExecutor, pick_rejudge, prepare_rejudge

        project, judge_env = self.project, self.judge_env

        def prepare() -> tuple[Preparation, Callable[[ReadySession], object]]:
            pick = pick_rejudge(project, session_id, case_ids)
            return (prepare_rejudge(SessionSite.of(project), pick, judge_env=judge_env),
                    lambda ready: RejudgeExecutor(ready.concurrency, pick))

        self._prepare(prepare, "cannot rejudge")

    def start_resume(self, session_id: str) -> None:
        """`scarbook resume`'s pipeline, prepared on a thread: session/resume.py plans the runs the session
        misses (held by this process from then on) and session/prepare.py prepares them as eval's, at the site
        with the isolation the session ran; shown on the live screen with the runs it held. Why not (a case or
        the agent changed, the session is held elsewhere): resume.py's own words, as a notification."""
        self._refuse_second_session()
        from scarbook.run.plan import SessionSite
        from scarbook.run.ray.executor import make_executor
        from scarbook.session.prepare import prepare_eval
        from scarbook.session.resume import plan_resume

        project = self.project

        def prepare() -> tuple[Preparation, Callable[[ReadySession], object]]:
            history = project.history
            info = history.resolve(session_id)
            planned = plan_resume(SessionSite.of(project), project.load_cases(), info)
            try:
                prep = prepare_eval(planned.site, planned.plan)
            except BaseException:
                history.let_go(info.id)
                raise
            if prep.session is None:  # it does not start (one that starts is let go as it finishes)
                history.let_go(info.id)
            return prep, lambda ready: make_executor(planned.site.config.executor, ready, None)

        self._prepare(prepare, "cannot resume")

    def _refuse_second_session(self) -> None:
        if self.session_running or self.preparing:
            raise ScarbookError("a session is already running — wait for it or cancel it (Escape on the live screen)")

    def _prepare(self, prepare: Callable[[], tuple[Preparation, Callable[[ReadySession], object]]],
                 refused: str, notes: tuple[str, ...] = ()) -> None:
        """`prepare` reads history (the judge's calibration, a rejudge's source session) and preflights the
        agent and the judge: on a thread, off the UI's loop (it returns the preparation and the session's
        executor maker). Keys typed meanwhile wait for the live screen; `refused` titles why it cannot start."""
        self.preparing = True
        self.keys.wait_for_app()
        self._prepare_then_launch(prepare, refused, notes)

    @work(group="prepare", exit_on_error=False)
    async def _prepare_then_launch(self, prepare: Callable[[], tuple[Preparation, Callable[[ReadySession], object]]],
                                   refused: str, notes: tuple[str, ...]) -> None:
        try:
            try:
                prep, executor_for = await asyncio.to_thread(prepare)
            except ScarbookError as exc:
                self.notify(str(exc), title=refused, severity="error", timeout=15, markup=False)
                return
            except Exception as exc:  # a bug below: said, never a worker ending silently with the keys held
                self.notify(f"{type(exc).__name__}: {exc}", title=refused, severity="error", timeout=15, markup=False)
                return
            self._launch(prep, executor_for, notes)
        finally:  # the keys typed meanwhile go on: to the live screen, or back to where they were typed
            self.preparing = False
            self.keys.app_ready()

    def _launch(self, prep: Preparation, executor_for: Callable[[ReadySession], object],
                notes: tuple[str, ...] = ()) -> None:
        """On configuration errors show them and start nothing, else open the live screen and start
        the worker (one at a time); `notes` (plan_eval's) are said first, as `scarbook eval` warns them."""
        from scarbook.run.runner import SessionControl
        from scarbook.stats.plans import grouped
        from scarbook.tui.screens.live import LiveScreen
        from scarbook.views.live_state import LiveSession

        if prep.errors or prep.session is None:
            self.notify("\n".join(prep.errors), title="cannot start the session", severity="error", timeout=15)
            return
        if notes:  # what of scarbook.yaml this session sets aside (judge.batch under adaptive), before the runs
            self.notify("\n".join(n.replace("--runs auto", "adaptive") for n in notes),
                        title="scarbook.yaml set aside", severity="warning", timeout=12)
        for note in prep.notes:  # an unconfined agent: what it can reach, once per session
            self.notify(note, title="isolation", severity="warning", timeout=10)
        if prep.undecidable:  # before the runs: cases this plan cannot call above their threshold, by reason
            lines = [line.replace("--runs auto", "adaptive") for line in grouped(prep.undecidable)]
            self.notify("\n".join(lines), title="this plan cannot decide", severity="warning", timeout=12)
        if prep.warnings:  # before the runs: what adaptive can decide that the thresholds do not say
            lines = [line.replace("--runs auto", "adaptive").replace("a fixed --runs N", "a fixed number of runs "
                                                                      "(adaptive off)") for line in prep.warnings]
            self.notify("\n".join(lines), title="adaptive decides within a margin", severity="warning", timeout=12)
        plan = prep.session.plan
        self.live = LiveSession(plan.cases, plan.runs, self.project.config, clock=self.clock,
                                agent_names=prep.session.agent_names,
                                calibration=prep.calibration,  # read once, as the session was prepared
                                held=plan.resumed.held if plan.resumed is not None else {})
        self.control = SessionControl()
        self._posted_version = -1
        self.push_screen(LiveScreen(self.live))
        self._session_worker = self._run_session(prep.session, self.live, self.control, executor_for(prep.session))

    def cancel_session(self) -> None:
        if self.control is not None and self.session_running:
            self.control.cancel()

    async def action_quit(self) -> None:  # Ctrl+Q: at once, without asking, but not abruptly
        self.quit_after_session()

    def quit_after_session(self) -> None:
        """Exit; a running session is cancelled first and let record its end (agents killed, state cancelled,
        finished runs kept). Textual cancels workers at exit without waiting for them, so the session's close could
        be cut off: left 'running' (read as interrupted), its agents' leftovers not swept."""
        worker = self._session_worker
        if worker is None or worker.is_finished:
            self.exit()
            return
        self.cancel_session()

        async def wind_down() -> None:
            with contextlib.suppress(Exception):  # cancelled, failed or slow: the app exits all the same
                await asyncio.wait_for(worker.wait(), SESSION_WIND_DOWN_S)
            self.exit()

        self.run_worker(wind_down(), group="quit", exit_on_error=False)

    @work(exclusive=True, group="session", exit_on_error=False)
    async def _run_session(self, ready: ReadySession, live: LiveSession, control: SessionControl,
                           executor=None) -> None:
        from scarbook.models import SessionState
        from scarbook.run.events import SessionStarted
        from scarbook.run.runner import run_session

        try:
            if executor is not None:  # joining a Ray cluster takes seconds: not on the UI's loop
                note = await asyncio.to_thread(executor.connect)
                if note:
                    self.notify(note, title="Ray", severity="warning", timeout=15)
            async for ev in run_session(ready, control=control, executor=executor):
                live.apply(ev)  # cheap bookkeeping; the screen refresh is coalesced by _flush_live
                if isinstance(ev, SessionStarted) and ev.notes:  # rubric item ids not written to case.yaml
                    self.notify("\n".join(ev.notes), title="rubric item ids", severity="warning", timeout=10)
        except ScarbookError as exc:
            live.finish(str(exc))
        finally:
            info = live.info
            if info is not None and info.state in (SessionState.ABORTED, SessionState.CRASHED):
                live.finish(info.note)
            if not live.done:
                live.finish()
            if ready.plan.resumed is not None:  # (already let go if it finished: the runner did)
                ready.site.history.let_go(ready.plan.resumed.info.id)
            self._flush_live()

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

    def _flush_live(self) -> None:
        live = self.live
        if live is None or live.version == self._posted_version:
            return
        self._posted_version = live.version
        message = SessionEnded(live) if live.done else SessionUpdated(live)
        for screen in self.screen_stack:
            if getattr(screen, "watches_session", False):
                screen.post_message(message)
        if live.done:
            self.query_library_reload()

    def query_library_reload(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, LibraryScreen):
                screen.reload()

    # -- what screens ask for (tui/messages.py) --------------------------------------------------
    def on_start_session(self, message: StartSession) -> None:
        try:
            self.start_session(message.plan, message.executor, notes=message.notes)
        except ScarbookError as exc:
            self.notify(str(exc), title="cannot start the session", severity="error", timeout=15, markup=False)

    def on_rejudge_session(self, message: RejudgeSession) -> None:
        try:
            self.start_rejudge(message.session_id, message.case_ids)
        except ScarbookError as exc:
            self.notify(str(exc), title="cannot rejudge", severity="error", timeout=15, markup=False)

    def on_resume_session(self, message: ResumeSession) -> None:
        try:
            self.start_resume(message.session_id)
        except ScarbookError as exc:
            self.notify(str(exc), title="cannot resume", severity="error", timeout=15, markup=False)

    def on_cancel_session(self, _: CancelSession) -> None:
        self.cancel_session()

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
