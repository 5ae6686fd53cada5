"""scarbook.yaml: the agent under test, defaults, bands, run presets and the judge."""

# No `from __future__ import annotations` here: msgspec reads these Structs' field types the first time
# scarbook.yaml is converted, and a string annotation is compiled and evaluated there, each (issue 38).

import json
import os
import string
from pathlib import Path
from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import Meta

from scarbook.agents.named import NamedAgent, check_agents, known
from scarbook.agents.spec import agent_settings
from scarbook.checks.patterns import syntax_error
from scarbook.checks.spec import MAX_READ
from scarbook.errors import ConfigError
from scarbook.fs.settings import Problem, Words, check_fields, convert, keys_of
from scarbook.fs.yamlio import line_of, load_yaml_file
from scarbook.judge.settings import JudgeSettings
from scarbook.models import CauseKind, ExecutorType, GateMode, Isolation, Keep, Undecided
from scarbook.record.settings import RecordSettings

CONFIG_FILE = "scarbook.yaml"
BASELINE_FILE = "scarbook-baseline.json"  # the blessed session (history/baseline.py), committed beside it



# The `executor:` section of scarbook.yaml: where runs execute (this machine, or a Ray cluster).
#
#     executor: {type: local}                                   # the default: an asyncio pool here
#     executor: {type: ray, address: auto, num_cpus: 1, resources: {gpu_box: 1}}

DEFAULT_WORKSPACE_BYTES = 16 << 20


class ExecutorSettings(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True):
    NAME: ClassVar[str] = "executor"
    UNKNOWN: ClassVar[str] = "unknown key executor.{key} for a {kind} executor"
    TAKES: ClassVar[str] = "{a_kind} executor takes: {keys}"

    type: Annotated[ExecutorType, Meta(extra={"fix": "write executor: {type: ray, address: auto}"})] = ExecutorType.LOCAL
    # as ray.init takes it: "auto" (a running cluster), "ray://host:10001" (Ray Client), or None to
    # start a Ray instance on this machine for the session
    address: Annotated[str | None, Meta(extra={
        "must": "must be a Ray address, got {value!r}",
        "fix": "write address: auto (a running cluster) or ray://head-host:10001; leave it out to start Ray on this machine"})] = None
    num_cpus: Annotated[float, Meta(ge=0, extra={"must": "must be a number of at least 0, got {value!r}",
                                                 "fix": "write num_cpus: 1"})] = 1.0  # Ray CPUs one run holds
    # custom Ray resources one run holds
    resources: Annotated[dict[str, Annotated[float, Meta(ge=0)]], Meta(extra={
        "must": "must map a Ray resource name to an amount", "fix": "write resources: {docker: 1}"})] = {}
    # passed to ray.init (e.g. pip packages the agent needs)
    runtime_env: Annotated[dict[str, Any] | None, Meta(extra={
        "must": "must be a mapping (Ray's runtime_env)", "fix": "write runtime_env: {pip: [requests]}"})] = None
    # compressed; what a failed run brings back
    max_workspace_bytes: Annotated[int, Meta(ge=0, extra={"must": "must be a whole number of bytes, got {value!r}",
                                                          "fix": "write max_workspace_bytes: {default}"})] = DEFAULT_WORKSPACE_BYTES

    def __post_init__(self) -> None:
        if self.address is not None:
            if not self.address.strip():
                raise Problem("address", f"executor.address must be a Ray address, got {self.address!r}",
                              fix="write address: auto (a running cluster) or ray://head-host:10001; leave it out to "
                                  "start Ray on this machine")
            msgspec.structs.force_setattr(self, "address", self.address.strip())
        if self.type == ExecutorType.LOCAL:  # the Ray keys mean nothing to a local executor
            for f in msgspec.structs.fields(self):
                default = f.default if f.default_factory is msgspec.NODEFAULT else f.default_factory()
                if f.name != "type" and getattr(self, f.name) != default:
                    raise Problem(f.name, f"unknown key executor.{f.name} for a local executor",
                                  fix="a local executor takes: type")


class CompareGate(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True):
    """`gate: {compare: {baseline: NAME, margin: 0.05}}`: a session of several agents (`eval --agents`) is
    red when a candidate is shown worse than the baseline by more than the margin (stats/head_to_head.py)."""

    NAME: ClassVar[str] = "gate.compare"
    NOT_MAPPING_FIX: ClassVar[str] = "write compare: {baseline: baseline, margin: 0.05}"

    baseline: Annotated[str, Meta(min_length=1, extra={"must": "must name an agent of agents:, got {value!r}",
                                                      "fix": "write compare: {baseline: baseline, margin: 0.05}"})]
    margin: Annotated[float, Meta(gt=0, lt=1, extra={"must": "must be a share between 0 and 1, got {value!r}",
                                                    "fix": "write margin: 0.05 (5 points)"})] = 0.05

    def __post_init__(self) -> None:
        check_fields(self)

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "margin": self.margin}


