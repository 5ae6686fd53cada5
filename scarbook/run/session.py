"""One way into a session for every front-end: a plan, prepared into a ready session or refused.

    prep = prepare_session(SessionSite.of(project), SessionPlan(cases, runs=10, skip_judge=False))
    if prep.errors: ...                      # CLI: print each, exit 2. TUI: show them, start nothing.
    async for event in run_session(prep.session): ...

`prepare_session` builds and preflights the agent (its program exists; a python agent's module
imports), the judge (its API key is set) and the adaptive decider, before anything is recorded.
So a configuration mistake is said once, before the first run, instead of as N failed runs.

What it needs of history's calibration (the judge's measured error, for --runs auto's rule and the
cases a plan cannot decide) is handed in as `judge_error`: the session layer reads it
(session/prepare.py), so preparing reads the calibration once and never reaches back for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from scarbook.agents import Agent, AgentSpec, CommandAgent, keeps_transcript, make_agent
from scarbook.agents.named import NamedAgent
from scarbook.agents.sandbox import SandboxUnavailable, require_sandbox
from scarbook.agents.slots import why_no_slots
from scarbook.cases.placeholders import placeholder_note
from scarbook.checks import TRAJECTORY_CHECKS
from scarbook.checks.spec import needs_transcript
from scarbook.config import GatePolicy
from scarbook.errors import ScarbookError
from scarbook.fs.files import named_file_unwritable_why, shared_name, unwritable_why
from scarbook.judge.grader import Grader
from scarbook.models import Case, ExecutorType, GateMode
from scarbook.models.session_parts import AgentEntry, Confinement
from scarbook.models.words import Isolation, Keep, Undecided
from scarbook.record import RecordSettings, ReplaySource, load_replay
from scarbook.run.plan import SessionPlan, SessionSite
from scarbook.run.shard import Shard
from scarbook.stats.decisions import more_looks
from scarbook.stats.head_to_head import COMPARE_FIRST_LOOK, auto_looks
from scarbook.stats.judge_error import JudgeBasis, JudgeError, run_level
from scarbook.stats.plans import margin_warning, undecidable
from scarbook.stats.rates import effective_threshold
from scarbook.text import with_article
from scarbook.transcripts.tool_input import tool_input_of

if TYPE_CHECKING:
    from scarbook.history.judge_truth import Calibration

# decide(case, passes, fails) -> "above" | "below" | "undecided" | None (keep running)
DecideFn = Callable[[Case, int, int], str | None]


# How infra retries combine with --runs auto: they do not. The sequential rule stops a case as soon
# as its runs so far decide it; a retry would give only the runs that did not pass a second chance,
# and the rule's error guarantee does not hold for that. So under --runs auto a run the machine
# failed is never retried; it is left out of the decision (no evidence about the agent), and the
# case runs on to its decision or its cap.
RETRY_WITH_AUTO = ("--retry-infra cannot be combined with --runs auto: the sequential rule decides from runs "
                   "as they finish, and a retry would give only the runs that did not pass a second chance. "
                   "Under --runs auto a run the machine failed is never retried: it is left out of the "
                   "decision and the case runs on to its decision or --max-runs. Drop --retry-infra, or "
                   "give a fixed --runs N")


@dataclass
class ReadySession:
    """A plan whose agent, judge and decider are built and preflighted: run_session() runs it."""

    site: SessionSite
    plan: SessionPlan
    agent_spec: AgentSpec
    agent: Agent
    judge: Grader | None = None  # None: no judge checks, or judging skipped
    decide: DecideFn | None = None
    record: RecordSettings | None = None  # the model-call recorder's settings; None: no recorder
    replay: ReplaySource | None = None  # record.mode replay: the recorded calls, loaded before any run
    # what confines the agent this session (SessionInfo.isolation); None when no agent runs (a rejudge)
    isolation: Confinement | None = None
    # --runs auto with a calibrated judge: the (q0, q1) each case's rule ran with (recorded in the
    # session's gate, so the report reads the runs with the rule that read them)
    judge_rates: dict[str, tuple[float, float]] = field(default_factory=dict)
    # the judge's measured error when a fresh calibration covers it and the session judges (None: the raw
    # rates): `undecided: more` stops a judged case at a look only where the corrected gate decides it
    judge_error: JudgeError | None = None
    # the calibration it was prepared with (session/prepare.py, tools/rejudge.py), recorded in its gate
    # (run/gate.calibration_record) so a later report decides with it as its runner did; None: none read
    calibration: Calibration | None = None
    # a session of named agents: each built and preflighted, in the plan's order (the baseline first);
    # `agent` and `agent_spec` are the first's. {} for the one agent of scarbook.yaml's agent:
    agents: dict[str, Agent] = field(default_factory=dict)
    # the agents a session records when it runs none itself: a rejudge of a session of several agents
    # carries its source's (SessionInfo.agents), so every carried run's agent stays one of them
    recorded_agents: list[AgentEntry] = field(default_factory=list)
    # first judged: the rubric items' ids written into case.yaml as the session starts (run/runner.py) — not
    # while it is prepared, so a session refused after preparing (an executor that cannot connect) writes
    # nothing; a rejudge never writes them
    writes_item_ids: bool = False

    @property
    def agent_names(self) -> list[str]:
        """The agents run in blocks, baseline first; [] for a session of one agent (named or not)."""
        return list(self.agents) if len(self.agents) > 1 else []

    @property
    def compared(self) -> bool:
        return len(self.agents) > 1

    @property
    def partial(self) -> bool:
        """Some verdict-bearing checks will not be graded: the session can never gate green."""
        return self.judge is None and any(c.judge_checks for c in self.plan.cases)

    @property
    def gate(self) -> GatePolicy:
        return self.plan.gate or self.site.config.gate

    @property
    def looks(self) -> list[int]:
        """The run counts at which the gate decides: N alone, or N, 2N, ... --max-runs for
        `undecided: more` (not with --runs auto, whose SPRT decides after every run, nor a shard).
        A session of several agents counts blocks (one run of each agent): under --runs auto it looks at
        10, 20, 40, ... blocks up to the cap, under `undecided: more` at N, 2N, ... --max-runs."""
        plan = self.plan
        if self.compared and plan.shard is None and plan.adaptive:
            return list(auto_looks(COMPARE_FIRST_LOOK, plan.runs))
        if self.gate.undecided == Undecided.MORE and not plan.adaptive and plan.shard is None and plan.max_runs:
            return more_looks(plan.runs, plan.max_runs)
        return [plan.runs]

    @property
    def concurrency(self) -> int:
        return self.plan.concurrency or self.site.config.concurrency

    @property
    def retry_infra(self) -> int:
        """How often a run the machine failed runs again. --runs auto never retries (RETRY_WITH_AUTO)."""
        if self.plan.adaptive:
            return 0
        return self.site.config.retry_infra if self.plan.retry_infra is None else self.plan.retry_infra

    @property
    def keep_all(self) -> bool:
        return self.site.config.keep == Keep.ALL if self.plan.keep_all is None else self.plan.keep_all


@dataclass
class Preparation:
    """Either a ready session or the configuration errors that prevent one (each a full sentence)."""

    session: ReadySession | None = None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said once, before the runs (an unconfined agent)
    # said once, before the runs: (case id, why) for each case this plan cannot call above its threshold
    # even if every run passes (stats/plans.py)
    undecidable: list[tuple[str, str]] = field(default_factory=list)
    # said once, before the runs: what this plan's rule can decide that its thresholds do not say (stats/plans.py)
    warnings: list[str] = field(default_factory=list)
    # the judge's calibration the session was prepared with (session/prepare.py reads it once): the report
    # and the live screen correct the rates with it; None where no one read it (a rejudge reads its own)
    calibration: Calibration | None = None


def prepare_session(site: SessionSite, plan: SessionPlan, *, judge_error: JudgeError | None = None) -> Preparation:
    """The plan's agents, judge and decider built and preflighted at `site`, or every reason it cannot run.
    `judge_error`: the judge's measured error when a fresh calibration covers it (None: the raw rates)."""
    errors: list[str] = []
    if not plan.cases:
        errors.append(f"no cases to run in {site.cases_dir}")
    if plan.runs < 1:
        errors.append(f"runs must be a positive number, got {plan.runs}")
    if plan.shard is not None:
        errors.extend(_shard_problems(site, plan, plan.shard))
        if plan.judge_batch:
            errors.append("--judge-batch cannot be combined with --shard: `scarbook merge` gates on the shards' "
                          "verdicts, which a batch would leave waiting; judge shards online")
    if plan.retry_infra is not None and plan.retry_infra < 0:
        errors.append(f"--retry-infra must be 0 or more, got {plan.retry_infra}")
    elif plan.adaptive and plan.retry_infra:
        errors.append(RETRY_WITH_AUTO)
    errors.extend(unwritable_places(site, plan))
    notes: list[str] = []
    built, isolation = _preflight_agents(site, plan.agents, errors, notes)
    spec, agent = built[0] if built else (None, None)
    sandboxed = isolation is not None and isolation.sandboxed
    record = plan.record if plan.record is not None else site.config.record
    replay = _load_replay(site, record, errors)  # record.mode replay: the source's calls, read before any run
    for one_spec, _ in built:
        errors.extend(_trajectory_problems(plan.cases, one_spec, recorded=record is not None))
        if sandboxed and record is None:  # (recorded: the proxy is its way out)
            errors.extend(_offline_problem(one_spec, site.config.network, plan.cases))
    errors[:] = list(dict.fromkeys(errors))  # two agents of one type meet the same problem: said once
    judge = preflight_judge(site, plan, errors, confined=sandboxed)
    notes += [note for case in plan.cases if (note := placeholder_note(case, judged=judge is not None))]
    decide = None
    rates: dict[str, tuple[float, float]] = {}
    if len(plan.agents) > 1 and site.config.executor.type != ExecutorType.LOCAL:
        errors.append("--agents runs on this machine for now: a session of several agents cannot use executor: "
                      f"{site.config.executor.type} — set executor: local, or compare in two sessions")
    if plan.adaptive and plan.cases and plan.runs >= 1 and len(plan.agents) < 2:
        from scarbook.stats.sequential import make_decider

        rates = judge_rates(judge_error, plan.cases) if judge is not None else {}
        if plan.resumed is not None and plan.resumed.info.gate is not None:  # the rule goes on as it began
            rates = {c: (float(r[0]), float(r[1])) for c, r in plan.resumed.info.gate.judge_rates.items()}
        try:
            decide = make_decider(plan.cases, site.config.threshold, plan.runs, rates)
        except ValueError as exc:
            errors.append(f"--runs auto cannot decide these cases: {exc}")
    if errors or agent is None or spec is None or any(a is None for _, a in built):
        return Preparation(errors=errors)
    agents = {named.name: a for named, (_, a) in zip(plan.agents, built, strict=False) if a is not None}
    ready = ReadySession(site, plan, spec, agent, judge, decide, record, replay, isolation, rates,
                         judge_error=judge_error if judge is not None else None, agents=agents,
                         writes_item_ids=judge is not None and site.config.judge.write_item_ids)
    margin = margin_warning(plan.cases, site.config.threshold, plan.runs, rates) if decide is not None else ""
    return Preparation(ready, notes=notes, undecidable=_undecidable(ready, judge_error), warnings=[margin] if margin else [])


