"""What the user asked for, made into a SessionPlan: `scarbook eval`'s options and the TUI's launch
screen both end here, so a plan means the same from either face.

    site = SessionSite.of(project)
    planned = plan_eval(EvalRequest(site, project.load_cases(), case_ids=("a",), runs="auto"))
    prep = prepare_eval(planned.site, planned.plan)            # session/prepare.py

A face hands over one request: the options as given, with the site (the project's folder, its config as
read, its history) and the cases as read. Nothing here, nor below, is handed the Project.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from scarbook.agents.named import NamedAgent, known
from scarbook.cases.ids import no_such_cases
from scarbook.cases.io import CaseSet, no_cases_said
from scarbook.config import Config, GatePolicy
from scarbook.errors import ScarbookError
from scarbook.judge.errors import SKIP_HINT, TUI_HINT
from scarbook.judge.settings import JudgeSettings
from scarbook.models import Case, GateMode, Isolation, Undecided
from scarbook.models.label import MAX_LABEL_CHARS
from scarbook.models.words import SELECTORS
from scarbook.record.settings import RecordSettings
from scarbook.run.plan import SessionPlan, SessionSite
from scarbook.text import plural
from scarbook.tools.rerun import DEFAULT_ONLY, RerunPick, pick_rerun

if TYPE_CHECKING:
    from scarbook.cases.folders import ProjectFolders
    from scarbook.history.baseline import Baseline
    from scarbook.run.shard import Shard

DEFAULT_MAX_RUNS = 40  # --max-runs: the cap per case under --runs auto and --undecided more
# a label is shown beside the session's id in listings and headers; room for `verify`'s "reproduce <case id>"


@dataclass(frozen=True)
class EvalRequest:
    """`scarbook eval`'s options as given (None: scarbook.yaml's), or the launch screen's fields, with where
    they apply: the site (scarbook.yaml as read) and the collection as read (its problems already shown by
    the face)."""

    site: SessionSite
    found: CaseSet
    case_ids: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    runs: str | None = None  # a number, or "auto"
    preset: str | None = None
    max_runs: int = DEFAULT_MAX_RUNS
    gate_mode: str | None = None
    alpha: float | None = None
    undecided: str | None = None
    min_verdicts: int | None = None
    concurrency: int | None = None
    label: str = ""
    timeout_s: float | None = None
    keep_all: bool = False
    skip_judge: bool = False
    judge_cache: bool = True
    judge_batch: bool = False
    max_cost: float | None = None
    against: str | None = None  # baseline | SESSION
    shard: str | None = None  # I/N
    session_id: str | None = None
    retry_infra: int | None = None
    rerun: str | None = None
    only: str = DEFAULT_ONLY
    record: bool = False
    replay: str | None = None
    fork_at: int | None = None
    reports: Mapping[str, Path] = field(default_factory=dict)  # option -> path (--json, --junit)
    dry_run: bool = False  # only the cases and runs are planned (what --dry-run estimates)
    judge_env: Mapping[str, str] | None = None  # where the judge's API key is read (None: this process's)
    # the TUI's launch: with no judge API key, run without the judge (the session is partial) rather than refuse
    skip_judge_without_key: bool = False
    # --agents a,b,...: named agents of scarbook.yaml's agents: in one session, the first the baseline
    agents: tuple[str, ...] = ()
    agent: str | None = None  # one named agent instead of agent: (the TUI's launch, picking one)
    isolation: str | None = None  # --isolation: this session's, over scarbook.yaml's (which stays as read)
    # exactly `runs` runs of each case, judged as each ends: what `noise` (its A and A sides) and
    # `verify --reproduce N` count — no judge batch left waiting, no runs added by `undecided: more`
    fixed_runs: bool = False
    # the TUI's launch: its live screen shows each run's verdict as the run ends, so no judge batch
    watched: bool = False


@dataclass
class EvalPlan:
    """A request made into a plan, with what the face needs around it."""

    plan: SessionPlan
    site: SessionSite  # where the plan runs: the request's, with this session's overrides in its config
    shard: Shard | None = None
    baseline: Baseline | None = None  # --against, loaded and checked before any run
    notes: list[str] = field(default_factory=list)  # said before any run: what of scarbook.yaml was set aside
    online_why: str = ""  # why this session judges online whatever is asked ("": --judge-batch would batch it)


def plan_eval(request: EvalRequest) -> EvalPlan:
    """The plan `request` asks for, or a ScarbookError (exit 2) naming the option that cannot be."""
    check_label(request.label, request.site, request.session_id)
    site = session_site(request)
    config = site.config
    if request.session_id is not None and request.shard is None:
        raise ScarbookError("--session-id names a sharded session: give --shard I/N too")
    shard = None
    if request.shard is not None:  # (loaded when asked for, as the history's comparison below is)
        from scarbook.run.shard import Shard

        shard = Shard.parse(request.shard, request.session_id)
    rerun = _pick_rerun(site, request)
    cases = select_cases(site, request.found, tuple(rerun.case_ids) if rerun else request.case_ids, request.tags)
    asked = resolve_runs(config, request.runs, request.preset)
    n = asked if isinstance(asked, int) else request.max_runs
    skip_judge, why = request.skip_judge, "--skip-judge"
    if not skip_judge and request.skip_judge_without_key and judge_key_missing(config.judge, cases, request.judge_env):
        skip_judge, why = True, f"no API key in ${config.judge.api_key_env}"
    gate = gate_policy(config, request, sharded=shard is not None)
    judge_batch, gate, notes = _judge_batch(request, config, gate, adaptive=asked == "auto")
    agents = choose_agents(site, request, gate)
    if request.dry_run:  # (max_runs: what `undecided: more`'s looks may add runs up to, said by the estimate)
        more = _looks(request, gate, adaptive=asked == "auto") and request.max_runs > n
        return EvalPlan(SessionPlan(cases, n, skip_judge=skip_judge, judge_batch=judge_batch,
                                    adaptive=asked == "auto", agents=agents,
                                    max_runs=request.max_runs if more else None), site, shard, notes=notes,
                        online_why=online_only(request, gate, adaptive=asked == "auto"))
    baseline = None
    if request.against is not None:  # history's comparison loads only when asked for (not with --dry-run)
        from scarbook.session.against import resolve_against

        baseline = resolve_against(site, request.against, cases, skip_judge)
    plan = SessionPlan(cases, n, label=request.label, concurrency=request.concurrency,
                       keep_all=request.keep_all or None, skip_judge=skip_judge, judge_skipped_why=why,
                       key_hint=TUI_HINT if request.skip_judge_without_key else SKIP_HINT,
                       judge_env=request.judge_env,
                       judge_cache=request.judge_cache, judge_batch=judge_batch, timeout_s=request.timeout_s,
                       max_cost=request.max_cost, adaptive=asked == "auto", shard=shard,
                       retry_infra=request.retry_infra, gate=gate,
                       max_runs=n if request.fixed_runs else max(n, request.max_runs),
                       rerun_of=rerun.link() if rerun else None, against=_against_ref(request.against, baseline),
                       reports=dict(request.reports), record=record_option(config, request), agents=agents)
    return EvalPlan(plan, site, shard, baseline, notes)


def session_site(request: EvalRequest) -> SessionSite:
    """The request's site with this session's overrides (--isolation) made into a new config."""
    site = request.site
    if request.isolation is None:
        return site
    return replace(site, config=site.config.with_overrides(isolation=Isolation(request.isolation)))


def choose_agents(site: SessionSite, request: EvalRequest, gate: GatePolicy) -> list[NamedAgent]:
    """--agents' names (or the TUI's one pick) as scarbook.yaml's named agents, checked: two or more, each
    known and named once, the gate's baseline first; what cannot go with them is refused (exit 2)."""
    if request.agent is not None and request.agents:
        raise ScarbookError("give --agents or one agent, not both")
    names = (request.agent,) if request.agent is not None else request.agents
    if not names:
        return []
    named = site.config.agents  # resolved at load
    where = known(list(named))
    if not named:
        raise ScarbookError("--agents names agents of scarbook.yaml's agents:, and it has none — write e.g. "
                            "agents: {baseline: {type: demo}, candidate: {base: baseline, env: {PROMPT_VERSION: v2}}}")
    unknown = [n for n in names if n not in named]
    if unknown:
        raise ScarbookError(f"--agents names {', '.join(map(repr, unknown))}, "
                            f"{'which is not an agent' if len(unknown) == 1 else 'which are not agents'} of "
                            f"scarbook.yaml — {where}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScarbookError(f"--agents names {', '.join(map(repr, twice))} twice — each agent runs once a block; {where}")
    if request.agent is None and len(names) < 2:
        raise ScarbookError(f"--agents compares two or more agents (the first is the baseline), got only {names[0]!r} "
                            f"— name another; {where}")
    compare = gate.compare
    if len(names) > 1 and compare is not None and compare.baseline != names[0]:
        raise ScarbookError(f"gate.compare.baseline is {compare.baseline!r}, but --agents puts {names[0]!r} first "
                            f"(the first is the baseline) — put {compare.baseline} first"
                            + ("" if compare.baseline in names else ", or change gate.compare.baseline"))
    if len(names) > 1:
        _refuse_with_agents(request)
    return [named[n] for n in names]


BATCH_WITH_AUTO = ("--judge-batch cannot be combined with --runs auto: its rule decides each case from verdicts as "
                   "the runs end, and a batch gives them only after every run (each judged case would run to "
                   "--max-runs and end undecided) — judge online, or give a fixed --runs N")
BATCH_WITH_MORE = ("--judge-batch cannot be combined with --undecided more: its looks decide each case from verdicts "
                   "as the runs end, and a batch gives them only after every run (each judged case would run to "
                   "--max-runs) — judge online, or give --undecided pass or fail")
MORE_SET_ASIDE = ("scarbook.yaml's gate.undecided: more is set aside for this session: --judge-batch gives verdicts "
                  "only after every run, so its looks would see none — an undecided case passes with a warning "
                  "(give --undecided fail to fail it)")


def _judge_batch(request: EvalRequest, config: Config, gate: GatePolicy, *,
                 adaptive: bool) -> tuple[bool, GatePolicy, list[str]]:
    """Whether the judge's requests go in one Message Batch after the runs, the gate to run with, and the notes
    saying what was set aside. Not where verdicts decide as runs end — --runs auto's rule, `undecided: more`'s
    looks, a comparison of several agents: both given on the command line are refused (exit 2); otherwise the
    command line wins over scarbook.yaml, and when both come from scarbook.yaml the rule or the looks win."""
    looks = _looks(request, gate, adaptive=adaptive)
    if request.judge_batch:
        if adaptive:
            raise ScarbookError(BATCH_WITH_AUTO)
        if looks and request.undecided is not None:
            raise ScarbookError(BATCH_WITH_MORE)
        if looks:
            return True, msgspec.structs.replace(gate, undecided=Undecided.PASS), [MORE_SET_ASIDE]
        return not request.fixed_runs, gate, []
    if request.fixed_runs or not config.judge.batch:
        return False, gate, []
    why = online_only(request, gate, adaptive=adaptive)
    if not why:
        return True, gate, []
    return False, gate, [f"scarbook.yaml's judge.batch: true is set aside for this session: {why} — the judge grades "
                         "online"]


def online_only(request: EvalRequest, gate: GatePolicy, *, adaptive: bool) -> str:
    """Why this session judges online whatever is asked — verdicts decide or are shown as the runs end, a comparison
    of several agents: every reason that applies — or "" when --judge-batch would send its judge's requests as a
    batch (what the dry run suggests). eval's note, its dry run and the TUI's launch all say this."""
    looks = _looks(request, gate, adaptive=adaptive)
    whose = ("--runs auto's rule decides" if adaptive else
             "--undecided more's looks decide" if looks and request.undecided is not None else
             "gate.undecided: more's looks decide" if looks else "")
    as_runs_end = [f"{whose} each case from verdicts as the runs end"] if whose else []
    if request.watched:
        as_runs_end.append("the TUI's live screen shows each run's verdict as it ends")
    reasons = [f"{' and '.join(as_runs_end)}, and a batch gives them only after every run"] if as_runs_end else []
    if len(request.agents) > 1:
        reasons.append("a session of several agents is a comparison, decided when its verdicts are in")
    return "; ".join(reasons)


def _looks(request: EvalRequest, gate: GatePolicy, *, adaptive: bool) -> bool:
    """`undecided: more`'s looks add runs to this session (not under --runs auto's rule, nor fixed runs)."""
    return gate.undecided == Undecided.MORE and not adaptive and not request.fixed_runs


def _refuse_with_agents(request: EvalRequest) -> None:
    """What a session of several agents cannot do yet, said before any run."""
    for given, option, why in (
            (request.against, "--against", "it compares one agent's session with another session; --agents compares "
                                            "the agents within this session"),
            (request.rerun, "--rerun", "it re-runs a session of one agent"),
            (request.replay, "--replay", "a recorded session's calls are one agent's"),
            (request.judge_batch or None, "--judge-batch", "a comparison is decided when its verdicts are in; judge "
                                                           "it online")):
        if given:
            raise ScarbookError(f"--agents cannot be combined with {option}: {why}")


def judge_key_in(judge: JudgeSettings, env: Mapping[str, str] | None) -> bool:
    """`env` (None: this process's) holds the judge's API key."""
    from scarbook.proc.credentials import environ

    return bool((environ() if env is None else env).get(judge.api_key_env, "").strip())


def judge_key_missing(judge: JudgeSettings, cases: list[Case], env: Mapping[str, str] | None) -> bool:
    """Some case has llm_judge checks and `env` (None: this process's) has no judge API key."""
    return any(c.judge_checks for c in cases) and not judge_key_in(judge, env)


def case_id_of_arg(folders: ProjectFolders, arg: str) -> str:
    """A case named on the command line: its id, or its folder (`cases/write-one-line`, as a shell completes
    it), which names the same case when it lies directly in the project's cases folder."""
    if "/" not in arg and "\\" not in arg:
        return arg
    folder = Path(arg.rstrip("/\\"))
    folder = folder if folder.is_absolute() else Path.cwd() / folder
    try:
        if folder.resolve().parent == folders.cases_dir.resolve():
            return folder.name
    except OSError:
        pass
    raise ScarbookError(f"{arg} is not a case folder of this project — name a case by its id, or a folder directly "
                        f"in {folders.cases_dir}")


def refuse_unknown_cases(folders: ProjectFolders, found: CaseSet, names: tuple[str, ...] | list[str]) -> None:
    """Raise (exit 2) when a case named is not in the collection; a case whose case.yaml is invalid
    says so (its problem is the face's to show, before this)."""
    by_id = found.by_id()
    unknown = [n for n in names if n not in by_id]
    if unknown:
        raise no_such_cases(folders.cases_dir, unknown, invalid={p.path.parent.name for p in found.problems})


def case_ids_of_args(folders: ProjectFolders, args: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Cases named on the command line (ids or folders), as ids: every command that takes a CASE reads
    them through this, so a path works (or is refused with the same words) everywhere."""
    return tuple(case_id_of_arg(folders, a) for a in args)


def check_label(label: str, site: SessionSite | None = None, own_id: str | None = None) -> None:
    """A label is a name to pick the session by (`report X`, `diff X Y`): not a word that picks a session by
    its place, not the id of a session `site`'s history holds (an id is matched before any label, so that
    session would be picked instead), and short enough to show. `own_id`: this session's own (a shard's
    --session-id), which it may carry as its label."""
    word = label.strip()
    if word in SELECTORS:
        raise ScarbookError(f"label {word!r} is a word scarbook reads as a session (latest: the newest, previous: "
                            f"the one before), so the session could not be picked by it — choose another label, "
                            f"e.g. {word}-run")
    if any(unicodedata.category(c) == "Cc" for c in word):  # `--label "$(git log -1 --format=%B)"`: its body too
        raise ScarbookError(f"label {word[:40]!r} holds a control character (a newline, a tab) — a label is one line "
                            "to pick the session by: choose one, e.g. prompt-v2")
    if len(word) > MAX_LABEL_CHARS:
        raise ScarbookError(f"label {word[:24]!r}… is {len(word):,} characters long; at most {MAX_LABEL_CHARS} (a "
                            "name to pick the session by, e.g. prompt-v2) — choose a shorter label")
    if site is not None and word and word != own_id and word in recorded_session_ids(site.workspaces_dir):
        raise ScarbookError(f"label {word!r} is the id of a session already recorded, so `scarbook report {word}` "
                            "would pick that session, not this one — choose another label")


def recorded_session_ids(workspaces_dir: Path) -> set[str]:
    """The names of the session folders in workspaces/history, as History.session_dirs lists them (read here
    without loading the history wing: a dry run checks its label too)."""
    try:
        with os.scandir(workspaces_dir / "history") as it:
            return {e.name for e in it if not e.name.startswith(".") and not e.name.endswith(".damaged")
                    and e.is_dir()}
    except OSError:  # no history yet (or none readable: the session's own start says why)
        return set()


def select_cases(folders: ProjectFolders, found: CaseSet, names: tuple[str, ...], tags: tuple[str, ...],
                 command: str = "eval") -> list[Case]:
    """The cases named (ids or folders; default: all), then those with a tag; `found` is the collection
    as read (its problems already shown by the face). `command` is the one the hint names."""
    names = case_ids_of_args(folders, names)
    refuse_unknown_cases(folders, found, names)
    if found.problems and not names:
        # A gate that skips a broken case would go green without it: nothing runs (docs/ci.md, exit 2).
        raise ScarbookError(f"{plural(len(found.problems), 'invalid case')} in {folders.cases_dir} (see above) — "
                            f"fix it, or name the cases to run: scarbook {command} CASE...")
    by_id = found.by_id()
    cases = [by_id[n] for n in names] if names else list(found.cases)
    if tags:
        cases = [c for c in cases if set(tags) & set(c.tags)]
    if not cases:
        raise ScarbookError(no_cases_said(folders.cases_dir, tags).replace("no cases", "no cases to run", 1))
    return cases


def resolve_runs(config: Config, runs: str | None, preset: str | None) -> int | Literal["auto"]:
    if runs and preset:
        raise ScarbookError("give --runs or --preset, not both")
    if preset is not None:  # (--preset '' is a preset named '': refused, never scarbook.yaml's runs unsaid)
        presets = config.presets
        if preset not in presets:
            raise ScarbookError(f"no preset {preset!r} — scarbook.yaml defines: {', '.join(presets)}")
        return presets[preset]
    if runs is None:
        return config.runs
    if runs == "auto":
        return "auto"
    if not (runs.isascii() and runs.isdigit()) or int(runs) < 1:  # ('²' is a digit to isdigit, not to int: a traceback)
        raise ScarbookError(f"--runs must be a whole number of runs, 1 or more, or 'auto', got {runs!r}")
    return int(runs)


def gate_policy(config: Config, request: EvalRequest, *, sharded: bool = False) -> GatePolicy:
    """scarbook.yaml's gate with the command line's flags over it."""
    gate = config.gate
    gate = msgspec.structs.replace(
        gate, mode=gate.mode if request.gate_mode is None else GateMode(request.gate_mode),
        alpha=gate.alpha if request.alpha is None else request.alpha,
        undecided=gate.undecided if request.undecided is None else Undecided(request.undecided),
        min_verdicts=gate.min_verdicts if request.min_verdicts is None else request.min_verdicts)
    if gate.undecided == Undecided.MORE and sharded:
        raise ScarbookError("--undecided more adds runs as the evidence comes in: it cannot run as a shard "
                            "(use --undecided pass or fail with --shard)")
    return gate


def record_option(config: Config, request: EvalRequest) -> RecordSettings | None:
    """--record / --replay SESSION [--fork-at K] over scarbook.yaml's record: (its upstreams kept)."""
    if request.fork_at is not None and request.replay is None:
        raise ScarbookError("--fork-at K goes with --replay SESSION: it replays the first K calls of each run")
    if not request.record and request.replay is None:
        return None
    base = config.record or RecordSettings()
    if request.replay is None:
        return msgspec.structs.replace(base, mode="record", source=None, fork_at=None)
    return msgspec.structs.replace(base, mode="replay", source=request.replay, fork_at=request.fork_at)


def _pick_rerun(site: SessionSite, request: EvalRequest) -> RerunPick | None:
    """--rerun SESSION --only ...: the source's cases to run again (tools/rerun.py), or None without --rerun."""
    if request.rerun is None:
        if request.only != DEFAULT_ONLY:
            raise ScarbookError("--only chooses which runs of --rerun's session pick their case: give --rerun SESSION")
        return None
    if request.case_ids or request.tags:
        raise ScarbookError("--rerun picks the cases itself (those of the session with a matching run): "
                            "give no CASE names or --tag")
    return pick_rerun(site.history, request.rerun, request.only)


def _against_ref(ref: str | None, baseline: Baseline | None) -> str:
    """What `scarbook resume` compares a judged batch session with: the baseline file, or the session
    --against named (by id: `previous` means another session by then)."""
    if baseline is None:
        return ""
    return "baseline" if ref == "baseline" else baseline.session_id
