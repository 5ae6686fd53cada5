"""The session runner: a ready session's cases x runs through an executor, as an async generator of events.

    async for event in run_session(prepare_session(SessionSite.of(project), plan).session): ...

Each run is recorded in history the moment it finishes, so cancelling, a crash or Ctrl-C keeps every
finished run. Runs that were still going are killed (whole process group) and not recorded.

Error policy: an unexpected exception inside one run makes that run an `error` (its traceback
written beside the session's history) and the session goes on; a run the machine failed (its cause
is `infra`, scarbook.run.causes) runs again, at most retry_infra times, every attempt kept
(scarbook.run.attempts); a rejected judge key records the
run that met it, stops the session and ends it `aborted`; an unexpected exception in the runner
itself ends the session `crashed`, with the traceback in <history>/<session>/crash.txt. Every
ending is a SessionFinished event; nothing escapes as a traceback.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from scarbook.agents import PythonAgent
from scarbook.cases.io import case_digest
from scarbook.cases.item_ids import write_item_ids
from scarbook.errors import AbortSession
from scarbook.history.store import now_iso
from scarbook.judge.cache import FOLDER as CACHE_FOLDER
from scarbook.judge.cache_trust import Window, close_window, open_window
from scarbook.judge.grader import is_batched
from scarbook.models import Case, RunRecord, RunStatus, SessionInfo, SessionState
from scarbook.models.session_parts import GateRecord, RunPlace
from scarbook.models.words import ExecutorType, Isolation
from scarbook.proc import credentials, reaper
from scarbook.proc.leftovers import kill_stale, project_tag
from scarbook.run.attempts import RunAttempts, one_line, write_traceback
from scarbook.run.blocks import agent_for, runs_of_blocks, statuses_by_agent
from scarbook.run.cause_patterns import all_patterns, project_patterns
from scarbook.run.causes import is_infra
from scarbook.run.events import CaseDecided, Event, LookMade, RunFinished, SessionFinished, SessionStarted
from scarbook.run.executor import Executor, LocalExecutor
from scarbook.run.gate import adaptive_words, calibration_record, corrected_evidence
from scarbook.run.plan import SEQUENTIAL, Resumed
from scarbook.run.recorded import uncounted_calls
from scarbook.run.session import DecideFn, ReadySession
from scarbook.run.session_run import RunContext
from scarbook.run.workspace import Janitor, SeedManifest
from scarbook.stats.decisions import make_extender
from scarbook.stats.head_to_head import MARGIN, CompareExtender
from scarbook.stats.rates import effective_threshold
from scarbook.text import plural

if TYPE_CHECKING:
    from scarbook.judge.batch import BatchGrader


@dataclass
class SessionControl:
    """Handed to run_session; `cancel()` stops launching and kills running agents."""

    cancelled: bool = False
    driver: asyncio.Task | None = None  # the task that launches the runs (set by run_session)

    def cancel(self) -> None:
        self.cancelled = True
        if self.driver is not None:
            self.driver.cancel()


@dataclass
class _CaseState:
    case: Case
    todo: list[int]  # the run numbers k still to start (all of 1..N, or a shard's share)
    started: int = 0
    passes: int = 0  # in the launch-order prefix the sequential rule has read (--runs auto)
    fails: int = 0
    decided: str | None = None
    launched: list[int] = field(default_factory=list)  # run numbers k in the order they started
    results: dict[int, RunRecord] = field(default_factory=dict)  # k -> the finished run
    read: int = 0  # how many of `launched` the sequential rule has read, in launch order

    def statuses(self) -> list[str]:
        return [self.results[k].status for k in sorted(self.results)]


@dataclass
class _Schedule:
    cases: list[_CaseState]
    runs: int
    decide: DecideFn | None
    max_cost: float | None
    judge_spent: float = 0.0  # measured by scarbook: the judge's replies' tokens at its prices
    agent_spent: float = 0.0  # reported by the agent ($SCARBOOK_USAGE): validated, never negative
    stop_reason: SessionState | None = None
    # a run's model call the recorder could not count (still going past SETTLE_S after its agent ended): under
    # --max-cost the session stops on it, as the spend it would be checked against is no longer known
    uncounted: str = ""
    abort_message: str = ""
    cursor: int = 0
    # --runs auto: how far a case may launch past the prefix the rule has read (the concurrency), so a
    # slow run cannot let the others launch runs its decision will not need
    lookahead: int | None = None
    records: list[RunRecord] = field(default_factory=list)
    unrecorded: list[RunRecord] = field(default_factory=list)  # finished, but history refused them
    # `undecided: more` (and --runs auto with several agents): once every run so far has finished, the
    # run count each case still open needs next, from every case's finished runs (k -> record)
    extend: Callable[[dict[str, dict[int, RunRecord]]], dict[str, int]] | None = None
    # told (the cases still open, the run count they go to, the runs now planned in all) when a look adds runs
    looked: Callable[[tuple[str, ...], int, int], None] | None = None

    def record(self, history, record: RunRecord) -> None:
        try:
            history.record_run(record)
        except Exception:
            self.unrecorded.append(record)  # kept beside crash.txt: a finished run is not lost
            raise
        self.records.append(record)

    def next_job(self, control: SessionControl) -> tuple[Case, int] | None:
        """Round-robin over cases so every case fills in together."""
        if control.cancelled or self.stop_reason:
            return None
        if self.max_cost is not None and self.judge_spent + self.agent_spent >= self.max_cost:
            self.stop_reason = SessionState.STOPPED_BUDGET
            return None
        job = self._pick()
        if job is None and self.extend is not None and all(len(st.results) == st.started for st in self.cases):
            more = self.extend({st.case.id: st.results for st in self.cases})
            for st in self.cases:
                have = len(st.launched)
                st.todo.extend(range(have + 1, more.get(st.case.id, have) + 1))
            if more and self.looked is not None:
                self.looked(tuple(more), max(more.values()), sum(len(st.launched) + len(st.todo) for st in self.cases))
            job = self._pick()
        return job

    def _pick(self) -> tuple[Case, int] | None:
        for _ in range(len(self.cases)):
            st = self.cases[self.cursor % len(self.cases)]
            self.cursor += 1
            ahead = len(st.launched) - st.read
            if st.decided is None and st.todo and (self.lookahead is None or ahead < self.lookahead):
                st.started += 1
                st.launched.append(st.todo.pop(0))
                return st.case, st.launched[-1]
        return None




def git_revision(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


async def run_session(ready: ReadySession, *, control: SessionControl | None = None,
                      executor: Executor | None = None) -> AsyncIterator[Event]:
    """Run the session; every event as it happens, SessionFinished last (whatever happened)."""
    with credentials.withheld(_withheld(ready)):
        async with aclosing(_run_session(ready, control, executor)) as events:  # closed with this one
            async for event in events:
                yield event


def _withheld(ready: ReadySession) -> list[str]:
    """The variables a session keeps out of scarbook's environment while its agents run (an agent can
    read /proc/<scarbook>/environ): every model-API credential and the judge's key. None for a python
    agent: it runs inside scarbook's process and reads os.environ itself."""
    if isinstance(ready.agent, PythonAgent):
        return []
    judge = ready.judge.settings if ready.judge is not None else ready.site.config.judge
    return [*credentials.CREDENTIALS, judge.api_key_env]