def _load_replay(site: SessionSite, record: RecordSettings | None, errors: list[str]) -> ReplaySource | None:
    """record.mode replay: the source session's recorded calls (a source with none is refused here)."""
    if record is None or not record.replay or record.source is None:
        return None
    try:
        info = site.history.resolve(str(record.source))  # (a str once read: settings.py)
        if len(info.agent_names) > 1:  # run k of it is whichever agent its block drew: no one agent's run k
            errors.append(f"--replay {record.source}: session {info.id} compared the agents "
                          f"{', '.join(info.agent_names)}: its runs are theirs in blocks drawn at random, and a replay "
                          "answers one agent's runs — replay a session of one agent")
            return None
        runs = site.history.runs(info.id, info=info)
        transcripts = {(r.case_id, r.k): r.transcript_path for r in runs}
        return load_replay(info.id, transcripts, record.fork_at, {(r.case_id, r.k): r.recording for r in runs})
    except ScarbookError as exc:
        errors.append(exc.message if exc.message.startswith("--replay") else f"--replay {record.source}: {exc.message}")
        return None


def _undecidable(ready: ReadySession, judge_error: JudgeError | None) -> list[tuple[str, str]]:
    """The cases this plan cannot call above their threshold even if every run passes (stats/plans.py):
    a fixed-N evidence gate only (--runs auto runs on until it decides; point mode always decides). A
    judged case the corrected gate decides is sized by its own test and `judge_error` (its calibration)."""
    plan, gate = ready.plan, ready.gate
    if plan.adaptive or gate.mode != GateMode.EVIDENCE or plan.shard is not None or ready.compared:
        return []  # (a session of several agents gates on its comparison, not on thresholds)
    bases: dict[str, JudgeBasis] = {}
    if ready.judge is not None and judge_error is not None:
        for case in plan.cases:
            basis = judge_error.for_case(case.id).basis(len(case.rubric_items))
            if case.judge_checks and basis is not None:
                bases[case.id] = basis
    cases = [(c.id, effective_threshold(c, ready.site.config.threshold)) for c in plan.cases]
    return undecidable(cases, ready.looks[-1], gate.alpha, bases)


