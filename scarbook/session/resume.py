"""`scarbook resume SESSION` of a session that stopped short — its scarbook killed (interrupted), stopped with
Ctrl-C (cancelled) or aborted because the judge rejected its key, every finished run kept — planned: exactly the
runs it is missing, under its own id, with
its cases, agent(s), isolation, judge and gate as it recorded them (a session that judged in a Message Batch judges
the runs it runs now in a batch of its own, recorded as an eval's, so a resume killed while it is out collects it).
Or the reason it cannot go on without mixing runs that are not comparable, said with the fix (most often:
`scarbook eval` afresh).

    planned = plan_resume(site, found, info)         # the session held (its lock) from here on
    code = run_planned(planned, ...)                 # cli/eval_run.py: prepared, driven and reported as eval's

Per case the runs it is missing are the planned ones less those it holds: 1..N for a fixed N; under
`undecided: more`, 1 up to the look its held runs reached (the looks then go on as they would have); under
--runs auto, 1 up to its cap, the sequential rule reading the held runs first (run/runner.py take_up), so a
case it had decided runs no more.

A run that met the judge's rejected key (cause judge-rejected-key) reached no verdict through no fault of the agent
or the case: it is not one of the runs the session holds. Its line is removed from the runs file (and the count
session.json recorded lowered first, so a resume killed here leaves a readable session) and the run runs again."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from scarbook.cases.io import CaseSet, case_digest
from scarbook.config import GatePolicy
from scarbook.errors import ScarbookError
from scarbook.judge.errors import SKIP_HINT, KeyHint
from scarbook.models import Case, RunRecord, SessionInfo, SessionState
from scarbook.models.words import Isolation
from scarbook.run.blocks import runs_of_blocks
from scarbook.run.plan import SEQUENTIAL, Resumed, SessionPlan, SessionSite
from scarbook.session.plan import EvalPlan
from scarbook.stats.rates import effective_threshold
from scarbook.text import plural

RESUMABLE = (SessionState.INTERRUPTED, SessionState.CANCELLED, SessionState.ABORTED)
AFRESH = "run `scarbook eval` afresh"
KEY_REJECTED = "judge-rejected-key"  # run/causes.py's rule of a run the judge's rejected key stopped


def refuse_state(info: SessionInfo) -> None:
    """A session that is not interrupted, cancelled or aborted has no runs to resume: why, and what to do instead."""
    sid, state = info.id, info.state
    if state == SessionState.RUNNING:
        raise ScarbookError(f"session {sid} is still running: its scarbook is alive — wait for it to end, or stop "
                            "it (Ctrl-C) and resume it then")
    if state == SessionState.FINISHED:
        raise ScarbookError(f"session {sid} already finished: it misses no runs — see `scarbook report {sid}`, "
                            f"or {AFRESH}")
    if state not in RESUMABLE:
        raise ScarbookError(f"session {sid} is {str(state)!r}: only an interrupted, cancelled or aborted session "
                            f"can be resumed — {AFRESH}")


def plan_resume(site: SessionSite, found: CaseSet, info: SessionInfo, *, concurrency: int | None = None,
                reports: dict | None = None, batch: bool = False) -> EvalPlan:
    """The plan that runs what session `info` is missing, with the session held by this process (its lock:
    a second resume is refused); a ScarbookError (exit 2) naming what changed since it started, and the
    lock let go, when it cannot be resumed. `batch` (`scarbook resume`): a session that judged in a Message Batch
    judges the runs it runs now in one too, at the batch price (the TUI's live screen judges each run as it ends)."""
    refuse_state(info)
    _refuse_kind(info)
    history = site.history
    history.hold_session(info, "it resumes the session itself")
    try:
        info = history.read_session(info.id)  # as it is now that no one else can change it
        if info.state == SessionState.RUNNING:  # (read while this process holds it: its own scarbook died)
            info.state = SessionState.INTERRUPTED
        refuse_state(info)
        cases = _same_cases(site, found, info)
        named = _same_agents(site, info)
        history.mend_cut_runs(info.id)
        held = _held_runs(site, info)
        again = _met_rejected_key(held)
        plan = replace(_plan(site, info, cases, named, held, again, concurrency, reports or {}),
                       judge_batch=batch and info.batch is not None)
        if again:
            history.drop_runs(info, again)
    except BaseException:
        history.let_go(info.id)
        raise
    _clear_leftovers(site, info.id, plan)
    return EvalPlan(plan, _same_isolation(site, info))


def _refuse_kind(info: SessionInfo) -> None:
    why = _kind_refusal(info)
    if why:
        raise ScarbookError(why)


def _kind_refusal(info: SessionInfo) -> str:
    sid = info.id
    if info.shard is not None:
        return (f"session {sid} is a shard of a sharded session: run that shard again as it was run "
                "(eval --shard I/N --session-id), or `scarbook merge` the shards there are")
    if info.rerun_of is not None and info.rerun_of.rejudge:
        return f"session {sid} is a rejudge, which runs no agent: `scarbook rejudge {info.rerun_of.session}` again"
    return ""


def resume_hint(info: SessionInfo) -> str:
    """What to do about a session the judge's rejected key aborted, when `scarbook resume` can finish it ("" when
    it cannot: a rejudge, a shard)."""
    if info.state != SessionState.ABORTED or _kind_refusal(info):
        return ""
    return (f"its finished runs are kept: once the key is fixed, `scarbook resume {info.id}` runs the rest of the "
            "session")


def _same_cases(site: SessionSite, found: CaseSet, info: SessionInfo) -> list[Case]:
    """The session's cases as they are now, each as it was when the session started (its digest)."""
    by_id = found.by_id()
    broken = {p.path.parent.name for p in found.problems}
    cases = []
    for cid in info.case_ids:
        if cid in broken:
            raise ScarbookError(f"case {cid} of session {info.id} cannot be read now (see above): fix its "
                                "case.yaml to resume the session")
        if cid not in by_id:
            raise ScarbookError(f"case {cid} was deleted since session {info.id} started: its missing runs cannot "
                                f"run — restore it (`scarbook case restore {cid}`), or {AFRESH}")
        was, now = info.case_digests.get(cid), case_digest(by_id[cid])
        if was is not None and was != now:
            raise ScarbookError(f"case {cid} changed since session {info.id} started (its task, checks or seed: "
                                f"digest {was} → {now}): its new runs would not be comparable with the ones kept "
                                f"— put the case back as it was, or {AFRESH}")
        cases.append(by_id[cid])
    return cases


def _same_agents(site: SessionSite, info: SessionInfo) -> list:
    """The named agents the session ran (none: scarbook.yaml's agent:), refused unless scarbook.yaml still
    describes them (and the judge) as the session recorded them (its fingerprint)."""
    config = site.config
    missing = [n for n in info.agent_names if n not in config.agents]
    if missing:
        raise ScarbookError(f"agent {missing[0]} of session {info.id} is no longer in scarbook.yaml's agents: — "
                            f"put it back as it was, or {AFRESH}")
    tries = ([[config.agents[n] for n in info.agent_names]] if info.agent_names else
             [[], *([one] for one in config.agents.values())])  # one named agent (the TUI's pick) records none
    for named in tries:
        if config.fingerprint([a.settings for a in named] if named else None) == info.fingerprint:
            return named
    now = config.fingerprint([config.agents[n].settings for n in info.agent_names] if info.agent_names else None)
    what = (f"the judge model ({info.judge_model} → {config.judge_model})"
            if info.judge_model and info.judge_model != config.judge_model else
            "scarbook.yaml's agent (or the judge's prompt)")
    raise ScarbookError(f"{what} changed since session {info.id} started (fingerprint {info.fingerprint} → {now}): "
                        f"its new runs would not be comparable with the ones kept — put it back as it was, or {AFRESH}")


def _same_isolation(site: SessionSite, info: SessionInfo) -> SessionSite:
    """The site with the isolation the session ran (sandbox, with its network, or none), whatever
    scarbook.yaml asks now: a resumed run is confined as the runs it joins were."""
    confined = info.isolation
    if confined is None or confined.ran not in (Isolation.SANDBOX, Isolation.NONE):
        return site
    changes: dict = {"isolation": Isolation(confined.ran)}
    if confined.network is not None:
        changes["network"] = confined.network
    return replace(site, config=site.config.with_overrides(**changes))


def _held_runs(site: SessionSite, info: SessionInfo) -> dict[str, dict[int, RunRecord]]:
    """The runs the session holds, by case and k; refused when its history cannot all be read (a run left out
    would run again beside a line that still names its k) or its runs wait for a judge batch never sent."""
    runs = site.history.runs(info.id, info=info)
    if runs.problems:
        raise ScarbookError(f"session {info.id}'s history cannot all be read, so which runs it misses is not "
                            f"known: {runs.problems[0]} — {AFRESH}")
    held: dict[str, dict[int, RunRecord]] = defaultdict(dict)
    for run in runs:
        if any(c.judge is not None and c.judge.waiting for c in run.checks):
            raise ScarbookError(f"session {info.id} ran with --judge-batch and was stopped before its batch was "
                                f"sent: its runs wait for a judge that was never asked — {AFRESH}")
        held[run.case_id][run.k] = run
    return held


def _met_rejected_key(held: dict[str, dict[int, RunRecord]]) -> dict[str, list[int]]:
    """The runs k of each case that met the judge's rejected key, taken out of `held`: they run again."""
    again: dict[str, list[int]] = {}
    for case_id, runs in held.items():
        ks = [k for k, run in sorted(runs.items()) if run.cause is not None and run.cause.rule == KEY_REJECTED]
        for k in ks:
            del runs[k]
        if ks:
            again[case_id] = ks
    return again


def _plan(site: SessionSite, info: SessionInfo, cases: list[Case], named: list,
          held: dict[str, dict[int, RunRecord]], again: dict[str, list[int]], concurrency: int | None,
          reports: dict) -> SessionPlan:
    gate = info.gate
    policy = GatePolicy.from_record(gate.policy()) if gate is not None else site.config.gate
    looks = list(gate.looks) if gate is not None and gate.looks else [info.runs_per_case]
    adaptive = gate is not None and gate.rule == SEQUENTIAL
    if adaptive:
        _same_thresholds(site, info, cases)
    if len(info.agent_names) > 1 and (adaptive or len(looks) > 1):
        raise ScarbookError(f"session {info.id} compared agents with looks (--runs auto or undecided: more): "
                            f"resuming it is not supported yet — {AFRESH}")
    # the looks count blocks of one run of each agent in a session of several (run/blocks.py); jobs count runs
    tops = [info.runs_per_case] if adaptive else [runs_of_blocks(look, info.agent_names) for look in looks]
    jobs = {c.id: _missing(held.get(c.id, {}), tops) for c in cases}
    return SessionPlan(cases, info.runs_per_case if adaptive else looks[0], label=info.label, concurrency=concurrency,
                       skip_judge=info.partial, judge_skipped_why="the session resumed ran without its judge",
                       adaptive=adaptive, gate=policy, max_runs=looks[-1], jobs=jobs, rerun_of=info.rerun_of,
                       reports=dict(reports), agents=named, key_hint=_key_hint(info.id),
                       # its batch record is of a batch collected or never made (a resumable session is not judging):
                       # a batch of the runs run now records itself, and batch.json with it, for a resume to collect
                       resumed=Resumed(replace(info, batch=None), held, again))


def _key_hint(session_id: str) -> KeyHint:
    """A judge key problem met while resuming: resume has no --skip-judge (its runs are judged as the session's were)."""
    return KeyHint(SKIP_HINT.stopped, f" — resuming session {session_id} judges its runs as they were judged: it "
                   "cannot run without the judge")


def _missing(held: dict[int, RunRecord], looks: list[int]) -> list[int]:
    """The runs k a case misses: 1 up to the first look its held runs have not passed, less those it holds."""
    top = max(held, default=0)
    to = next((look for look in looks if look >= top), looks[-1])
    return [k for k in range(1, to + 1) if k not in held]


def _same_thresholds(site: SessionSite, info: SessionInfo, cases: list[Case]) -> None:
    """--runs auto decides each case against its threshold as the runs come: one that moved since would decide
    the rest of its runs against another line."""
    was = info.gate.thresholds if info.gate is not None else {}
    for case in cases:
        now = effective_threshold(case, site.config.threshold)
        if case.id in was and abs(was[case.id] - now) > 1e-12:
            raise ScarbookError(f"case {case.id}'s threshold changed since session {info.id} started ({was[case.id]} "
                                f"→ {now}): --runs auto's rule decided its runs against the old one — put it back, "
                                f"or {AFRESH}")


def _clear_leftovers(site: SessionSite, sid: str, plan: SessionPlan) -> None:
    """The transcript and usage files of the runs killed mid-way: the runs that start again must not append to
    (or be counted from) them."""
    for case_id, ks in (plan.jobs or {}).items():
        folder = site.workspaces_dir / sid / case_id
        todo = {str(k) for k in ks}
        try:
            names = [e.name for e in folder.iterdir()]
        except OSError:
            continue
        for name in names:
            k, _, rest = name.partition(".")
            if k in todo and rest in ("transcript.jsonl", "usage.jsonl"):
                (folder / name).unlink(missing_ok=True)


def missing_line(plan: SessionPlan) -> str:
    """What a resume will run, in one line."""
    jobs = plan.jobs or {}
    n, cases = sum(map(len, jobs.values())), sum(1 for ks in jobs.values() if ks)
    resumed = plan.resumed
    sid = resumed.info.id if resumed is not None else ""
    again = sum(map(len, resumed.again.values())) if resumed is not None else 0
    why = (f"; {plural(again, 'run')} that met the judge's rejected key {'runs' if again == 1 else 'run'} again"
           if again else "")
    if plan.adaptive:
        return (f"resuming session {sid}: --runs auto goes on from the runs it holds, at most "
                f"{plural(n, 'more run')} of {plural(cases, 'case')} (each case stops once decided{why})")
    return f"resuming session {sid}: {plural(n, 'missing run')} of {plural(cases, 'case')}" + (
        f" ({why[2:]})" if why else "")