def _write_item_ids(ready: ReadySession) -> list[str]:
    """The session's first judgements: its judged cases' rubric item ids into their case.yaml, now that it
    has started (cases/item_ids.py); what could not be written, one line each."""
    return write_item_ids(c for c in ready.plan.cases if c.judge_checks)


async def _run_session(ready: ReadySession, control: SessionControl | None,
                       executor: Executor | None) -> AsyncGenerator[Event, None]:
    # what a killed scarbook left running for this project (its agents' setsid grandchildren: every
    # process's environment is read), and git's revision (a program): on a thread, off the loop
    stale, revision = await asyncio.to_thread(_before_session, ready.site.root)
    session = _SessionRun(ready, control or SessionControl(), executor, revision)
    notes = await asyncio.to_thread(_write_item_ids, ready) if ready.writes_item_ids else []
    yield SessionStarted(session.info, planned_runs=sum(len(st.todo) for st in session.schedule.cases),
                         stale_killed=stale, notes=notes)
    recorder = session.attempts.recorder
    if recorder is not None:
        await recorder.start(session.pool.recorder_hosts())  # before the first run opens its door
    window = await asyncio.to_thread(_open_unconfined, ready)
    driver = session.launch()
    try:
        while (event := await session.queue.get()) is not None:
            yield event
        session.settle(driver)
        if session.batch_waits():  # eval --judge-batch: the runs are in, the judge's requests go now
            driver = session.launch_judging()
            while (event := await session.queue.get()) is not None:
                yield event
            if not driver.cancelled():  # its failure is the session's, said and kept: never an unread task's
                session.settle(driver)
    finally:
        await session.stop_if_abandoned(driver)
        if recorder is not None:
            await recorder.stop()
        if window is not None:  # its agents are gone: what they could have written to the verdict cache is set aside
            await asyncio.to_thread(close_window, ready.site.workspaces_dir / CACHE_FOLDER, window)
        session.close()
        await _close_slots(ready)
    yield SessionFinished(session.info, sorted(session.schedule.records, key=lambda r: (r.case_id, r.k)))