# The `gate:` section of scarbook.yaml: how pass rates become the exit code (scarbook.stats.decisions).
class GatePolicy(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True):
    """scarbook.yaml's `gate:` section (and `scarbook eval --gate/--alpha/--undecided/--min-verdicts`)."""

    NAME: ClassVar[str] = "gate"
    NOT_MAPPING_FIX: ClassVar[str] = "write gate: {mode: evidence, alpha: 0.05, undecided: pass}"

    mode: Annotated[GateMode, Meta(extra={"fix": "write mode: evidence (or point, the rate >= threshold rule)"})] = \
        GateMode.EVIDENCE
    alpha: Annotated[float, Meta(gt=0, lt=0.5, extra={"must": "must be between 0 and 0.5, got {value!r}",
                                                      "fix": "write alpha: 0.05"})] = 0.05
    undecided: Annotated[Undecided, Meta(extra={
        "fix": "write undecided: pass (or fail for a release gate, more to add runs)"})] = Undecided.PASS
    # None: half the case's runs, and at least 3
    min_verdicts: Annotated[Annotated[int, Meta(ge=1)] | None, Meta(extra={
        "must": "must be a whole number of at least 1, got {value!r}",
        "fix": "write min_verdicts: 3, or leave it out (half the runs, at least 3)"})] = None
    # a session of several agents: the baseline and the margin of its non-inferiority gate (None: the first
    # agent --agents names, and 5 points)
    compare: CompareGate | None = None

    def __post_init__(self) -> None:
        check_fields(self)  # built in code (a test, a session's record): the same checks as scarbook.yaml's

    def to_dict(self) -> dict[str, Any]:
        out = {"mode": str(self.mode), "alpha": self.alpha, "undecided": str(self.undecided),
               "min_verdicts": self.min_verdicts}
        if self.compare is not None:
            out["compare"] = self.compare.to_dict()
        return out

    @classmethod
    def from_record(cls, raw: dict[str, Any]) -> "GatePolicy":
        """The policy a session recorded (session.json's gate: these keys, its looks beside them)."""
        fields = {k: raw[k] for k in keys_of(cls) if k in raw}
        if isinstance(fields.get("compare"), dict):
            fields["compare"] = CompareGate(**fields["compare"])
        return cls(**fields)


def _number(*, integer: bool = False, lo: float, hi: float | None = None) -> Meta:
    """A top-level number's bounds and words: 'runs must be an integer of at least 1, got 0 — write e.g. runs: 5'."""
    rng = f" between {lo:g} and {hi:g}" if hi is not None else f" of at least {lo:g}"
    return Meta(ge=lo, le=hi, extra={"must": f"must be {'an integer' if integer else 'a number'}{rng}, got {{value!r}}",
                                     # an integer written whole: 2e+07 is a string to YAML, which this would then refuse
                                     "fix": "write e.g. {key}: {default}" if integer else "write e.g. {key}: {default:g}"})


def _folder(default: str) -> Meta:
    return Meta(min_length=1, extra={"must": "must be a path", "fix": "write {key}: {default}"})


class Bands(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True):
    NAME: ClassVar[str] = "bands"
    UNKNOWN: ClassVar[str] = "bands takes green: <number between 0 and 1>"
    TAKES: ClassVar[str] = "write bands: {{green: 0.9}}"
    NOT_MAPPING: ClassVar[str] = "bands takes green: <number between 0 and 1>"
    NOT_MAPPING_FIX: ClassVar[str] = "write bands: {green: 0.9}"

    green: Annotated[float, Meta(ge=0, le=1, extra={"must": "must be a number between 0 and 1, got {value!r}",
                                                    "fix": "write bands: {green: 0.9}"})] = 0.9


CAUSE_KINDS_YAML = (CauseKind.INFRA, CauseKind.JUDGE, CauseKind.CASE, CauseKind.AGENT)  # the order messages list them in


