"""One run, in two parts, so the part that runs the agent can live on another machine.

    part = await run_agent_part(ctx, agent, case, k)   # worker: workspace, agent, diff, rule checks
    record = await judge_part(part, case, judge)       # driver: judge checks, then the verdict

The worker part returns plain data (`AgentPart`: the record so far, plus each judge check's
artifact, read and capped where the workspace is); the driver part calls the judge and computes
the verdict. Rule checks always run before judge checks (they are cheaper and decide a fail on
their own); checks are otherwise evaluated in the case's order, and after the first check that
does not pass the rest are `skipped`.

A run whose rule checks passed but whose judge checks were skipped (no judge for this session)
is `unjudged`: it has no verdict, and is counted apart from passes, fails and errors.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scarbook.agents import Agent
from scarbook.agents.usage import read_agent_usage, usage_of_checks
from scarbook.checks import TRAJECTORY_CHECKS, CheckContext, run_check
from scarbook.checks.sequence import PLAIN_RULES, run_plain_check
from scarbook.checks.spec import MAX_READ, reads_transcript
from scarbook.checks.verdict import JUDGE_SKIPPED, verdict_of
from scarbook.fs import safefs
from scarbook.fs.files import describe_os_error
from scarbook.history.store import now_iso
from scarbook.judge.artifact import Artifact, ArtifactRefused
from scarbook.judge.grader import Grader
from scarbook.judge.inputs import read_check_artifact
from scarbook.judge.pricing import ModelPrice, priced
from scarbook.models import (
    AgentStage,
    Case,
    Check,
    CheckResult,
    CheckStatus,
    RunRecord,
    RunStatus,
    Usage,
    WorkspaceDiff,
)
from scarbook.proc.leftovers import PROJECT_VAR
from scarbook.proc.oom import moved, oom_kills, recent_oom_kills
from scarbook.proc.slot import SlotFailed
from scarbook.proc.trips import off_loop
from scarbook.run.agent_signals import SIGKILL
from scarbook.run.cause_matching import AGENT_DID_NOT_FINISH, AgentFacts
from scarbook.run.cause_patterns import TAIL_BYTES, tail_text
from scarbook.run.events import CheckDone, Event, RunStarted
from scarbook.run.workspace import (
    SeedChanged,
    SeedManifest,
    Snapshot,
    diff_workspace,
    prepare_workspace,
    seed_manifest,
)

if TYPE_CHECKING:  # a run's transcript is read only for a case with trajectory checks (run_transcript)
    from scarbook.transcripts.model import Transcript

OUTPUT_EXCERPT = 4000
TRANSCRIPT_CAP = 256 << 20  # bytes of a run's transcript its trajectory checks read at most
AWAITING_JUDGE = "waiting for the judge"
# A recorded run's trajectory checks read the recorder's own calls, on the driver once the run's door is
# shut (run/recorded_checks.py), never the files the agent could rewrite.
AWAITING_RECORDER = "waiting for the recorder's calls"
MAX_USAGE_NOTES = 3  # a transcript's ignored usage values said per run; the rest counted
Emit = Callable[[Event], None]


@dataclass
class RunContext:
    """What every run of one session shares. Plain data: it pickles to a remote worker."""

    session_id: str
    session_dir: str  # workspaces/<session>: each run in <case>/<k>/, its logs beside it
    default_timeout_s: float  # scarbook.yaml's timeout_s
    timeout_s: float | None = None  # --timeout: beats the case's own
    judge_max_bytes: int | None = None  # the judge's artifact cap; None: this session has no judge
    judge_skipped_why: str = "--skip-judge"  # said in the detail of skipped judge checks
    record_env: dict[str, str] | None = None  # this run's recorder: base URLs with its token, dummy keys
    record_relay: tuple[str, str] | None = None  # (http://HOST:PORT, token) of its door for a Ray node's relay
    # The judge settings' price table: a max_cost_usd check prices tokens reported without dollars.
    prices: dict[str, ModelPrice] | None = None
    project_tag: str = ""  # $SCARBOOK_PROJECT of its programs: a session's start sweeps only this project's
    max_read: int = MAX_READ  # scarbook.yaml's max_read_bytes: bytes of a file a rule check reads at most

    def timeout_for(self, case: Case) -> float:
        return self.timeout_s or case.timeout_s or self.default_timeout_s


@dataclass
class JudgeInput:
    """One llm_judge check of a run, with the artifact it grades (or why it cannot be graded)."""

    index: int
    check: Check
    artifact: Artifact | ArtifactRefused
    max_bytes: int = 0  # the cap it was read with (a tool call's input is read again from the recorder's calls)


@dataclass
class AgentPart:
    """The worker part's answer: the record so far and what the judge needs."""

    record: RunRecord
    judge_inputs: list[JudgeInput] = field(default_factory=list)
    settled: bool = False  # the status is final already (the agent did not start or did not finish)
    facts: AgentFacts = field(default_factory=AgentFacts)  # what the agent did, for the run's cause
    carried: bool = False  # a rejudge's run kept as its source ended (rule checks failed): its cause stands
    # checks left for the recorder's calls: the trajectory checks, and those whose artifact is a tool call's input
    recorded_checks: list[int] = field(default_factory=list)