def _open_unconfined(ready: ReadySession) -> Window | None:
    """An unconfined session's window on the verdict cache (judge/cache_trust.py): while its agents run,
    no session uses an entry changed in it, and at its end the sandboxed part's changed entries move
    aside. None for a sandboxed session, or one that runs no agent (rejudge)."""
    if ready.isolation is None or ready.isolation.ran != Isolation.NONE:
        return None
    window = open_window(ready.site.workspaces_dir / CACHE_FOLDER)
    cache = getattr(ready.judge, "cache", None)
    if cache is not None:
        cache.window = window
    return window


def _before_session(root: Path) -> tuple[list[str], str | None]:
    """What a killed scarbook left: its agents' processes killed; and git's revision."""
    return kill_stale(project_tag(root)), git_revision(root)


async def _close_slots(ready: ReadySession) -> None:
    """The session's sandbox slots ended and reaped (isolation: slot)."""
    for agent in {id(a): a for a in (ready.agent, *ready.agents.values()) if a is not None}.values():
        slots = getattr(agent, "slots", None)
        if slots is not None:
            await slots.close()


def open_session(ready: ReadySession, executor: RunPlace | None, revision: str | None) -> SessionInfo:
    """Claim the session's id (a shard's, or a new one) and record that it started, with where its
    runs execute (`executor`: the pool's where(); this machine when None) and at which git `revision`."""
    site, plan, judge = ready.site, ready.plan, ready.judge
    cfg, history, shard = site.config, site.history, plan.shard
    sid = history.claim_session_id(shard.folder_id) if shard else history.new_session_id()
    # runs_per_case is the most runs a case can get (history accepts k from 1 to it): --max-runs
    # under `undecided: more`
    names = ready.agent_names
    info = SessionInfo(id=sid, label=plan.label, started_at=now_iso(),
                       runs_per_case=runs_of_blocks(ready.looks[-1], names),
                       case_ids=[c.id for c in plan.cases],
                       fingerprint=cfg.fingerprint([one.settings for one in plan.agents] if plan.agents else None),
                       agent=", ".join(f"{n}: {a.label}" for n, a in ready.agents.items()) or ready.agent.label,
                       judge_model=cfg.judge_model if judge is not None else "",
                       git_revision=revision,
                       case_digests={c.id: case_digest(c) for c in plan.cases}, partial=ready.partial,
                       shard=shard.header() if shard else None,
                       gate=GateRecord(**ready.gate.to_dict(), looks=tuple(ready.looks),
                                       judge_rates={c: list(r) for c, r in ready.judge_rates.items()},
                                       calibration=calibration_record(ready.calibration, [c.id for c in plan.cases]),
                                       **_rule_record(ready)),
                       rerun_of=plan.rerun_of, executor=executor or RunPlace(ExecutorType.LOCAL),
                       isolation=ready.isolation,
                       agents=([one.entry(ready.agents[one.name].label) for one in plan.agents] if ready.compared
                               else list(ready.recorded_agents)))
    history.start_session(info)
    return info


