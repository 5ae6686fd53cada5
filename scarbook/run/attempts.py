"""One run of a session, attempt by attempt: run it, attribute it, and run it again while the machine
is to blame (at most `retry_infra` more times). Each attempt keeps its own workspace and logs
(<session>/attempt-N/<case>/<k> beside the first), and the run's record lists every attempt with its
cause, so a retry never hides a failure. A run the agent, the judge or the case failed runs once. A run
whose agent died of a signal from outside that scarbook did not send waits a moment for scarbook's own
shutdown before it is attributed (run/agent_signals.py): a shutdown that begins meanwhile cuts it.

Error policy for one attempt (the runner's, unchanged): an unexpected exception inside it makes it
an `error` (traceback written beside the session's history); a rejected judge key records the
attempt that met it and is handed back, so the runner stops the session.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from scarbook.agents import Agent
from scarbook.errors import AbortSession
from scarbook.history.store import now_iso
from scarbook.judge.grader import Grader
from scarbook.models import Attempt, Case, RunRecord, RunStatus, Usage
from scarbook.record import RunSummary
from scarbook.run.agent_signals import held, hold
from scarbook.run.cause_patterns import Pattern
from scarbook.run.causes import attribute, is_infra
from scarbook.run.events import Event, RunRetried, RunStarted
from scarbook.run.executor import Executor
from scarbook.run.recorded import apply_recording, patterns_with, recorded_cause
from scarbook.run.session_run import AWAITING_JUDGE, AgentPart, RunContext, judge_part, transcript_file

if TYPE_CHECKING:
    from scarbook.record.proxy import Recorder

Emit = Callable[[Event], None]


@dataclass
class RunAttempts:
    """What every run of one session needs to be run, attributed and retried."""

    ctx: RunContext
    pool: Executor
    agent: Agent
    judge: Grader | None  # None: no judge checks, or judging skipped
    manifests: dict
    history_dir: Path  # <history>/<session>: tracebacks go here
    emit: Emit
    patterns: tuple[Pattern, ...]
    retry_infra: int
    recorder: Recorder | None = None  # record: every model call of every run goes through it
    price: Callable[[str, Usage], float] | None = None  # prices the recorder's measured tokens
    agents: dict[str, Agent] = field(default_factory=dict)  # a session of several agents: each by name

    async def run(self, case: Case, k: int, cancelled: Callable[[], bool],
                  agent: str = "") -> tuple[RunRecord, AbortSession | None, float]:
        """The run's final record, the judge's rejection if it met one, and what the attempts
        before the last one spent (USD: their records are replaced, their spend is not). `agent`: the
        name of the agent that makes this run, in a session of several (recorded on the run)."""
        attempts: list[Attempt] = []
        spent = 0.0
        run_ctx, emit = self.ctx, self.emit
        while True:
            record, abort = await self.attempt(case, k, run_ctx, emit, agent, cancelled)
            if agent:  # (a rejudge carries its source run's)
                record.agent = agent
            # the executor's own resubmissions (a lost Ray worker: record.infra_retries) use the same budget
            retried = len(attempts) + record.infra_retries
            if abort is not None or not is_infra(record) or retried >= self.retry_infra or cancelled():
                break
            attempts.append(Attempt.of(record, len(attempts) + 1))
            # said as it happens (the live screen, the CLI's progress), not only in the final record
            self.emit(RunRetried(self.ctx.session_id, case.id, k, len(attempts) + 1,
                                 self.retry_infra - record.infra_retries + 1, record.cause))
            spent += max(record.agent_usage.cost_usd, 0.0) + max(record.judge_usage.cost_usd, 0.0)
            run_ctx = replace(self.ctx, session_dir=str(Path(self.ctx.session_dir) / f"attempt-{len(attempts) + 1}"))
            emit = _still_running(self.emit)
        if is_infra(record) and record.status == RunStatus.FAIL:
            # the machine, not the agent, ended its last attempt (a 529 it died of, a signal not ours): no
            # verdict was reached, so it is an error — out of every rate's denominator, counted beside it
            # (DESIGN: errors never count as failures), as a Ray worker lost twice already is
            record.status = RunStatus.ERROR
        if attempts:
            record.attempts = [*attempts, Attempt.of(record, len(attempts) + 1)]
        return record, abort, spent

    async def attempt(self, case: Case, k: int, run_ctx: RunContext, emit: Emit, name: str = "",
                      cancelled: Callable[[], bool] = lambda: False) -> tuple[RunRecord, AbortSession | None]:
        part: AgentPart | None = None
        facts = None
        token = None
        agent = self.agents[name] if name else self.agent
        if self.recorder is not None:
            token = await self.recorder.open_run(case.id, k, transcript_file(run_ctx, case.id, k))
            run_ctx = replace(run_ctx, record_env=self.recorder.env_for(token, agent.env_allow),
                              record_relay=self.recorder.relay_to(token))
        try:
            part = await self.pool.agent_part(run_ctx, agent, case, k, self.manifests, emit)
            facts = part.facts
            if self.pool.agents_here and held(facts.signal, facts.timed_out):  # scarbook's shutdown, or the agent's?
                facts.watched_s = await hold(cancelled)  # (cancelled, it is not recorded: resume runs it again)
            if self.recorder is not None and token is not None:  # calls the agent left still going: read to their end
                await self.recorder.settle(token)
            summary = self._recorded(part, token)
            if summary is not None:  # the trajectory checks read the recorder's own calls, not the agent's files
                # (loaded by a session that records: with it come the transcripts' model and readers)
                from scarbook.run.recorded_checks import check_recorded

                await check_recorded(part, case, summary, self.price, emit)
            record = await judge_part(part, case, self.judge, emit)
            if not part.carried:
                if summary is not None:
                    apply_recording(record, summary, self.price)
                record.cause = (recorded_cause(record, summary) if summary is not None else None) or \
                    attribute(record, facts, patterns_with(self.patterns, summary))
            return record, None
        except AbortSession as exc:  # the judge rejected the key: this run has no verdict, nor will any
            record = part.record if part is not None else blank_record(run_ctx, case, k)
            record.status, record.reason = RunStatus.ERROR, exc.message
            record.cause = attribute(record, facts, self.patterns, judge_aborted=exc.message)
            return record, exc
        except Exception as exc:  # noqa: BLE001 — a harness bug in one run must not take the others down
            record = part.record if part is not None else blank_record(run_ctx, case, k)
            record.status = RunStatus.ERROR
            name = f"{case.id}-{k}" + ("" if run_ctx.session_dir == self.ctx.session_dir
                                       else f"-{Path(run_ctx.session_dir).name}")
            record.reason = f"scarbook could not finish this run: {one_line(exc)} " \
                            f"(traceback in {write_traceback(self.history_dir / f'{name}.traceback.txt')})"
            record.cause = attribute(record, facts, self.patterns,
                                     scarbook_error=record.reason)
            return record, None
        finally:
            if self.recorder is not None and token is not None:
                self.recorder.close_run(token)  # (a no-op once _recorded closed it)

    def _recorded(self, part: AgentPart, token: str | None) -> RunSummary | None:
        """The run's recording, closed now the agent is done; a replay that diverged is not judged."""
        if self.recorder is None or token is None:
            return None
        summary = self.recorder.close_run(token)
        if summary.diverged and part.judge_inputs:
            for inp in part.judge_inputs:
                if part.record.checks[inp.index].detail == AWAITING_JUDGE:
                    part.record.checks[inp.index].detail = "not run: the replay diverged"
            part.judge_inputs = []
        return summary


def _still_running(put: Emit) -> Emit:
    """A retry's events, less its RunStarted: the run was already counted as started."""
    def emit(event: Event) -> None:
        if not isinstance(event, RunStarted):
            put(event)
    return emit


def blank_record(ctx: RunContext, case: Case, k: int) -> RunRecord:
    return RunRecord(session_id=ctx.session_id, case_id=case.id, k=k, status=RunStatus.ERROR, reason="",
                     started_at=now_iso(), workspace=str(Path(ctx.session_dir) / case.id / str(k)))


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def write_traceback(path: Path, exc: BaseException | None = None, fallback: Path | None = None) -> Path | str:
    """Write the traceback being handled (or `exc`'s) to `path` — or, when that cannot be written (the
    history went read-only), to the same name in `fallback`; where it went, or why it could not."""
    text = "".join(traceback.format_exception(exc)) if exc is not None else traceback.format_exc()
    whys = []
    for where in (path, *([fallback / path.name] if fallback is not None else [])):
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(text, encoding="utf-8")
            return where
        except OSError as err:
            whys.append(f"could not write {where}: {err.strerror or err}")
    return "nowhere: " + "; ".join(whys)