def judge_rates(judge_error: JudgeError | None, cases: list[Case]) -> dict[str, tuple[float, float]]:
    """--runs auto with a calibrated judge: each judged case's run-level (q0, q1) from `judge_error`, so the
    sequential test decides on the true rate (none when no fresh calibration covers the judge)."""
    if judge_error is None:
        return {}
    rates = {}
    for case in cases:
        if case.judge_checks:
            model = judge_error.for_case(case.id)
            q0, q1 = run_level(model.q0.value, model.q1.value, len(case.rubric_items))
            if q0 + q1 > 1:
                rates[case.id] = (q0, q1)
    return rates


def ready_session(site: SessionSite, plan: SessionPlan, *, judge_error: JudgeError | None = None) -> ReadySession:
    """prepare_session for scripts and tests: the configuration errors raised as one ScarbookError."""
    prep = prepare_session(site, plan, judge_error=judge_error)
    if prep.session is None:
        raise ScarbookError("\n".join(prep.errors))
    return prep.session


def unwritable_places(site: SessionSite, plan: SessionPlan) -> list[str]:
    """Each place the session writes that cannot be written, said before any run (so no run is lost
    to it): the history, the workspaces, the report files asked for. A rejudge checks its own so."""
    problems = [clash] if (clash := shared_name(plan.reports)) else []
    for folder, what in ((site.history.dir, "the session history"), (site.workspaces_dir, "the workspaces")):
        why = unwritable_why(folder)
        if why:
            problems.append(f"{what} cannot be written: {why} — make {folder} a writable folder, or point "
                            "workspaces_dir in scarbook.yaml at one")
    for option, path in plan.reports.items():
        refusal = site.own_file_refusal(option, path)
        if refusal:
            problems.append(refusal)
            continue
        why = named_file_unwritable_why(path)
        if why:
            problems.append(f"{option} {path} cannot be written: {why} — choose a writable path for {option}")
    return problems