def _rule_record(ready: ReadySession) -> dict:
    """--runs auto: its rule and the threshold of each case it decides against, recorded so `scarbook resume`
    goes on with the same rule (nothing for a fixed N)."""
    if ready.decide is None:
        return {}
    cfg = ready.site.config
    return {"rule": SEQUENTIAL, "thresholds": {c.id: effective_threshold(c, cfg.threshold) for c in ready.plan.cases}}


def resume_session(ready: ReadySession, resumed: Resumed) -> SessionInfo:
    """`scarbook resume`: the session it takes up running again under its own id and record (its start, agents,
    isolation, gate as recorded), the runs it holds counted with those it records now."""
    info = replace(resumed.info, state=SessionState.RUNNING, finished_at=None, note="")
    ready.site.history.resume_session(info, {cid: list(runs) for cid, runs in resumed.held.items()})
    return info


class _SessionRun:
    """One session under way: what run_session's named steps share."""

    def __init__(self, ready: ReadySession, control: SessionControl, executor: Executor | None,
                 revision: str | None) -> None:
        site, plan, judge = ready.site, ready.plan, ready.judge
        cfg = site.config
        self.ready, self.control, self.history = ready, control, site.history
        resumed = plan.resumed
        self.info = (resume_session(ready, resumed) if resumed is not None else
                     open_session(ready, executor.where() if executor is not None else None, revision))
        sid = self.info.id
        cases, shard, looks, names = plan.cases, plan.shard, ready.looks, ready.agent_names
        runs = runs_of_blocks(looks[-1], names)
        jobs = (shard.jobs([c.id for c in cases], runs, whole_cases=bool(names)) if shard else
                {c.id: list(plan.jobs[c.id]) if plan.jobs is not None else
                 list(range(1, runs_of_blocks(looks[0], names) + 1)) for c in cases})
        self.schedule = _Schedule([_CaseState(c, jobs[c.id]) for c in cases], runs, ready.decide, plan.max_cost)
        if ready.decide is not None:
            self.schedule.lookahead = max(1, ready.concurrency)
        if len(looks) > 1 and names:  # --runs auto or undecided: more, several agents: looks in blocks
            self.schedule.extend = _compare_extender(ready, names, looks, self.say_decided)
        elif len(looks) > 1:  # undecided: more
            self.schedule.extend = _more_extender(ready, looks, self.say_case_decided)
        self.states = {st.case.id: st for st in self.schedule.cases}
        self.queue: asyncio.Queue = asyncio.Queue()
        self.schedule.looked = lambda open_cases, to, planned: self.queue.put_nowait(
            LookMade(sid, planned, open_cases, to))
        if resumed is not None:
            self.take_up(resumed)
        self.ctx = RunContext(sid, str(site.workspaces_dir / sid), cfg.timeout_s, plan.timeout_s,
                              judge.settings.max_artifact_bytes if judge is not None else None, plan.judge_skipped_why,
                              prices=cfg.judge.prices, project_tag=project_tag(site.root),
                              max_read=cfg.max_read_bytes)
        manifests: dict[str, SeedManifest] = {}  # each case's seed, read and hashed once per session
        self.janitor = Janitor()
        self.pool = executor or LocalExecutor(ready.concurrency)
        self.attempts = RunAttempts(self.ctx, self.pool, ready.agent, judge, manifests, self.history.dir / sid,
                                    self.queue.put_nowait, all_patterns(project_patterns(cfg.cause_patterns)),
                                    ready.retry_infra)
        if ready.compared:
            self.attempts.agents = dict(ready.agents)
        if ready.record is not None:  # record: (or --record / --replay): one proxy for every run
            from scarbook.record.proxy import Recorder  # aiohttp loads only for a session that records

            self.attempts.recorder = Recorder(ready.record, ready.replay)
            self.attempts.price = cfg.judge.price_usage

    def take_up(self, resumed: Resumed) -> None:
        """`scarbook resume`: each case starts from the runs the session holds, as if they had just run (the
        looks and --runs auto's rule read them first, in k order), and runs only those it is missing."""
        for st in self.schedule.cases:
            held = resumed.held.get(st.case.id, {})
            st.launched, st.results, st.started = sorted(held), dict(held), len(held)
            self.decide(st)
            if st.decided is not None:
                st.todo.clear()

    # -- while it runs ---------------------------------------------------------------------------
    def launch(self) -> asyncio.Future:
        """Start launching runs; the queue gets None once the driver is done (however it ended)."""
        driver = asyncio.ensure_future(self.drive())
        self.control.driver = driver
        driver.add_done_callback(lambda _t: self.queue.put_nowait(None))
        return driver

    async def drive(self) -> None:
        async for _ in self.pool.run(lambda: self.schedule.next_job(self.control), self.work):
            pass

    async def work(self, job: tuple[Case, int]) -> RunRecord:
        """One run: its attempts, then record it, count it and let the decider see it."""
        case, k = job
        name = agent_for(str(self.info.shard.session) if self.info.shard else self.info.id, case.id, k, self.ready.agent_names)
        record, abort, retry_spent = await self.attempts.run(case, k, lambda: self.control.cancelled, agent=name)
        self.schedule.agent_spent += retry_spent  # the attempts the machine failed cost money too
        self.keep(record)
        st = self.states[case.id]
        st.results[k] = record
        if abort is not None:
            if not self.schedule.abort_message:
                self.schedule.abort_message = abort.message
            self.control.cancel()  # kill the other runs: each would meet the same rejection
            return record
        self.decide(st)
        return record

    def keep(self, record: RunRecord) -> None:
        """Prune a passing run's workspace (unless keep: all), record the run, count its spend, say it."""
        if record.status == RunStatus.PASS and not self.ready.keep_all:
            self.janitor.remove(record.workspace)
            record.workspace_kept = False
        self.schedule.record(self.history, record)
        self.schedule.judge_spent += max(record.judge_usage.cost_usd, 0.0)
        self.schedule.agent_spent += max(record.agent_usage.cost_usd, 0.0)
        uncounted = uncounted_calls(record) if self.schedule.max_cost is not None else []
        if uncounted and not self.schedule.uncounted:  # the spend is no longer known: --max-cost cannot hold it
            self.schedule.uncounted = f"{record.case_id} #{record.k}'s {uncounted[0]}"
            self.schedule.stop_reason = self.schedule.stop_reason or SessionState.STOPPED_BUDGET
        self.queue.put_nowait(RunFinished(record))

    def decide(self, st: _CaseState) -> None:
        """--runs auto: stop the case once the evidence decides it (undecided once all its runs are in).

        The rule reads the results in the order their runs started, never the order they finished:
        result k is read only once 1..k-1 are in. Otherwise slow failures (timeouts) would reach it
        after fast passes and tilt it towards "above". It stops at the first crossing."""
        decide = self.ready.decide
        if decide is None or st.decided is not None:
            return
        while st.decided is None and st.read < len(st.launched) and st.launched[st.read] in st.results:
            record = st.results[st.launched[st.read]]
            st.read += 1
            if record.status == RunStatus.PASS:
                st.passes += 1
            elif record.status == RunStatus.FAIL and not is_infra(record):  # no evidence about the agent
                st.fails += 1
            else:
                continue  # errors are not evidence
            st.decided = decide(st.case, st.passes, st.fails)
        if st.decided is None and st.read >= self.schedule.runs:
            st.decided = "undecided"
        if st.decided is not None:
            self.info.decisions[st.case.id] = st.decided
            words = adaptive_words(st.decided, effective_threshold(st.case, self.ready.site.config.threshold))
            self.queue.put_nowait(CaseDecided(self.info.id, st.case.id, st.decided, st.passes + st.fails, words=words))

    def say_case_decided(self, case_id: str, decision: str, runs: int) -> None:
        """`undecided: more`: a look decided the case; no more runs of it start."""
        self.queue.put_nowait(CaseDecided(self.info.id, case_id, decision, runs))

    def say_decided(self, case_id: str, candidate: str, call: str, runs: int) -> None:
        """A session of several agents: a candidate's comparison of a case was decided at a look."""
        self.queue.put_nowait(CaseDecided(self.info.id, case_id, call, runs, candidate))

    # -- eval --judge-batch ------------------------------------------------------------------------
    def batch_waits(self) -> bool:
        """The runs ended as planned (or at --max-cost) and a batch grader holds waiting checks."""
        judge = self.ready.judge
        return (is_batched(judge) and self.info.state == SessionState.RUNNING and not self.schedule.abort_message
                and not self.control.cancelled)

    def launch_judging(self) -> asyncio.Future:
        task = asyncio.ensure_future(self.judge_batch())
        self.control.driver = task  # Ctrl-C now stops the wait; the session stays judging
        task.add_done_callback(lambda _t: self.queue.put_nowait(None))
        return task

    async def judge_batch(self) -> None:
        # Loaded here, not at the top: it imports the SDK, which only a session with a judge may load.
        from scarbook.run import batch_session as batch

        grader = cast("BatchGrader", self.ready.judge)  # a --judge-batch session's grader
        waiting = batch.waiting_checks(self.schedule.records, grader.take)
        if not waiting:
            return
        plan = batch.BatchPlan(waiting, {o: str(p) for o, p in self.ready.plan.reports.items()},
                               self.ready.plan.against)
        try:
            await batch.judge_in_batch(self.history, self.info, grader.judge, plan,
                                       self.schedule.records, self.attempts.patterns, grader.settings.batch_poll_s,
                                       self.queue.put_nowait)
        except batch.StillJudging as why:
            self.info.note = batch.batch_note(self.info, str(why))
        except AbortSession as exc:
            self.schedule.abort_message = exc.message
        except asyncio.CancelledError:
            self.info.note = batch.batch_note(self.info, "scarbook stopped waiting for it")

    # -- how it ended ----------------------------------------------------------------------------
    def settle(self, driver: asyncio.Future) -> None:
        """The driver finished: cancelled, or crashed (the traceback written, the refused runs kept)."""
        info = self.info
        try:
            driver.result()
        except asyncio.CancelledError:
            info.state = SessionState.CANCELLED
        except Exception as exc:  # noqa: BLE001 — the runner itself failed: say so, keep what was recorded
            path = write_traceback(self.history.dir / info.id / "crash.txt", exc, Path(self.ctx.session_dir))
            info.state = SessionState.CRASHED
            info.note = f"session crashed: {one_line(exc)} — traceback in {path}" + _save_unrecorded(
                self.schedule.unrecorded, path if isinstance(path, Path) else None)

    async def stop_if_abandoned(self, driver: asyncio.Future) -> None:
        """The consumer went away (Ctrl-C, closed generator) while runs went on: stop them."""
        if not driver.done():
            self.control.cancelled = True
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)
            if self.info.state != SessionState.JUDGING:  # a submitted batch is collected by `scarbook resume`
                self.info.state = SessionState.CANCELLED

    def close(self) -> None:
        """The session's final state; pruned workspaces and leftover processes gone; its record written."""
        info, schedule = self.info, self.schedule
        if schedule.abort_message and info.state != SessionState.CRASHED:
            info.state, info.note = SessionState.ABORTED, f"session aborted: {schedule.abort_message}"
        if info.state == SessionState.RUNNING:
            info.state = schedule.stop_reason or (SessionState.CANCELLED if self.control.cancelled
                                                  else SessionState.FINISHED)
            info.note = info.note or (budget_note(schedule) if info.state == SessionState.STOPPED_BUDGET else "")
            if info.state == SessionState.FINISHED and self.ready.plan.ends_as is not None:
                info.state, info.note = self.ready.plan.ends_as
        self.janitor.close()  # every pruned workspace is gone before the session says it is over
        reaper.sweep_all()  # a process a run left behind (setsid) ends with the session at the latest
        try:
            self.history.finish_session(info)
        except Exception as exc:  # noqa: BLE001 — the runs are recorded; say the ending could not be
            crashed = info.state == SessionState.CRASHED  # crash.txt is written (or said) already
            if info.state == SessionState.FINISHED:
                info.state = SessionState.CRASHED
            where = "" if crashed else " — traceback in " + str(write_traceback(
                self.history.dir / info.id / "crash.txt", exc, Path(self.ctx.session_dir)))
            info.note = (info.note + "; " if info.note else "session crashed: ") + \
                f"the session record could not be written: {one_line(exc)}" + where