def transcript_file(ctx: RunContext, case_id: str, k: int) -> str:
    """$SCARBOOK_TRANSCRIPT of run k: beside its workspace (the recorder appends to it too)."""
    return f"{case_folder(ctx.session_dir, case_id)}/{k}.transcript.jsonl"


@functools.lru_cache(maxsize=4096)
def case_folder(session_dir: str, case_id: str) -> Path:
    """<session>/<case>: made once per case, not at every run (a Path is costly to make; at -j16 making
    the same ones over was a visible share of the main process's time per run)."""
    return Path(session_dir) / case_id


def _prepared(case: Case, ws: Path, manifest: SeedManifest) -> tuple[Snapshot, int | None]:
    """The run's workspace laid, and the kernel's count of OOM kills just before its agent starts."""
    return prepare_workspace(case, ws, manifest), recent_oom_kills()


def unprepared(ws: Path, exc: OSError | safefs.Refused | SeedChanged) -> str:
    """A run's reason when its workspace could not be laid (the seed, a folder), naming what failed."""
    why = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in why:  # which: a seed file, a folder
        why += f": {exc.filename}"
    return f"could not prepare the workspace {ws}: {why}"


async def run_agent_part(ctx: RunContext, agent: Agent, case: Case, k: int,
                         manifests: dict[str, SeedManifest] | None = None, emit: Emit | None = None) -> AgentPart:
    """Prepare the workspace, run the agent, diff, run the rule checks, read the judge's artifacts."""
    emit = emit or _ignore
    log_dir = case_folder(ctx.session_dir, case.id)
    ws = log_dir / str(k)
    record = RunRecord(session_id=ctx.session_id, case_id=case.id, k=k, status=RunStatus.ERROR, reason="",
                       started_at=now_iso(), workspace=str(ws))
    part = AgentPart(record, settled=True)
    start = time.monotonic()
    emit(RunStarted(ctx.session_id, case.id, k, record.workspace))
    try:
        manifests = {} if manifests is None else manifests
        if case.id not in manifests:
            manifests[case.id] = seed_manifest(case)
        # mkdir, the seed's files: on a thread, so the loop serves the other runs' agents meanwhile
        snap, oom_before = await off_loop(_prepared, case, ws, manifests[case.id])
    except (OSError, safefs.Refused, SeedChanged) as exc:
        record.reason = unprepared(ws, exc)
        part.facts = AgentFacts(stage=AgentStage.SEED, error=record.reason, errno=getattr(exc, "errno", None))
        record.duration_s = time.monotonic() - start
        return part
    transcript, usage_file = transcript_file(ctx, case.id, k), f"{log_dir}/{k}.usage.jsonl"
    env = {"SCARBOOK_TRANSCRIPT": transcript, "SCARBOOK_USAGE": usage_file, "SCARBOOK_WORKSPACE": record.workspace,
           "SCARBOOK_CASE": case.id, "SCARBOOK_RUN": str(k), "SCARBOOK_SESSION": ctx.session_id,
           **({PROJECT_VAR: ctx.project_tag} if ctx.project_tag else {}), **(ctx.record_env or {})}
    try:
        result = await agent.run(case.task, ws, env, ctx.timeout_for(case), log_dir, str(k), network=case.network)
    except (OSError, SlotFailed) as exc:
        record.reason = _not_run(agent, exc)
        stage = (AgentStage.START if not isinstance(exc, SlotFailed) else
                 AgentStage.SLOT_CHANGED if exc.by_run else AgentStage.SLOT)
        part.facts = AgentFacts(stage=stage, error=record.reason, errno=getattr(exc, "errno", None))
        record.duration_s = time.monotonic() - start
        return part
    # the checks' view of the workspace, made on the trip off the loop below once the diff is known
    def check_context(diff: WorkspaceDiff, usage: Usage) -> CheckContext:
        return CheckContext(case=case, workspace=ws, output=result.output, diff=diff,
                            # under record the agent's credentials are dummies: never the real ones for a check
                            env_allow=tuple(n for n in agent.env_allow if n not in (ctx.record_env or {})),
                            sandbox=agent.sandbox_for(case.network),  # a command check runs in it too
                            agent_usage=usage, project_tag=ctx.project_tag, max_read=ctx.max_read)

    # One trip off the loop for everything the run reads and writes once its agent is done (each trip is
    # two thread wake-ups; at -j16 on two cores they were what the main process spent its time on)
    after = await off_loop(_after_agent, record, result.output, snap, transcript, usage_file,
                                    None if result.crashed else check_context)
    # a SIGKILL is the OOM killer's only if the kernel's count of its kills moved meanwhile (run/causes.py)
    oom = moved(oom_before, await off_loop(oom_kills)) if result.signal == SIGKILL and not result.timed_out else None
    part.facts = AgentFacts(crashed=bool(result.crashed), timed_out=result.timed_out,
                            timeout_s=ctx.timeout_for(case), signal=result.signal, oom_kills=oom,
                            exit_code=result.exit_code, stderr_tail=result.stderr_tail,
                            transcript_tail=after.transcript_tail)
    if result.crashed and not result.stderr_tail and not result.timed_out and result.exit_code is None:
        part.facts.stage, part.facts.error = AgentStage.START, result.crashed  # e.g. the program vanished since preflight
    record.stderr_path = result.stderr_path
    record.exit_code = result.exit_code
    record.output_excerpt = result.output[:OUTPUT_EXCERPT]
    record.output_truncated = result.output_truncated
    record.transcript_path = transcript if after.has_transcript else None
    if after.diff_failed is not None:
        failed = after.diff_failed
        record.reason = f"could not diff the workspace: {getattr(failed, 'strerror', None) or failed}"
        part.facts.stage, part.facts.error = AgentStage.DIFF, record.reason
        record.duration_s = time.monotonic() - start
        return part
    record.diff, record.agent_usage = after.diff, after.usage
    if result.crashed:
        record.status, record.reason = RunStatus.FAIL, result.crashed
        record.checks = [CheckResult(c.type, CheckStatus.SKIPPED, AGENT_DID_NOT_FINISH, i)
                         for i, c in enumerate(case.checks)]
        for r in record.checks:
            emit(CheckDone(ctx.session_id, case.id, k, r))
    else:
        part.settled = False
        checks = after.checks if after.checks is not None else check_context(record.diff, record.agent_usage)
        # (recorded: the trajectory checks read the recorder's calls on the driver; a tool call's input is read here)
        if any(reads_transcript(c) and (ctx.record_env is None or c.type not in TRAJECTORY_CHECKS)
               for c in case.checks):
            await _trajectory_inputs(checks, ctx, record, usage_file)
        await _rule_checks(part, ctx, checks, emit, after.ran)
    record.duration_s = time.monotonic() - start
    return part


