"""The App's session: starting one on the live screen (an eval's launch, a rejudge, a resume), the worker that
runs it, the coalesced updates the screens get, cancelling it, and a quit that lets it record its end first.

A session is prepared on a thread (history's calibration, a rejudge's source session, a resume's plan, the
preflight: off the UI's loop), then its live screen opens and the worker starts, one session at a time; why it
cannot start is a notification. The App (not a screen) owns the worker, because popping a screen cancels that
screen's workers. The worker iterates `run_session` and folds each event into a `LiveSession`; a 10 Hz timer
(started by the App) posts one `SessionUpdated` per tick when something changed, so hundreds of
events a second cost the screens at most ten refreshes.

The runner, the rejudge and resume pipelines and the live screen are imported when a session starts, not with
the App (issue 38.5: the library takes keys sooner; tests/tui/test_startup_imports.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work

from scarbook.errors import ScarbookError
from scarbook.tui.host import Host
from scarbook.tui.messages import (
    CancelSession,
    RejudgeSession,
    ResumeSession,
    SessionEnded,
    SessionUpdated,
    StartSession,
)

if TYPE_CHECKING:
    from textual.worker import Worker

    from scarbook.run.runner import SessionControl
    from scarbook.run.session import Preparation, ReadySession, SessionPlan
    from scarbook.views.live_state import LiveSession

REFRESH_HZ = 10
SESSION_WIND_DOWN_S = 10.0  # how long a quit waits for a cancelled session to record its end


class SessionHost(Host):
    """ScarbookApp's session side (the App is its one subclass)."""

    clock: Callable[[], float]  # the live fold's clock (the App's)

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.live = None
        self.preparing = False  # a session is being prepared on a thread (_prepare)
        self.control: SessionControl | None = None
        self._session_worker: Worker | None = None  # the running session's, awaited by a quit (quit_after_session)
        self._posted_version = -1

    if TYPE_CHECKING:
        def query_library_reload(self) -> None: ...  # the App's: the library reads its rows again

    @property
    def session_running(self) -> bool:
        return self.live is not None and not self.live.done

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

    def _flush_live(self) -> None:
        """At most REFRESH_HZ times a second: one SessionUpdated (or SessionEnded) to the screens that watch
        the session, when the live fold changed since the last."""
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