# What an unconfined agent can reach, said once per session whenever it runs without the sandbox.
UNCONFINED = ("the agent can read, write and delete anything your user can, reach the network and signal your "
              "other processes (README: Threat model)")
NONE_NOTE = f"isolation: none — this session runs unconfined: {UNCONFINED}"


def choose_isolation(site: SessionSite, spec: AgentSpec, notes: list[str]) -> Confinement:
    """What confines the agent this session (ReadySession.isolation). `auto` (the default) is the
    sandbox where bubblewrap starts here (tried once per process, now) and the agent is a program, its
    runs in slots where they run (agents/slots.py why_no_slots; else a bwrap per run, as `sandbox`);
    else none, and one note says why and what the agent can reach. `none` asked for says the same
    without a why; `sandbox` (a bwrap per run) and `slot` asked for are make_agent's to refuse where
    the sandbox cannot start."""
    cfg = site.config
    if cfg.isolation == Isolation.SANDBOX:
        return Confinement(Isolation.SANDBOX, cfg.isolation, cfg.network)
    if cfg.isolation == Isolation.SLOT:
        why = _why_no_slots(site)
        if why:
            notes.append(f"isolation: slot — {why}, so each run gets a bwrap of its own (isolation: sandbox)")
        return Confinement(Isolation.SANDBOX, cfg.isolation, cfg.network, slots=why is None or None)
    if cfg.isolation == Isolation.NONE:
        notes.append(NONE_NOTE)
        return Confinement(Isolation.NONE, Isolation.NONE)
    if not spec.SANDBOX:
        why = f"a {spec.type} agent runs inside scarbook's own process"
    else:
        try:
            require_sandbox(site.root, cfg.network)
            # the sandbox in slots where they run (the same view, a fraction of the cost), else a bwrap per run
            return Confinement(Isolation.SANDBOX, cfg.isolation, cfg.network, slots=_why_no_slots(site) is None or None)
        except SandboxUnavailable as exc:
            why = exc.message.removeprefix("isolation: sandbox cannot start: ").split(" — ")[0]
    notes.append(f"isolation: no sandbox here ({why}), so this session runs unconfined: {UNCONFINED}")
    return Confinement(Isolation.NONE, cfg.isolation, why=why)


