"""A session on a terminal: prepared through the session layer and its executor connected, then progress
lines (or a bar), Ctrl-C / SIGTERM / SIGHUP, and what the runs met that the user must hear once (damaged
judge-cache entries, an aborted or crashed session). `eval`, `noise`, `rejudge`, `resume` and
`verify --reproduce` drive their sessions through it."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterable

from scarbook.cli.common import safe_text, say, warn
from scarbook.models import CauseKind, RunRecord, SessionState
from scarbook.run.causes import whose_word
from scarbook.run.events import (
    BatchProgress,
    CaseDecided,
    LookMade,
    RunFinished,
    RunRetried,
    SessionFinished,
    SessionStarted,
)
from scarbook.run.plan import SessionPlan, SessionSite
from scarbook.run.ray.executor import make_executor
from scarbook.run.runner import SessionControl, run_session
from scarbook.run.session import Preparation, ReadySession
from scarbook.session.prepare import prepare_eval
from scarbook.session.resume import resume_hint
from scarbook.text import clean_text, cut_chars, plural


class Progress:
    """A rich progress bar on a terminal; plain lines otherwise (CI logs)."""

    def __init__(self, quiet: bool, total: int | None = None) -> None:
        # total None: the runs the session plans to start, as its runner counts them (SessionStarted)
        self.total, self.done, self.quiet = total or 0, 0, quiet
        self.counted = total is not None
        self.tty = sys.stderr.isatty() and not quiet
        self.bar = None
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self.task = self.bar.add_task("running", total=total)
            self.bar.start()

    def started(self, ev: SessionStarted) -> None:
        """The session opened: its runs to start (unless the caller counted them) and what it says once."""
        if not self.counted:
            self.total = ev.planned_runs
            if self.bar is not None:
                self.bar.update(self.task, total=self.total)
        self.note(f"session {ev.session.id}: {plural(len(ev.session.case_ids), 'case')}")
        for note in ev.notes:  # rubric item ids that could not be written to case.yaml
            warn(note)

    def look_made(self, ev: LookMade) -> None:
        """A look added runs: the total grows to the runs now planned (unless the caller counted them)."""
        if not self.counted:
            self.total = ev.planned_runs
            if self.bar is not None:
                self.bar.update(self.task, total=self.total)
        shown = ", ".join(ev.cases[:3]) + (f" and {len(ev.cases) - 3} more" if len(ev.cases) > 3 else "")
        self.note(f"undecided so far: {shown} — running {'it' if len(ev.cases) == 1 else 'them'} to "
                  f"{plural(ev.runs, 'run')}")

    def run_finished(self, ev: RunFinished) -> None:
        self.done += 1
        r = ev.run
        run = f"{r.case_id} #{r.k}" + (f" ({r.agent})" if r.agent else "")  # eval --agents: whose run it is
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=safe_text(f"{run} {r.status}"))
        elif not self.quiet:
            say(f"[{self.done}/{self.total}] {run}: {r.status} — {clean_text(r.reason, one_line=True)}", err=True)

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(safe_text(text), markup=False, highlight=False)  # run text is never markup
        elif not self.quiet:
            say(text, err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


async def drive(ready: ReadySession, progress: Progress, executor=None) -> SessionFinished:
    control = SessionControl()
    loop = asyncio.get_running_loop()
    interrupted = {"n": 0}
    # SIGTERM (a CI runner cancelling the job) and SIGHUP (the terminal closed) stop like Ctrl-C.
    signals = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]

    def on_signal(sig: signal.Signals) -> None:
        interrupted["n"] += 1
        if interrupted["n"] == 1:
            said = "interrupted" if sig == signal.SIGINT else f"{sig.name} received"
            progress.note(f"{said}: stopping — running agents are killed, finished runs are kept "
                          "(Ctrl-C again to quit at once)")
            control.cancel()
        else:
            for s in signals:
                loop.remove_signal_handler(s)
            raise KeyboardInterrupt

    for sig in signals:
        try:
            loop.add_signal_handler(sig, on_signal, sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    finished = None
    async for ev in run_session(ready, control=control, executor=executor):
        if isinstance(ev, RunFinished):
            progress.run_finished(ev)
        elif isinstance(ev, CaseDecided):
            who = f" ({ev.candidate} against the baseline)" if ev.candidate else ""
            progress.note(f"{ev.case_id}{who}: decided {ev.words or ev.decision} after {plural(ev.runs, 'run')}")
        elif isinstance(ev, LookMade):
            progress.look_made(ev)
        elif isinstance(ev, BatchProgress):
            progress.note(batch_progress_line(ev))
        elif isinstance(ev, RunRetried):
            progress.note(retry_note(ev))
        elif isinstance(ev, SessionStarted):
            progress.started(ev)
            if ev.stale_killed:
                warn(f"killed {plural(len(ev.stale_killed), 'process', 'processes')} an earlier scarbook left "
                     f"running when it was killed: {', '.join(ev.stale_killed)}")
        elif isinstance(ev, SessionFinished):
            finished = ev
    assert finished is not None  # run_session's last event, however the session ended
    return finished


def prepare_or_say(site: SessionSite, plan: SessionPlan) -> Preparation | None:
    """The plan prepared as every command that runs the agent prepares it — session/prepare.py's prepare_eval,
    as `eval` and the TUI's launch do: the same checks, the judge's calibration read once. None once each
    reason it cannot start is said (the command exits 2)."""
    prep = prepare_eval(site, plan)
    if prep.session is None:
        for error in prep.errors:
            say(f"scarbook: {error}", err=True)
        return None
    return prep


def connect_executor(ready: ReadySession, choice: str | None = None):
    """The executor --executor / scarbook.yaml's executor: names, connected (an unreachable cluster is a
    usage error, said before anything is recorded); None: the local pool."""
    executor = make_executor(ready.site.config.executor, ready, choice)
    if executor is not None:
        note = executor.connect()
        if note:
            warn(note)
    return executor


def drive_session(ready: ReadySession, progress: Progress, executor=None) -> SessionFinished:
    """Run the session under `progress`; then say the damaged judge-cache entries its runs met and why
    it aborted or crashed (once, here: not repeated in the summary)."""
    try:
        finished = asyncio.run(drive(ready, progress, executor))
    finally:
        progress.close()
    for note in judge_cache_notes(finished.runs):
        warn(note)
    info = finished.session
    if info.state in (SessionState.ABORTED, SessionState.CRASHED) and info.note:
        say(f"scarbook: {info.note}", err=True)
        if hint := resume_hint(info):
            say(f"scarbook: {hint}", err=True)
    return finished


def batch_progress_line(ev: BatchProgress) -> str:
    """One line per change of the judge's batch: submitted / done."""
    return (f"judge batch {ev.batch_id}: {ev.done}/{plural(ev.submitted, 'request')} done"
            + ("" if ev.status == "ended" else f" ({ev.status.replace('_', ' ')}; Ctrl-C leaves it to "
                                                 f"`scarbook resume {ev.session_id}`)"))


def retry_note(ev: RunRetried) -> str:
    """The progress line of a run retried after an infra error (the evidence is the agent's text)."""
    rule = ev.cause.rule if ev.cause is not None else CauseKind.INFRA
    evidence = clean_text(ev.cause.evidence if ev.cause is not None else "", one_line=True)
    word = whose_word(ev.cause)
    return (f"{ev.case_id} #{ev.k}: infra error ({rule}{', ' + word if word else ''}"
            f"{': ' + cut_chars(evidence, 100) if evidence else ''}) — "
            f"retrying, attempt {ev.attempt} of {ev.of}")


def judge_cache_notes(runs: Iterable[RunRecord]) -> list[str]:
    """The damaged judge-cache entries the session's runs met, each named once (they were ignored)."""
    notes: list[str] = []
    for run in runs:
        for check in run.checks:
            for note in check.judge.cache_notes if check.judge is not None else ():
                if note not in notes:
                    notes.append(note)
    return notes