def _not_run(agent: Agent, exc: OSError | SlotFailed) -> str:
    """Why the agent did not run: its start failed, or its sandbox slot did (the machine's failure: the run's folder
    is back, the next run gets a new slot)."""
    if isinstance(exc, SlotFailed):
        return f"the sandbox slot failed ({agent.label}): {exc}"
    why = exc.strerror or str(exc)
    if exc.errno == errno.ENOENT:  # the program exists (preflight saw it), so its #! interpreter does not
        why += " — the agent program exists, so check the interpreter on its #! line"
    return f"could not start the agent ({agent.label}): {why}"


@dataclass
class _AfterAgent:
    """What `_after_agent` read once the agent was done."""

    transcript_tail: str
    has_transcript: bool
    diff: WorkspaceDiff = field(default_factory=WorkspaceDiff)
    usage: Usage = field(default_factory=Usage)
    diff_failed: Exception | None = None  # (safefs.Refused or OSError): the run is an error
    checks: CheckContext | None = None  # the checks' view, when it was made here
    ran: dict[int, CheckResult] = field(default_factory=dict)  # the leading rule checks, by index, run here


def _after_agent(record: RunRecord, output: str, snap: Snapshot, transcript: str, usage_file: str,
                 check_context: Callable[[WorkspaceDiff, Usage], CheckContext] | None) -> _AfterAgent:
    """Everything blocking a run does once its agent is done, on one thread trip: the transcript's tail,
    the full output's file, whether there is a transcript, the diff and the usage (its notes go to
    `record.notes`), then (`check_context`: the agent finished) the case's leading plain rule checks, up
    to the first that does not pass."""
    ws = Path(record.workspace)
    log_dir, k = ws.parent, record.k
    tail, found = _transcript_tail(log_dir, f"{k}.transcript.jsonl")
    after = _AfterAgent(tail, False)
    if len(output) > OUTPUT_EXCERPT:  # else history's excerpt already holds all of it
        try:  # created fresh: the agent may have planted a pipe or a link at this name
            with open(safefs.create_file(log_dir, f"{k}.output.txt"), "w", encoding="utf-8") as fh:
                fh.write(output)
        except (safefs.Refused, OSError):
            pass
    # whether there is a transcript: the tail's open said so, unless it met something else than a file or nothing
    after.has_transcript = found if found is not None else os.access(transcript, os.F_OK)
    try:  # the walk and the reads must not block the loop (timeouts, Ctrl-C)
        after.diff = diff_workspace(snap, ws)
        after.usage = read_agent_usage(usage_file, None, record.notes)
    except (safefs.Refused, OSError) as exc:
        after.diff_failed = exc
        return after
    if check_context is not None:
        after.checks = check_context(after.diff, after.usage)
        after.ran = _leading_plain_checks(after.checks)
    return after


