"""The session runner: cases x runs through an executor, as an async generator of events.

Each run is recorded in history the moment it finishes, so cancelling, a crash or Ctrl-C keeps every
finished run. Runs that were still going are killed (whole process group) and not recorded.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, Callable

from scarbook.agents import Agent, make_agent
from scarbook.agents.leftovers import kill_leftovers, session_prefix
from scarbook.checks import CheckContext, run_checks
from scarbook.errors import AbortSession, HistoryError
from scarbook.events import (CaseDecided, CheckDone, Event, RunFinished, RunStarted, SessionFinished,
                             SessionStarted)
from scarbook.executor import Executor, LocalExecutor
from scarbook.history import now_iso
from scarbook.models import Case, CheckResult, RunRecord, SessionInfo, Usage
from scarbook.project import Project
from scarbook.usage import read_agent_usage, usage_of_checks
from scarbook.workspace import Janitor, SeedManifest, diff_workspace, prepare_workspace, seed_manifest

OUTPUT_EXCERPT = 4000
# decide(case, passes, fails) -> "above" | "below" | "undecided" | None (keep running)
DecideFn = Callable[[Case, int, int], str | None]


@dataclass
class SessionControl:
    """Handed to run_session; `cancel()` stops launching and kills running agents."""

    cancelled: bool = False
    _task: asyncio.Task | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self._task is not None:
            self._task.cancel()


@dataclass
class _CaseState:
    case: Case
    started: int = 0
    passes: int = 0
    fails: int = 0
    decided: str | None = None


@dataclass
class _Plan:
    cases: list[_CaseState]
    runs: int
    decide: DecideFn | None
    max_cost: float | None
    spent: float = 0.0
    stop_reason: str | None = None
    cursor: int = 0
    records: list[RunRecord] = field(default_factory=list)

    def next_job(self, control: SessionControl) -> tuple[Case, int] | None:
        """Round-robin over cases so every case fills in together."""
        if control.cancelled or self.stop_reason:
            return None
        if self.max_cost is not None and self.spent >= self.max_cost:
            self.stop_reason = "stopped: budget"
            return None
        for _ in range(len(self.cases)):
            st = self.cases[self.cursor % len(self.cases)]
            self.cursor += 1
            if st.decided is None and st.started < self.runs:
                st.started += 1
                return st.case, st.started
        return None


def case_digest(case: Case) -> str:
    """Changes when what the case asks or checks changes (not its title or scar notes)."""
    blob = json.dumps({"task": case.task, "checks": [c.to_dict() for c in case.checks],
                       "seed": case.seed_files}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def git_revision(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


async def run_session(project: Project, cases: list[Case], *, runs: int, label: str = "",
                      concurrency: int | None = None, keep_all: bool | None = None, judge=None,
                      skip_judge: bool = False, timeout_s: float | None = None,
                      max_cost: float | None = None, decide: DecideFn | None = None,
                      control: SessionControl | None = None, agent: Agent | None = None,
                      executor: Executor | None = None) -> AsyncIterator[Event]:
    cfg = project.config
    control = control or SessionControl()
    agent = agent or make_agent(cfg.agent, project.root)
    history = project.history
    keep_all = cfg.keep == "all" if keep_all is None else keep_all
    sid = history.new_session_id()
    info = SessionInfo(id=sid, label=label, started_at=now_iso(), runs_per_case=runs,
                       case_ids=[c.id for c in cases], fingerprint=cfg.fingerprint(), agent=agent.label,
                       judge_model="" if skip_judge else cfg.judge_model, git_revision=git_revision(project.root),
                       case_digests={c.id: case_digest(c) for c in cases},
                       partial=skip_judge and any(c.judge_checks for c in cases))
    history.start_session(info)
    plan = _Plan([_CaseState(c) for c in cases], runs, decide, max_cost)
    states = {st.case.id: st for st in plan.cases}
    queue: asyncio.Queue = asyncio.Queue()
    session_dir = project.workspaces_dir / sid
    manifests: dict[str, SeedManifest] = {}  # each case's seed, read and hashed once per session
    janitor = Janitor()
    prune = None if keep_all else janitor.remove
    yield SessionStarted(info, planned_runs=runs * len(cases))

    async def work(job: tuple[Case, int]) -> RunRecord:
        case, k = job
        record = await _run_once(project, agent, case, k, sid, session_dir, queue, judge, prune,
                                 timeout_s or case.timeout_s or cfg.timeout_s, manifests)
        history.record_run(record)
        plan.records.append(record)
        plan.spent += record.agent_usage.cost_usd + record.judge_usage.cost_usd
        st = states[case.id]
        if record.status == "pass":
            st.passes += 1
        elif record.status == "fail":
            st.fails += 1
        queue.put_nowait(RunFinished(record))
        if decide is not None and st.decided is None:
            verdict = decide(case, st.passes, st.fails)
            if verdict is None and st.started >= runs and st.passes + st.fails + _errors(plan, case.id) >= runs:
                verdict = "undecided"
            if verdict is not None:
                st.decided = verdict
                info.decisions[case.id] = verdict
                queue.put_nowait(CaseDecided(sid, case.id, verdict, st.passes + st.fails))
        return record

    async def drive() -> None:
        pool = executor or LocalExecutor(concurrency or cfg.concurrency)
        async for _ in pool.run(lambda: plan.next_job(control), work):
            pass

    driver = asyncio.ensure_future(drive())
    control._task = driver
    driver.add_done_callback(lambda _t: queue.put_nowait(None))
    aborted: BaseException | None = None
    try:
        while True:
            event = await queue.get()
            if event is None:
                break
            yield event
        try:
            driver.result()
        except asyncio.CancelledError:
            info.state = "cancelled"
        except AbortSession as exc:
            aborted = exc
            info.state, info.note = "aborted", exc.message
    finally:
        if not driver.done():  # the consumer went away (Ctrl-C, closed generator): stop the runs
            control.cancelled = True
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)
            info.state = "cancelled"
        if info.state == "running":
            info.state = plan.stop_reason or ("cancelled" if control.cancelled else "finished")
        janitor.close()  # every pruned workspace is gone before the session says it is over
        kill_leftovers(session_prefix())  # a process a run left behind (setsid) ends with the session
        history.finish_session(info)
    yield SessionFinished(info, sorted(plan.records, key=lambda r: (r.case_id, r.k)))
    if aborted is not None:
        raise aborted


def _errors(plan: _Plan, case_id: str) -> int:
    return sum(1 for r in plan.records if r.case_id == case_id and r.status == "error")


async def _run_once(project: Project, agent: Agent, case: Case, k: int, sid: str, session_dir: Path,
                    queue: asyncio.Queue, judge, prune: Callable[[Path], None] | None, timeout_s: float,
                    manifests: dict[str, SeedManifest]) -> RunRecord:
    log_dir = session_dir / case.id
    ws = log_dir / str(k)
    record = RunRecord(session_id=sid, case_id=case.id, k=k, status="error", reason="",
                       started_at=now_iso(), workspace=str(ws))
    start = time.monotonic()
    queue.put_nowait(RunStarted(sid, case.id, k, record.workspace))
    try:
        if case.id not in manifests:
            manifests[case.id] = seed_manifest(case)
        snap = prepare_workspace(case, ws, manifests[case.id])
    except OSError as exc:
        record.reason = f"could not prepare the workspace {ws}: {exc.strerror or exc}"
        record.duration_s = time.monotonic() - start
        return record
    transcript, usage_file = f"{log_dir}/{k}.transcript.jsonl", f"{log_dir}/{k}.usage.jsonl"
    env = {"SCARBOOK_TRANSCRIPT": transcript, "SCARBOOK_USAGE": usage_file, "SCARBOOK_WORKSPACE": record.workspace,
           "SCARBOOK_CASE": case.id, "SCARBOOK_RUN": str(k), "SCARBOOK_SESSION": sid}
    try:
        result = await agent.run(case.task, ws, env, timeout_s, log_dir, str(k))
    except OSError as exc:
        why = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT:  # the program exists (preflight saw it), so its #! interpreter does not
            why += " — the agent program exists, so check the interpreter on its #! line"
        record.reason = f"could not start the agent ({agent.label}): {why}"
        record.duration_s = time.monotonic() - start
        return record
    record.stderr_path = result.stderr_path
    record.exit_code = result.exit_code
    record.output_excerpt = result.output[:OUTPUT_EXCERPT]
    record.output_truncated = result.output_truncated
    if len(result.output) > OUTPUT_EXCERPT:  # else history's excerpt already holds all of it
        try:
            (log_dir / f"{k}.output.txt").write_text(result.output, encoding="utf-8")
        except OSError:
            pass
    record.transcript_path = transcript if os.access(transcript, os.F_OK) else None  # no exception when absent
    record.diff = diff_workspace(snap, ws)
    record.agent_usage = read_agent_usage(usage_file, judge)
    if result.crashed:
        record.status, record.reason = "fail", result.crashed
        record.checks = [CheckResult(c.type, "skipped", "not run: the agent did not finish", i)
                         for i, c in enumerate(case.checks)]
    else:
        ctx = CheckContext(case=case, workspace=ws, output=result.output, diff=record.diff, judge=judge,
                           env_allow=tuple(getattr(agent, "env_allow", ())))
        on_result = lambda r: queue.put_nowait(CheckDone(sid, case.id, k, r))  # noqa: E731
        try:
            record.checks = await run_checks(case.checks, ctx, on_result)
        except AbortSession as exc:
            record.status, record.reason = "error", exc.message
            record.duration_s = time.monotonic() - start
            project.history.record_run(record)
            raise
        record.status, record.reason = verdict_of(record.checks)
    record.judge_usage, record.judge_calls = usage_of_checks(record.checks)
    record.judge_calls_saved = sum(1 for c, r in zip(case.checks, record.checks)
                                   if c.is_judge and r.status == "skipped" and record.status != "pass")
    record.duration_s = time.monotonic() - start
    if record.status == "pass" and prune is not None:
        prune(ws)
        record.workspace_kept = False
    return record


def verdict_of(results: list[CheckResult]) -> tuple[str, str]:
    """error if any check could not reach a verdict; fail on the first failing check; else pass."""
    for i, r in enumerate(results):
        if r.status == "error":
            return "error", f"check {i + 1} ({r.type}): {r.detail}"
        if r.status == "fail":
            return "fail", f"check {i + 1} ({r.type}): {r.detail}"
    skipped = sum(1 for r in results if r.status == "skipped")
    return "pass", "all checks passed" + (f" ({skipped} judge check skipped)" if skipped else "")