def _more_extender(ready: ReadySession, looks: list[int], decided: Callable[[str, str, int], None],
                   ) -> Callable[[dict[str, dict[int, RunRecord]]], dict[str, int]]:
    """`undecided: more`'s looks (stats/decisions.make_extender): the run count each case still open needs
    next; each case a look decides is said once (`decided`). A judged case the judge's measured error
    covers is decided at a look on its corrected evidence, as the report decides it (run/gate.py), never on
    the judge's raw verdicts: those can call a case the corrected gate cannot, which would end it
    undecided with runs still allowed."""
    thresholds = {c.id: effective_threshold(c, ready.site.config.threshold) for c in ready.plan.cases}
    said: set[str] = set()

    def say(case_id: str, decision: str, runs: int) -> None:
        if case_id not in said:
            said.add(case_id)
            decided(case_id, decision, runs)

    extend = make_extender(thresholds, ready.gate, looks, say)
    error = ready.judge_error

    def more(results: dict[str, dict[int, RunRecord]]) -> dict[str, int]:
        statuses = {cid: [r[k].status for k in sorted(r)] for cid, r in results.items()}
        if error is None:
            return extend(statuses)
        ordered = {cid: [r[k] for k in sorted(r)] for cid, r in results.items()}
        have = max((len(rs) for rs in ordered.values()), default=0)
        # every look so far, each on the runs up to it: the Holm family of each holds corrected evidence
        found = {size: {cid: corrected_evidence(cid, rs[:size], error) for cid, rs in ordered.items()}
                 for size in looks if size <= have}
        return extend(statuses, {size: {cid: ev for cid, ev in at.items() if ev is not None}
                                 for size, at in found.items()})
    return more