def _why_no_slots(site: SessionSite) -> str | None:
    """Why this session's sandbox gives each run a bwrap of its own instead of slots (None: slots)."""
    if site.config.executor.type != ExecutorType.LOCAL:
        return f"a {site.config.executor.type} worker starts a bwrap for each run it is given"
    return why_no_slots()


def _offline_problem(spec: AgentSpec, network: bool, cases: list[Case]) -> list[str]:
    """An agent that needs the network (a CLI preset) in a sandbox without it, for some case: refused
    before the runs, which would all fail to reach the model. Not asked when the session records its
    model calls: the recorder's proxy reaches the sandbox without the network (proc/bridge.py)."""
    offline = [c.id for c in cases if not (network if c.network is None else c.network)]
    if not spec.NETWORK or not offline:
        return []
    return [f"the {spec.type} agent needs the network to reach its model's API, and the sandbox gives "
            f"{'case ' + offline[0] if len(offline) == 1 else str(len(offline)) + ' cases'} none — set "
            "network: true in scarbook.yaml (the sandbox then shares your network; files stay confined), "
            "or isolation: none"]


def _preflight_agents(site: SessionSite, named: list[NamedAgent], errors: list[str],
                      notes: list[str]) -> tuple[list[tuple[AgentSpec, Agent | None]], Confinement | None]:
    """Each agent built and preflighted (scarbook.yaml's agent:, or the plan's named agents in order),
    under one isolation for them all ("same sandbox": one that cannot be confined leaves every agent
    unconfined, and the note says so). No agents when one cannot be read at all or cannot be confined."""
    each: list[NamedAgent | None] = list(named) or [None]
    specs: list[AgentSpec] = []
    for one in each:
        try:
            specs.append(AgentSpec.from_config(site.config.agent if one is None else one.settings))
        except ValueError as exc:  # an agent set in code (scarbook.yaml's is checked when read)
            errors.append(str(exc) if one is None else f"agent {one.name}: {exc}")
            return [], None
    unconfinable = [spec for spec in specs if not spec.SANDBOX]
    try:
        isolation = choose_isolation(site, (unconfinable or specs)[0], notes)
    except ScarbookError as exc:
        errors.append(exc.message)
        return [], None
    return [(spec, _build_agent(site, spec, one, isolation, errors))
            for spec, one in zip(specs, each, strict=True)], isolation


