"""`scarbook rejudge SESSION [CASE...]`: grade a session's kept artifacts again, with no agent runs.

Each judged run kept the artifacts its judge checks were given (judge/artifact_store.py). A rejudge
grades them again under today's rubric and judge settings, through the same session pipeline as an
eval (run_session: history, events, the live screen, the report), with an executor whose worker part
never starts the agent: it hands the runner the source run's record with its rule-check results
carried over and its judge checks waiting for the judge. So a rejudge costs judge time only.

Per source run:
  - judged, its artifacts kept      graded again: its rule checks carried, its judge checks graded anew
  - its rule checks failed, or the  carried as it was (fail or error), no judge call, as in an eval
    agent did not finish
  - anything else                   not re-judgeable, listed with why (artifact not kept, gone or altered,
                                    judge skipped in the source, the case's checks changed beyond rubrics):
                                    kept in the new session as `unjudged`, so its case has no verdict
                                    (exit 3) — leaving it out would let a rejudge decide a case on the runs
                                    whose artifacts survived (alter the failing runs', and it passes).
                                    Only a run whose case is gone, or has no judge check now, is left out.

A source still running (or still judging: `scarbook resume` first), or one shard of a session (merge first), is
refused; one that did not finish (interrupted, cancelled, stopped, aborted, crashed) is graded, and the new
session ends in its source's state: it holds only part of the runs, so it gives no verdict (exit 3), as its
source gave none.

Rule checks are not run again (the workspace may be pruned): a change to a rule check is not
measured by a rejudge; an eval is. The new session is linked to its source (SessionInfo.rerun_of,
with "rejudge": true), its label says so, and `scarbook diff SOURCE NEW` compares the two even though
the rubric changed in between: that change is what the diff measures. The verdict cache is used as
in an eval: an unchanged rubric and judge are answered from it (the summary says "from cache"); a
changed rubric or model is a different key, so it is graded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from scarbook.agents import AgentSpec
from scarbook.agents.spec import DemoSpec
from scarbook.config import GatePolicy
from scarbook.errors import ScarbookError
from scarbook.history.judge_truth import calibration_for
from scarbook.history.store import History, now_iso
from scarbook.judge.artifact import OUTPUT, Artifact, ArtifactRefused
from scarbook.judge.artifact_store import FOLDER, ArtifactStore, NotKept
from scarbook.judge.errors import SKIP_HINT, KeyHint
from scarbook.models import Case, CheckResult, CheckStatus, RunRecord, RunStatus, SessionInfo, SessionState, Usage
from scarbook.models.label import derived_label
from scarbook.models.session_parts import NotRejudged, RerunLink, RunPlace
from scarbook.models.words import ExecutorType
from scarbook.project import Project
from scarbook.run.cause_matching import AgentFacts
from scarbook.run.events import RunStarted
from scarbook.run.executor import LocalExecutor
from scarbook.run.session import (
    Preparation,
    ReadySession,
    SessionPlan,
    SessionSite,
    preflight_judge,
    unwritable_places,
)
from scarbook.run.session_run import AWAITING_JUDGE, AgentPart, JudgeInput
from scarbook.text import plural
from scarbook.transcripts.tool_input import tool_input_of

LISTED = 10  # not re-judgeable runs named one by one; the rest counted


@dataclass
class RejudgeRun:
    source: RunRecord
    inputs: list[JudgeInput] = field(default_factory=list)  # empty: carried as it was, no judge call
    unjudgeable: str = ""  # why it cannot be graded again: kept as unjudged, its case without a verdict


@dataclass
class RejudgePick:
    source: SessionInfo
    cases: list[Case]  # today's cases, in the source's order
    runs: dict[tuple[str, int], RejudgeRun] = field(default_factory=dict)
    not_rejudgeable: list[tuple[str, int, str]] = field(default_factory=list)  # (case, k, why)
    judge_model: str | None = None  # --judge-model, else scarbook.yaml's
    problems: list = field(default_factory=list)  # source runs history left out (damaged, forged)

    @property
    def regraded(self) -> int:
        return sum(1 for r in self.runs.values() if r.inputs)

    @property
    def carried(self) -> int:
        return sum(1 for r in self.runs.values() if not r.inputs and not r.unjudgeable)

    @property
    def kept_unjudged(self) -> int:
        """Runs that cannot be graded again but whose case is still judged: in the session, without a verdict."""
        return sum(1 for r in self.runs.values() if r.unjudgeable)

    @property
    def jobs(self) -> dict[str, list[int]]:
        jobs: dict[str, list[int]] = {c.id: [] for c in self.cases}
        for cid, k in sorted(self.runs):
            jobs[cid].append(k)
        return jobs

    @property
    def label(self) -> str:
        return derived_label("rejudge of ", self.source.label or self.source.id)

    def link(self) -> RerunLink:
        """What the new session records of its source (SessionInfo.rerun_of, as eval --rerun's)."""
        return RerunLink.regrade(self.source.id, self.judge_model or "", {cid: len(ks) for cid, ks in self.jobs.items()},
                                 self.regraded, self.carried,
                                 tuple(NotRejudged(c, k, why) for c, k, why in self.not_rejudgeable))


def is_rejudge_of(b: SessionInfo, a: SessionInfo) -> bool:
    """Session b grades session a's artifacts again (or a grades b's)."""
    return any(y.rerun_of is not None and y.rerun_of.rejudge is True and y.rerun_of.session == x.id
               for x, y in ((a, b), (b, a)))


def unjudgeable_lines(pick: RejudgePick) -> list[str]:
    lines = [f"  {cid} #{k}: {why}" for cid, k, why in pick.not_rejudgeable[:LISTED]]
    if len(pick.not_rejudgeable) > LISTED:
        lines.append(f"  … and {len(pick.not_rejudgeable) - LISTED} more")
    return lines


def pick_rejudge(project: Project, ref: str, names: tuple[str, ...] = (), judge_model: str | None = None) -> RejudgePick:
    """The runs of session `ref` (of the cases named, else all) that can be graded again; a
    ScarbookError saying why when none can."""
    history = project.history
    source = history.resolve(ref)
    if source.state == SessionState.RUNNING:  # (history says `interrupted` of one whose process died)
        raise ScarbookError(f"session {source.id} is still running: its runs are still coming in — wait for it to "
                            "end (or cancel it), then grade it again")
    shard = source.shard
    if shard is not None and shard.merged is None:  # one shard: part of a session, whose gate is the merge's
        raise ScarbookError(f"session {source.id} is shard {shard.index}/{shard.count} of session {shard.session}: "
                            "it holds part of its runs — merge the shards (`scarbook merge`), then "
                            f"`scarbook rejudge {shard.session}`")
    if source.state == SessionState.JUDGING:
        raise ScarbookError(f"session {source.id} is still judging (its judge batch is not collected) — "
                            f"`scarbook resume {source.id}` collects it; then grade it again")
    for name in names:
        if name not in source.case_ids:
            raise ScarbookError(f"case {name!r} is not in session {source.id} (its cases: {', '.join(source.case_ids)})")
    loaded = project.load_cases()
    found = loaded.by_id()
    wanted = list(dict.fromkeys(names)) or list(source.case_ids)
    for problem in loaded.problems:  # today's rubric cannot be read: say so, rather than "not in the collection"
        folder = problem.path.parent if problem.path.suffix in (".yaml", ".yml") else problem.path
        if folder.name in wanted and folder.name not in found:
            raise ScarbookError(f"case {folder.name!r} of session {source.id} cannot be read now, so it has no rubric "
                                f"to grade with: {problem} — fix it, or name the session's other cases")
    runs = history.runs(source.id, info=source)
    store = ArtifactStore(project.workspaces_dir / FOLDER)
    cap = project.config.judge.max_artifact_bytes
    pick = RejudgePick(source, [found[c] for c in wanted if c in found], judge_model=judge_model,
                       problems=list(runs.problems))
    judged = 0
    for record in runs:
        if record.case_id not in wanted:
            continue
        case = found.get(record.case_id)
        judged += bool(record.judge_artifacts or _reached_judge(record))
        why = _not_rejudgeable(record, case)
        if why is None:
            assert case is not None
            try:
                inputs = _inputs(record, case, store, cap)
            except NotKept as gone:
                why = str(gone)
        if why is not None:
            pick.not_rejudgeable.append((record.case_id, record.k, why))
            if case is not None and case.judge_checks:  # its case stays, with no verdict
                pick.runs[(record.case_id, record.k)] = RejudgeRun(record, unjudgeable=why)
            continue
        pick.runs[(record.case_id, record.k)] = RejudgeRun(record, inputs)
    if not judged:
        of = f" of {', '.join(names)}" if names else ""
        raise ScarbookError(f"session {source.id} has no judged runs{of}: nothing to grade again (its judge checks "
                            "were skipped or never reached) — run scarbook eval")
    if not pick.regraded:
        raise ScarbookError("\n".join([f"no judged run of session {source.id} can be graded again "
                                       f"({plural(len(pick.not_rejudgeable), 'run')} not re-judgeable):",
                                       *unjudgeable_lines(pick)]))
    pick.cases = [c for c in pick.cases if pick.jobs[c.id]]
    return pick


def last_kept(history: History, case_id: str) -> tuple[SessionInfo, int] | None:
    """The newest session that ran `case_id`, with how many of its runs of it kept an artifact (the
    editor's offer after a rubric change); None when that session kept none."""
    latest = history.latest_by_case([case_id]).get(case_id)
    if latest is None:
        return None
    kept = sum(1 for r in latest.runs if any("sha256" in a for a in r.judge_artifacts.values()))
    return (latest.session, kept) if kept else None


def _reached_judge(record: RunRecord) -> bool:
    return any(c.type == "llm_judge" and c.judge is not None for c in record.checks)


def _not_rejudgeable(record: RunRecord, case: Case | None) -> str | None:
    """Why this run cannot be graded again (None: it can be, or it is carried as it was)."""
    if case is None:
        return f"case {record.case_id!r} is no longer in the collection"
    if not case.judge_checks:
        return "the case has no llm_judge check now"
    if record.checks and [c.type for c in record.checks] != [c.type for c in case.checks]:
        return "the case's checks changed beyond their rubrics since (rule checks are not run again: run scarbook eval)"
    kept = record.judge_artifacts
    for i, check in enumerate(case.checks):
        entry = kept.get(str(i))
        if check.is_judge and entry is not None and "not_kept" in entry:
            return f"its artifact was not kept ({entry['not_kept']})"
    if kept and any(str(i) not in kept for i, c in enumerate(case.checks) if c.is_judge):
        return "an artifact of one of its judge checks was not kept"
    if not kept and _reached_judge(record):
        return "its artifact was not kept (the session predates kept artifacts, or judge.keep_artifacts was false)"
    if not kept and record.status == RunStatus.UNJUDGED:
        return "its judge checks were skipped (no artifact was read)"
    return None


def _inputs(record: RunRecord, case: Case, store: ArtifactStore, cap: int) -> list[JudgeInput]:
    """The judge checks to grade again with their kept artifacts; [] for a run carried as it was."""
    inputs = []
    for i, check in enumerate(case.checks):
        entry = record.judge_artifacts.get(str(i))
        if not check.is_judge or entry is None:
            continue
        if "refused" in entry:
            inputs.append(JudgeInput(i, check, ArtifactRefused(entry["refused"])))
            continue
        artifact = store.load(entry.get("sha256", ""))
        ref = tool_input_of(check.params.get("artifact"))
        wanted = ref.source if ref is not None else str(check.params.get("artifact", OUTPUT))
        if artifact.source != wanted:
            raise NotKept(f"check {i + 1} now grades {wanted!r}; the kept artifact is {artifact.source!r}")
        inputs.append(JudgeInput(i, check, _recap(artifact, cap)))
    return inputs


def _ends_as(source: SessionInfo) -> tuple[str, str] | None:
    """How a rejudge of `source` ends when it finishes: as its source did, when that did not finish (it holds
    only the runs the source finished: no verdict, whatever they say)."""
    if source.state == SessionState.FINISHED:
        return None
    return (str(source.state), f"rejudge of session {source.id}, which was {source.state}: it holds only the runs "
                               "that session finished, so it gives no verdict either")


def _recap(artifact: Artifact, cap: int) -> Artifact:
    """Today's judge.max_artifact_bytes over a kept artifact (a larger cap cannot give back what was cut)."""
    data = artifact.text.encode("utf-8")
    if len(data) <= cap:
        return artifact
    return Artifact(data[:cap].decode("utf-8", errors="ignore"), artifact.label, artifact.source,
                    artifact.size_bytes, True)


class SourceAgent:
    """The agent of a rejudge: never run. Its label is the source session's agent."""

    env_allow: tuple[str, ...] = ()

    def __init__(self, label: str) -> None:
        self.label = label

    def sandbox_for(self, network: bool | None) -> None:
        return None

    def preflight(self) -> None:
        pass

    async def run(self, *args: Any, **kwargs: Any):
        raise RuntimeError("a rejudge never runs the agent")


class RejudgeExecutor(LocalExecutor):
    """The local pool, whose worker part hands back the source run instead of running the agent."""

    def __init__(self, concurrency: int, pick: RejudgePick) -> None:
        super().__init__(concurrency)
        self.pick = pick

    def where(self) -> RunPlace:
        return RunPlace(ExecutorType.LOCAL, rejudge=True)

    def connect(self) -> str | None:
        """Nothing to join (the TUI connects a cluster executor before its session)."""
        return None

    async def agent_part(self, ctx: Any, agent: Any, case: Case, k: int, manifests: dict,
                         emit: Callable) -> AgentPart:
        run = self.pick.runs[(case.id, k)]
        record = carried_record(run.source, ctx.session_id, self.pick.source.id)
        emit(RunStarted(ctx.session_id, case.id, k, record.workspace))
        if run.unjudgeable:
            return AgentPart(unjudged_record(record, run.unjudgeable), settled=True, carried=True)
        if not run.inputs:
            return AgentPart(record, settled=True, carried=True)
        for inp in run.inputs:
            record.checks[inp.index] = CheckResult(inp.check.type, CheckStatus.SKIPPED, AWAITING_JUDGE, inp.index)
        facts = AgentFacts(exit_code=record.exit_code, timeout_s=ctx.timeout_for(case))
        return AgentPart(record, list(run.inputs), settled=False, facts=facts)


def carried_record(source: RunRecord, session_id: str, source_id: str) -> RunRecord:
    """The source run as the new session's: its agent's work and rule checks kept, no spend of its own yet."""
    record = RunRecord.from_dict(source.to_dict())
    record.session_id, record.started_at, record.duration_s = session_id, now_iso(), 0.0
    record.agent_usage, record.judge_usage, record.judge_calls = Usage(), Usage(), 0
    record.notes = [*record.notes, f"rejudge of session {source_id} run {source.k}: the agent's work and rule "
                                   "checks are the source run's; only the judge checks were graded again"]
    return record


def unjudged_record(record: RunRecord, why: str) -> RunRecord:
    """A run that cannot be graded again, as the new session keeps it: unjudged (no verdict, so its case
    has none), its judge checks skipped saying why, no cause (nothing failed: nothing was graded)."""
    said = f"not re-judgeable: {why}"
    for i, check in enumerate(record.checks):
        if check.type == "llm_judge":
            record.checks[i] = CheckResult(check.type, CheckStatus.SKIPPED, said, i)
    record.status, record.reason, record.cause = RunStatus.UNJUDGED, said, None
    return record


# what a key problem (missing, or rejected by the judge) ends with here: a rejudge has no --skip-judge
KEY_HINT = KeyHint(SKIP_HINT.stopped, " — a rejudge only judges: it has nothing to run without the judge")


def prepare_rejudge(site: SessionSite, pick: RejudgePick, *, concurrency: int | None = None,
                    gate: GatePolicy | None = None, judge_env=None,
                    reports: dict[str, Path] | None = None) -> Preparation:
    """A ready session that grades `pick` again (no agent is built or preflighted), or the errors."""
    if pick.judge_model:
        cfg = site.config
        site = replace(site, config=cfg.with_overrides(judge=msgspec.structs.replace(cfg.judge, model=pick.judge_model)))
    plan = SessionPlan(pick.cases, max(pick.source.runs_per_case, 1), label=pick.label, concurrency=concurrency,
                       keep_all=True, retry_infra=0, rerun_of=pick.link(), jobs=pick.jobs, judge_env=judge_env,
                       gate=gate, reports=dict(reports or {}), ends_as=_ends_as(pick.source), key_hint=KEY_HINT)
    errors = unwritable_places(site, plan)
    # no agent runs now: the cache is read as the source session's own was (a sandboxed one's trusted part only)
    judge = preflight_judge(site, plan, errors, confined=pick.source.isolation is not None and pick.source.isolation.sandboxed)
    if errors:
        return Preparation(errors=errors)
    try:
        spec = AgentSpec.from_config(site.config.agent)
    except ValueError:
        spec = DemoSpec()  # only a cluster executor reads it; a rejudge runs locally
    ready = ReadySession(site, plan, spec, SourceAgent(pick.source.agent), judge, None)
    ready.recorded_agents = list(pick.source.agents)  # a session of several agents: theirs
    # the judge's calibration, read once for the report and the live screen (with the judge it grades with)
    calibration = calibration_for(site.history, site.workspaces_dir, site.config.judge, {c.id: c for c in pick.cases})
    ready.calibration = calibration  # recorded in its gate (run/gate.calibration_record)
    return Preparation(ready, calibration=calibration)