class Config(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """scarbook.yaml, declared: every key, its default and its bounds (STARTER_CONFIG shows these
    defaults). Immutable once loaded: a session's override is a new value (`with_overrides`)."""

    UNKNOWN: ClassVar[str] = "unknown key {key!r}"
    TAKES: ClassVar[str] = "scarbook.yaml takes: {keys}"
    NOT_MAPPING: ClassVar[str] = "scarbook.yaml must be a mapping of keys"
    NOT_MAPPING_FIX: ClassVar[str] = "see `scarbook init` for a starter file"

    agent: dict[str, Any] = msgspec.field(default_factory=lambda: {"type": "demo"})  # as written; checked against its type's row (agents/spec.py)
    # named agents for `eval --agents` (agents/named.py): resolved once at load, their overlays applied and
    # each checked with its line, so a session takes them as they are
    agents: dict[str, NamedAgent] = {}
    # 20: a case at 100% can be called above an 80% threshold (it takes 14 straight passes; stats/plans.py)
    runs: Annotated[int, _number(integer=True, lo=1)] = 20
    concurrency: Annotated[int, _number(integer=True, lo=1)] = 4
    timeout_s: Annotated[float, _number(lo=0.001)] = 120.0
    threshold: Annotated[float, _number(lo=0, hi=1)] = 0.8
    bands: Bands = Bands()
    presets: Annotated[dict[str, Annotated[int, Meta(gt=0)]], Meta(extra={
        "must": "must map a name to a positive number of runs", "fix": "write presets: {daily: 15, release: 40}"})] = \
        msgspec.field(default_factory=lambda: {"daily": 15, "prompt-change": 20, "release": 40})
    judge: JudgeSettings = msgspec.field(default_factory=JudgeSettings)
    stale_after_days: Annotated[float, _number(lo=0)] = 7.0
    keep: Annotated[Keep, Meta(extra={"must": "must be 'failed' or 'all', got {value!r}", "fix": "write keep: failed"})] = \
        Keep.FAILED
    cases_dir: Annotated[str, _folder("cases")] = "cases"
    workspaces_dir: Annotated[str, _folder("workspaces")] = "workspaces"
    # auto: the sandbox where it starts (scarbook.run.session.choose_isolation)
    isolation: Annotated[Isolation, Meta(extra={"must": "must be 'none', 'sandbox', 'slot' or 'auto', got {value!r}",
                                                "fix": "write isolation: auto"})] = Isolation.AUTO
    # the sandbox's network; no effect with isolation: none
    network: Annotated[bool, Meta(extra={"must": "must be true or false, got {value!r}", "fix": "write network: true"})] = False
    executor: ExecutorSettings = ExecutorSettings()
    # bytes of one workspace file a rule check reads at most (contains, regex, line_count, json_valid):
    # a bigger file fails that check unread, never a verdict on the part read (nor an error: the agent made it)
    max_read_bytes: Annotated[int, _number(integer=True, lo=1)] = MAX_READ
    # a run the machine failed (cause infra) runs again at most this many times
    retry_infra: Annotated[int, _number(integer=True, lo=0)] = 1
    # extra stderr/transcript patterns per cause (run/cause_patterns.py), checked with their lines by parse_causes
    causes: dict[str, list[str]] = {}
    gate: GatePolicy = GatePolicy()
    record: RecordSettings | None = None  # record: (scarbook.record): None records nothing

    def __post_init__(self) -> None:
        for key in ("cases_dir", "workspaces_dir"):
            if not getattr(self, key).strip():
                raise Problem(key, f"{key} must be a path", fix=f"write {key}: {key[:-4]}")
        compare = self.gate.compare
        if compare is not None and compare.baseline not in self.agents:
            raise Problem("gate", f"gate.compare.baseline names {compare.baseline!r}, which is not an agent here",
                          fix=known(list(self.agents)))

    @property
    def green(self) -> float:
        return self.bands.green

    @property
    def judge_model(self) -> str:
        return self.judge.model

    @property
    def cause_patterns(self) -> tuple[tuple[str, str], ...]:
        """causes: as (kind, regex) pairs in the file's order (run/cause_patterns.py tries them first)."""
        return tuple((kind, p) for kind, patterns in self.causes.items() for p in patterns)

    def with_overrides(self, **changes: Any) -> "Config":
        """This config with a session's overrides (--isolation, the TUI's demo seed): a new value."""
        return msgspec.structs.replace(self, **changes)

    def fingerprint(self, agent: Any = None) -> str:
        """What makes two sessions comparable: the agent (`agent`: the named agents a session ran instead
        of agent:) and the judge."""
        import hashlib  # (OpenSSL's library, ~2-10 ms: loaded when something is hashed, not to read a project)

        blob = json.dumps({"agent": self.agent if agent is None else agent, "judge": self.judge_model,
                           "judge_prompt": self.judge.prompt_digest}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


_STARTER = string.Template("""\
# scarbook.yaml — how scarbook runs your scar collection (cases/).
# Every key is optional; the values shown are the defaults unless marked otherwise.

# The agent under test. One of:
#   {type: demo}                                  offline stochastic demo agent (no API key)
#   {type: command, argv: [python, agent.py, "{task}"]}
#       cwd = the run's fresh workspace; "{task}" is replaced by the task, or set stdin: true
#       env: [PATH, HOME, ANTHROPIC_API_KEY]      variables passed through (plus SCARBOOK_*)
#   {type: python, function: my_agent.main:run}   run(task, cwd) -> final output; sync or async
#   {type: claude-code, args: [--model, claude-sonnet-4-5, --allowedTools, "Read Write Edit"]}
#   {type: codex, args: [--full-auto]}            the CLIs, headless; transcript and usage kept per run
agent:
  type: $agent_type

runs: $runs                 # runs per case when --runs is not given
concurrency: $concurrency          # runs at once
timeout_s: $timeout_s          # per run; the agent's whole process group is killed after it
threshold: $threshold          # a case passes the gate when its pass rate is at least this
bands:
  green: $green            # rate >= green is green; >= threshold is yellow; below is red
presets:                # scarbook eval --preset release
$presets
stale_after_days: $stale_after_days     # the library marks results older than this as stale
keep: $keep            # keep workspaces of failed/errored runs; "all" keeps every run
retry_infra: $retry_infra          # a run the machine failed (rate limit, 5xx, OOM, killed) runs again at most this often
# causes: {infra: ['quota exceeded']}   # extra stderr/transcript patterns per cause: infra, judge, case, agent
isolation: $isolation         # agents and command checks in a bubblewrap sandbox where it starts (Linux), else unconfined
                        # and said; "sandbox": refuse to run without it; "none": unconfined (README: Threat model);
                        # "slot" (opt-in): the sandbox with one bwrap per concurrency slot, not per run (faster; README
                        # says what differs)
network: $network          # in the sandbox, let the agent reach the network (claude-code / codex need it for their API)
# executor: {type: ray, address: auto}   # run on a Ray cluster (pip install 'scarbook[ray]')
# record: true          # record every model call into the run's transcript (agents get base URLs and a dummy key)

# How pass rates become the gate (docs/statistics.md). evidence: a case is red only when its runs
# show it is below its threshold (family-wise false red <= alpha); point: red when rate < threshold.
# undecided: pass (warn), fail (release gates: exit 3), more (add runs, up to --max-runs).
gate:
  mode: $gate_mode
  alpha: $gate_alpha
  undecided: $gate_undecided

# The LLM judge for llm_judge checks (any Anthropic-compatible Messages API).
judge:
  model: $judge_model
  # base_url: https://api.anthropic.com
  api_key_env: $judge_api_key_env
  temperature: $judge_temperature
  samples: $judge_samples            # odd; each rubric item's verdict is the majority of this many calls
""")


def _starter(cfg: Config) -> str:
    """`scarbook init`'s scarbook.yaml: every value shown is the declaration's default."""
    def g(x: float) -> str:
        return f"{x:g}"

    return _STARTER.substitute(
        agent_type=cfg.agent["type"], runs=cfg.runs, concurrency=cfg.concurrency, timeout_s=g(cfg.timeout_s),
        threshold=g(cfg.threshold), green=g(cfg.green), presets="\n".join(f"  {k}: {n}" for k, n in cfg.presets.items()),
        stale_after_days=g(cfg.stale_after_days), keep=cfg.keep, retry_infra=cfg.retry_infra, isolation=cfg.isolation,
        network=str(cfg.network).lower(), gate_mode=cfg.gate.mode, gate_alpha=g(cfg.gate.alpha),
        gate_undecided=cfg.gate.undecided, judge_model=cfg.judge.model, judge_api_key_env=cfg.judge.api_key_env,
        judge_temperature=g(cfg.judge.temperature or 0), judge_samples=cfg.judge.samples)



def parse_causes(raw: Any, path: Path, line: int | None) -> dict[str, list[str]]:
    """`causes: {infra: [regex, ...], case: [...]}`: each regex compiled here, so a bad one is said
    with its line before anything runs (its lines are YAML's: read before the declaration converts)."""
    fix = "write causes: {infra: ['quota exceeded', '^ECONNRESET']}"
    if not isinstance(raw, dict):
        raise ConfigError(path, "causes must map a cause (infra, judge, case, agent) to a list of regular expressions",
                          line=line_of(raw) or line, fix=fix)
    out: dict[str, list[str]] = {}
    for kind, patterns in raw.items():
        if kind not in CAUSE_KINDS_YAML:
            raise ConfigError(path, f"unknown cause {kind!r} under causes", line=line_of(raw, kind) or line,
                              fix=f"causes takes: {', '.join(CAUSE_KINDS_YAML)}")
        if isinstance(patterns, str):
            patterns = [patterns]
        if not isinstance(patterns, list):
            raise ConfigError(path, f"causes.{kind} must be a list of regular expressions",
                              line=line_of(raw, kind) or line, fix=fix)
        for i, pattern in enumerate(patterns):
            where = line_of(patterns, i) or line_of(raw, kind) or line
            if not isinstance(pattern, str) or not pattern:
                raise ConfigError(path, f"causes.{kind}[{i}] must be a regular expression (text), got {pattern!r}",
                                  line=where, fix=fix)
            if (why := syntax_error(pattern, 0)) is not None:
                raise ConfigError(path, f"causes.{kind}[{i}] {pattern!r} is not a valid regular expression: {why}",
                                  line=where, fix="escape the special characters (\\( \\[ \\.) or quote the pattern")
        out[kind] = list(patterns)
    return out


def load_config(path: Path | None) -> Config:
    """Read scarbook.yaml; a missing file means all defaults."""
    if path is None or not os.path.lexists(path):  # (what stands there that is not a file is named by the read)
        return Config()
    data = load_yaml_file(path)
    data = {} if data is None else data
    if isinstance(data, dict):
        data = _shorthands(data, path)
    cfg = convert(data, Config, path)
    for key in ("cases_dir", "workspaces_dir"):
        where = path.parent / getattr(cfg, key)
        if where.exists() and not where.is_dir():
            if isinstance(data, dict) and key in data:
                raise ConfigError(path, f"{key} names {where}, which is a file, not a folder", line=line_of(data, key),
                                  fix=f"point {key} at a folder, or move that file aside")
            # (not in the file: no line of it to point at)
            raise ConfigError(path, f"{key} (by default {getattr(cfg, key)}) names {where}, which is a file, not a "
                              "folder", fix=f"move that file aside, or set {key} in scarbook.yaml to a folder")
    return cfg


def _shorthands(data: dict, path: Path) -> dict:
    """The short forms scarbook.yaml takes, written out (agent: demo, executor: ray, record: true), and the
    agent checked against its type's row (agents/spec.py: agent_settings); the rest is the declaration's to read."""
    out = type(data)(data)
    if hasattr(data, "lines"):
        out.lines = data.lines  # type: ignore[attr-defined]
        out.line = getattr(data, "line", None)  # type: ignore[attr-defined]
    if "agent" in data:
        out["agent"] = agent_settings(data["agent"], path, line_of(data, "agent"))
    if "causes" in data:
        out["causes"] = parse_causes(data["causes"], path, line_of(data, "causes"))
    if "agents" in data:
        out["agents"] = check_agents(data["agents"], path, line_of(data, "agents"))
    if isinstance(data.get("executor"), str):
        out["executor"] = {"type": data["executor"]}
    if "record" in data:
        record = data["record"]
        if record is None or record is False:
            del out["record"]
        elif record is True:
            out["record"] = {}
    return out


STARTER_CONFIG = _starter(Config())


OWN_FILE_EXAMPLES = {"--json": "report.json", "--junit": "report.xml", "--html": "report.html", "--export": "labels.csv",
                     "-o": "."}


class ConfigFolders:
    """The folders scarbook.yaml names, as paths under the project's `root`: for Project and for the run
    layer's SessionSite, which each hold a root and a config."""

    root: Path
    config: Config

    @property
    def cases_dir(self) -> Path:
        return self.root / self.config.cases_dir

    @property
    def workspaces_dir(self) -> Path:
        return self.root / self.config.workspaces_dir

    def own_file_refusal(self, option: str, path: str | Path) -> str | None:
        """Why `option path` (a file a command was asked to write: a report, an export) may not be written, when
        it would replace scarbook.yaml or the baseline or land in the cases or the history; else None. A shell
        completes `--junit scar<Tab>` to scarbook.yaml as readily as to a report's name."""
        real = Path(os.path.realpath(path))
        why = None
        for file, what in ((CONFIG_FILE, "the project's configuration"), (BASELINE_FILE, "the blessed session")):
            if real == Path(os.path.realpath(self.root / file)):
                why = f"would replace {file}, {what}"
        for folder, what in ((self.cases_dir, "the cases folder"), (self.workspaces_dir / "history", "the run history")):
            top = Path(os.path.realpath(folder))
            if why is None and real.is_relative_to(top):
                why = f"would write into {what} ({top})"
        example = OWN_FILE_EXAMPLES.get(option, "report.json")
        return f"{option} {path} {why} — write it elsewhere, e.g. {option} {example}" if why else None