def _leading_plain_checks(checks: CheckContext) -> dict[int, CheckResult]:
    """Run the case's rule checks in order while each is a plain one (run_plain_check) and passes; judge
    checks are passed over (they come after the rules). Nothing when a trajectory check needs its inputs
    read first (`_trajectory_inputs`), or a check reads a tool call's input from it."""
    case = checks.case
    ran: dict[int, CheckResult] = {}
    if any(reads_transcript(c) for c in case.checks):
        return ran
    for i, check in enumerate(case.checks):
        if check.is_judge:
            continue
        if check.type not in PLAIN_RULES:
            break
        result = ran[i] = run_plain_check(check, checks, i)
        if result.status in (CheckStatus.FAIL, CheckStatus.ERROR):
            break
    return ran


async def _rule_checks(part: AgentPart, ctx: RunContext, checks: CheckContext, emit: Emit,
                       ran: dict[int, CheckResult]) -> None:
    """The rule checks in order (`ran`: those already run, by index), then the judge checks' inputs."""
    record, case = part.record, checks.case
    results: list[CheckResult | None] = [None] * len(case.checks)
    stopped: CheckResult | None = None
    for i, check in enumerate(case.checks):
        if check.is_judge:
            continue
        if stopped is None and ctx.record_env is not None and reads_transcript(check):
            results[i] = CheckResult(check.type, CheckStatus.SKIPPED, AWAITING_RECORDER, i)
            part.recorded_checks.append(i)
            continue
        result = not_run(check, i, stopped) if stopped else ran[i] if i in ran else await run_check(check, checks, i)
        if stopped is None and result.status in (CheckStatus.FAIL, CheckStatus.ERROR):
            stopped = result
        results[i] = result
        emit(CheckDone(record.session_id, record.case_id, record.k, result))
    for i, check in enumerate(case.checks):
        if not check.is_judge:
            continue
        if stopped is not None:
            result = results[i] = not_run(check, i, stopped)
        elif ctx.judge_max_bytes is None:
            result = results[i] = CheckResult(check.type, CheckStatus.SKIPPED, f"{JUDGE_SKIPPED} ({ctx.judge_skipped_why})", i)
        else:
            results[i] = CheckResult(check.type, CheckStatus.SKIPPED, AWAITING_JUDGE, i)
            artifact = await asyncio.to_thread(read_check_artifact, check, checks,
                                               ctx.judge_max_bytes)  # an agent-written file: off the loop
            part.judge_inputs.append(JudgeInput(i, check, artifact, ctx.judge_max_bytes))
            continue
        emit(CheckDone(record.session_id, record.case_id, record.k, result))
    record.checks = [r for r in results if r is not None]


def not_run(check: Check, index: int, stopped: CheckResult) -> CheckResult:
    return CheckResult(check.type, CheckStatus.SKIPPED, f"not run: check {stopped.index + 1} ({stopped.type}) did not pass", index)