def _compare_extender(ready: ReadySession, names: list[str], looks: list[int],
                      decided: Callable[[str, str, str, int], None]):
    """The looks of a session of several agents (stats/head_to_head.CompareExtender), in blocks: the run
    count each case still open needs next; each comparison a look decides is said once (`decided`)."""
    compare = ready.gate.compare
    extend = CompareExtender(names[0], tuple(names[1:]), tuple(looks), margin=compare.margin if compare else MARGIN,
                             alpha=ready.gate.alpha, min_verdicts=ready.gate.min_verdicts)
    said: set[tuple[str, str]] = set()

    def more(results: dict[str, dict[int, RunRecord]]) -> dict[str, int]:
        blocks = extend(statuses_by_agent({cid: r.values() for cid, r in results.items()}, names))
        for row in extend.last.rows if extend.last is not None else []:
            if row.decided and (row.case_id, row.candidate) not in said:
                said.add((row.case_id, row.candidate))
                decided(row.case_id, row.candidate, str(row.call), len(results.get(row.case_id, {})))
        return {cid: runs_of_blocks(b, names) for cid, b in blocks.items()}
    return more


def budget_note(schedule: _Schedule) -> str:
    """Why --max-cost stopped the session, with which part of the spend scarbook measured."""
    spent = schedule.judge_spent + schedule.agent_spent
    unknown = (f"{schedule.uncounted}, so its cost is not counted and the spend is not known; " if schedule.uncounted
               else "")
    return (f"stopped by --max-cost ${schedule.max_cost:.4f}: {unknown}spent {'at least ' if unknown else ''}"
            f"${spent:.4f} — judge ${schedule.judge_spent:.4f} (measured by scarbook), agent "
            f"${schedule.agent_spent:.4f} (reported by the agent)")


def _save_unrecorded(records: list[RunRecord], crash_file: Path | None) -> str:
    """Write the finished runs history refused beside crash.txt; the words the crash note adds."""
    if not records:
        return ""
    lines = "".join(json.dumps(r.to_dict()) + "\n" for r in records)
    if crash_file is not None:
        target = crash_file.parent / "unrecorded-runs.jsonl"
        try:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(lines)
            return f"; {plural(len(records), 'finished run')} history could not take are in {target}"
        except OSError:
            pass
    return f"; {plural(len(records), 'finished run')} could not be recorded anywhere"