def _build_agent(site: SessionSite, spec: AgentSpec, one: NamedAgent | None, isolation: Confinement,
                 errors: list[str]) -> Agent | None:
    """One agent built and preflighted; what fails is said (naming the agent, when it has a name)."""
    before = len(errors)
    try:
        agent = make_agent(spec, site.root, isolation=isolation.ran, network=site.config.network,
                           private=(str(site.workspaces_dir),),
                           slots=bool(isolation.slots))
        if one is not None and one.env_values:
            cast(CommandAgent, agent).env_values = dict(one.env_values)
        agent.preflight()
        return agent
    except ScarbookError as exc:  # (said with the word the user wrote: slot is the sandbox too)
        errors.append(exc.message.replace("isolation: sandbox ", f"isolation: {isolation.asked} ", 1)
                      if isolation.asked == Isolation.SLOT else exc.message)
    except Exception as exc:  # noqa: BLE001 — a python agent's module runs code at import
        errors.append(spec.preparation_failed(exc))
    if one is not None:
        errors[before:] = [f"agent {one.name}: {e}" for e in errors[before:]]
    return None


def _trajectory_problems(cases: list[Case], spec: AgentSpec, *, recorded: bool) -> list[str]:
    """Trajectory checks read each run's transcript: an agent that keeps none is refused before the first run."""
    if keeps_transcript(spec, recorded=recorded):
        return []
    users = [f"{c.id} (check {i + 1}, {ch.type})" for c in cases
             for i, ch in enumerate(c.checks) if ch.type in TRAJECTORY_CHECKS]
    agent = with_article(str(spec.type))
    shown = ", ".join(users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
    said = [f"trajectory checks read the run's transcript, but {agent} agent keeps none: "
            f"{shown} — turn on record: or use a preset (claude-code, codex){spec.TRANSCRIPT_HINT}"] if users else []
    return said + [f"{needs_transcript(c, i, ch)}, but {agent} agent keeps none — use a preset (claude-code, codex) "
                   f"or turn on record:{spec.TRANSCRIPT_HINT}"
                   for c in cases for i, ch in enumerate(c.checks) if tool_input_of(ch.params.get("artifact"))]


def preflight_judge(site: SessionSite, plan: SessionPlan, errors: list[str], *, confined: bool) -> Grader | None:
    """The plan's judge at `site` (judge/factory.preflighted_judge), or None; why it cannot grade goes on
    `errors` (its key problems end with the plan's `key_hint`). A rejudge (tools/rejudge.py) starts its judge so too."""
    if plan.skip_judge:
        return None
    from scarbook.judge import preflighted_judge  # the judge's modules load when a session is prepared

    judge, why = preflighted_judge(plan.cases, site.config.judge, env=plan.judge_env,
                                   workspaces=site.workspaces_dir, use_cache=plan.judge_cache, batch=plan.judge_batch,
                                   confined=confined, key_hint=plan.key_hint)
    if why:
        errors.append(why)
    return judge


def _shard_problems(site: SessionSite, plan: SessionPlan, shard: Shard) -> list[str]:
    if plan.adaptive:
        return ["--shard needs a fixed number of runs: --runs auto decides each case from all of its runs, "
                "which no single shard sees"]
    folder = site.history.dir / shard.folder_id
    if folder.exists():
        return [f"session {shard.folder_id} is already recorded in {site.history.dir} — each shard of a "
                "session runs once; give a new --session-id to run the session again"]
    return []