async def judge_part(part: AgentPart, case: Case, judge: Grader | None, emit: Emit | None = None) -> RunRecord:
    """Grade the judge checks (in order, stopping at the first that does not pass); set the verdict.

    A rejected API key raises AbortSession (scarbook.judge.JudgeAuthError): the runner records
    this run as an error and stops the session."""
    emit = emit or _ignore
    record = part.record
    start = time.monotonic()
    if judge is not None and part.judge_inputs:
        record.judge_artifacts = await asyncio.to_thread(keep_artifacts, judge, part.judge_inputs)
    stopped: CheckResult | None = None
    for inp in part.judge_inputs:
        if stopped is not None:
            result = not_run(inp.check, inp.index, stopped)
        else:
            assert judge is not None  # judge inputs are gathered only when there is a judge
            result = await judge.grade_artifact(inp.check, inp.artifact, case.task)
            result.index = inp.index
            if result.status in (CheckStatus.FAIL, CheckStatus.ERROR):
                stopped = result
        record.checks[inp.index] = result
        emit(CheckDone(record.session_id, record.case_id, record.k, result))
    if not part.settled:
        record.status, record.reason = verdict_of(record.checks)
    record.judge_usage, record.judge_calls = usage_of_checks(record.checks)
    record.judge_calls_saved = sum(1 for c, r in zip(case.checks, record.checks, strict=False)
                                   if c.is_judge and r.status == CheckStatus.SKIPPED and r.detail.startswith("not run"))
    if record.agent_usage.total_tokens and not record.agent_usage.cost_usd and judge is not None:
        # priced here, where the judge's price table is: the worker does not load it
        record.agent_usage = read_agent_usage(Path(record.workspace).parent / f"{record.k}.usage.jsonl",
                                              judge.settings.price_usage)
    record.duration_s += time.monotonic() - start
    return record




def keep_artifacts(judge: Grader, inputs: list[JudgeInput]) -> dict[str, dict[str, str]]:
    """Keep every judge check's artifact (all of them: a later check the first one's FAIL stops may be
    graded when the run is judged again), before any is graded; what the run records of each."""
    kept: dict[str, dict[str, str]] = {}
    for inp in inputs:
        if isinstance(inp.artifact, ArtifactRefused):
            kept[str(inp.index)] = {"refused": inp.artifact.detail}
        elif judge.artifacts is not None:
            kept[str(inp.index)] = judge.artifacts.keep(inp.artifact)
        elif not judge.settings.keep_artifacts:
            kept[str(inp.index)] = {"not_kept": "judge.keep_artifacts was false"}
    return kept


def _ignore(_event: Event) -> None:
    pass


async def _trajectory_inputs(checks: CheckContext, ctx: RunContext, record: RunRecord, usage_file: str) -> None:
    """What the trajectory checks read: the run's transcript (parsed off the loop), and prices for
    tokens reported without dollars."""
    checks.transcript, checks.transcript_missing = await asyncio.to_thread(run_transcript, record.transcript_path)
    if checks.transcript is not None and checks.transcript.usage_problems:  # the agent's numbers, left out: said
        said = checks.transcript.usage_problems
        record.notes.extend(said[:MAX_USAGE_NOTES])
        if len(said) > MAX_USAGE_NOTES:
            record.notes.append(f"transcript: {len(said) - MAX_USAGE_NOTES} more usage values ignored")
    if ctx.prices is not None:
        checks.price = _pricer(ctx.prices)
        if record.agent_usage.total_tokens and not record.agent_usage.cost_usd:  # its lines may name a model
            checks.agent_usage = read_agent_usage(usage_file, checks.price)


def _pricer(prices: dict[str, ModelPrice]) -> Callable[[str, Usage], float]:
    return lambda model, usage: priced(usage, model, prices).cost_usd


def run_transcript(path: str | None) -> tuple[Transcript | None, str]:
    """(the run's transcript, "") for its trajectory checks and tool call inputs, or (None, why the run has none)."""
    from scarbook.transcripts.run_file import TranscriptUnreadable, read_run_transcript  # (every reader: loaded here)

    if not path:
        return None, ("the run left no transcript for the checks that read it: the agent wrote nothing to "
                      "$SCARBOOK_TRANSCRIPT")
    try:
        return read_run_transcript(path, TRANSCRIPT_CAP), ""
    except TranscriptUnreadable as exc:
        return None, f"the run's transcript could not be read for the checks that read it: {exc}"


def _transcript_tail(log_dir: Path, name: str) -> tuple[str, bool | None]:
    """The end of the run's transcript (agent-written: opened without following links), or "", and
    whether the file is there (None: something is at its name that is not a file it would open)."""
    try:
        fd, st = safefs.open_file(log_dir, name)
    except safefs.Refused as exc:
        return "", False if exc.missing else None
    except OSError:
        return "", None
    try:
        os.lseek(fd, max(0, st.st_size - TAIL_BYTES), os.SEEK_SET)
        return tail_text(os.read(fd, TAIL_BYTES)), True
    except OSError:
        return "", True
    finally:
        os.close(fd)
