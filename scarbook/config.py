"""scarbook.yaml: the agent under test, defaults, bands, run presets and the judge."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.agents.registry import AGENT_KINDS
from scarbook.errors import ConfigError
from scarbook.fs.yamlio import line_of, load_yaml_file
from scarbook.judge.settings import JudgeSettings
from scarbook.models import GateMode, Isolation, Keep, Undecided
from scarbook.record.settings import RecordSettings, parse_record
from scarbook.text import with_article

CONFIG_FILE = "scarbook.yaml"
AGENT_TYPES: tuple[str, ...] = tuple(str(t) for t in AGENT_KINDS)  # from the one table of agent types
AGENT_KEYS: dict[str, tuple[str, ...]] = {str(t): kind.keys for t, kind in AGENT_KINDS.items()}
TOP_KEYS = ("agent", "runs", "concurrency", "timeout_s", "threshold", "bands", "presets", "judge",
            "stale_after_days", "keep", "cases_dir", "workspaces_dir", "isolation", "network",
            "executor", "retry_infra", "causes", "gate", "record")
DEFAULT_PRESETS = {"daily": 5, "prompt-change": 10, "release": 20}

STARTER_CONFIG = """\
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
  type: demo

runs: 5                 # runs per case when --runs is not given
concurrency: 4          # runs at once
timeout_s: 120          # per run; the agent's whole process group is killed after it
threshold: 0.8          # a case passes the gate when its pass rate is at least this
bands:
  green: 0.9            # rate >= green is green; >= threshold is yellow; below is red
presets:                # scarbook eval --preset release
  daily: 5
  prompt-change: 10
  release: 20
stale_after_days: 7     # the library marks results older than this as stale
keep: failed            # keep workspaces of failed/errored runs; "all" keeps every run
retry_infra: 1          # a run the machine failed (rate limit, 5xx, OOM, killed) runs again at most this often
# causes: {infra: ['quota exceeded']}   # extra stderr/transcript patterns per cause: infra, judge, case, agent
isolation: auto         # agents and command checks in a bubblewrap sandbox where it starts (Linux), else unconfined
                        # and said; "sandbox": refuse to run without it; "none": unconfined (README: Threat model)
network: false          # in the sandbox, let the agent reach the network (claude-code / codex need it for their API)
# executor: {type: ray, address: auto}   # run on a Ray cluster (pip install 'scarbook[ray]')
# record: true          # record every model call into the run's transcript (agents get base URLs and a dummy key)

# How pass rates become the gate (docs/statistics.md). evidence: a case is red only when its runs
# show it is below its threshold (family-wise false red <= alpha); point: red when rate < threshold.
# undecided: pass (warn), fail (release gates: exit 3), more (add runs, up to --max-runs).
gate:
  mode: evidence
  alpha: 0.05
  undecided: pass

# The LLM judge for llm_judge checks (any Anthropic-compatible Messages API).
judge:
  model: claude-sonnet-4-6
  # base_url: https://api.anthropic.com
  api_key_env: ANTHROPIC_API_KEY
  temperature: 0
  samples: 1            # odd; each rubric item's verdict is the majority of this many calls
"""


# The `executor:` section of scarbook.yaml: where runs execute (this machine, or a Ray cluster).
#
#     executor: {type: local}                                   # the default: an asyncio pool here
#     executor: {type: ray, address: auto, num_cpus: 1, resources: {gpu_box: 1}}
#
# Every unknown key or wrong type is a ConfigError naming `executor.<key>` and its line.

EXECUTOR_TYPES = ("local", "ray")
RAY_KEYS = ("type", "address", "num_cpus", "resources", "runtime_env", "max_workspace_bytes")
DEFAULT_WORKSPACE_BYTES = 16 << 20


@dataclass(frozen=True)
class ExecutorSettings:
    type: str = "local"
    # as ray.init takes it: "auto" (a running cluster), "ray://host:10001" (Ray Client), or None to
    # start a Ray instance on this machine for the session
    address: str | None = None
    num_cpus: float = 1.0  # Ray CPUs one run holds
    resources: dict[str, float] = field(default_factory=dict)  # custom Ray resources one run holds
    runtime_env: dict[str, Any] | None = None  # passed to ray.init (e.g. pip packages the agent needs)
    max_workspace_bytes: int = DEFAULT_WORKSPACE_BYTES  # compressed; what a failed run brings back

    @classmethod
    def from_dict(cls, raw: Any, path: Path) -> ExecutorSettings:
        if isinstance(raw, str):
            raw = {"type": raw}
        if not isinstance(raw, dict) or raw.get("type", "local") not in EXECUTOR_TYPES:
            got = raw.get("type") if isinstance(raw, dict) else raw
            raise ConfigError(path, f"executor.type must be one of {', '.join(EXECUTOR_TYPES)}, got {got!r}",
                              line=line_of(raw), fix="write executor: {type: ray, address: auto}")
        kind = raw.get("type", "local")
        allowed = RAY_KEYS if kind == "ray" else ("type",)
        for key in raw:
            if key not in allowed:
                raise ConfigError(path, f"unknown key executor.{key} for a {kind} executor",
                                  line=line_of(raw, key), fix=f"{with_article(kind)} executor takes: {', '.join(allowed)}")
        address = raw.get("address")
        if address is not None and not (isinstance(address, str) and address.strip()):
            raise ConfigError(path, f"executor.address must be a Ray address, got {address!r}",
                              line=line_of(raw, "address"),
                              fix="write address: auto (a running cluster) or ray://head-host:10001; leave it "
                                  "out to start Ray on this machine")
        num_cpus = raw.get("num_cpus", 1)
        if isinstance(num_cpus, bool) or not isinstance(num_cpus, (int, float)) or num_cpus < 0:
            raise ConfigError(path, f"executor.num_cpus must be a number of at least 0, got {num_cpus!r}",
                              line=line_of(raw, "num_cpus"), fix="write num_cpus: 1")
        resources = raw.get("resources") or {}
        if not isinstance(resources, dict) or not all(
                isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                for k, v in resources.items()):
            raise ConfigError(path, "executor.resources must map a Ray resource name to an amount",
                              line=line_of(raw, "resources"), fix="write resources: {docker: 1}")
        runtime_env = raw.get("runtime_env")
        if runtime_env is not None and not isinstance(runtime_env, dict):
            raise ConfigError(path, "executor.runtime_env must be a mapping (Ray's runtime_env)",
                              line=line_of(raw, "runtime_env"), fix="write runtime_env: {pip: [requests]}")
        cap = raw.get("max_workspace_bytes", DEFAULT_WORKSPACE_BYTES)
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
            raise ConfigError(path, f"executor.max_workspace_bytes must be a whole number of bytes, got {cap!r}",
                              line=line_of(raw, "max_workspace_bytes"),
                              fix=f"write max_workspace_bytes: {DEFAULT_WORKSPACE_BYTES}")
        return cls(kind, address.strip() if address else None, float(num_cpus),
                   {k: float(v) for k, v in resources.items()}, runtime_env, cap)


# The `gate:` section of scarbook.yaml: how pass rates become the exit code (scarbook.stats.decisions).
GATE_MODES = tuple(GateMode)
UNDECIDED_POLICIES = tuple(Undecided)
GATE_KEYS = ("mode", "alpha", "undecided", "min_verdicts")


@dataclass(frozen=True)
class GatePolicy:
    """scarbook.yaml's `gate:` section (and `scarbook eval --gate/--alpha/--undecided/--min-verdicts`)."""

    mode: str = "evidence"  # "evidence" | "point"
    alpha: float = 0.05
    undecided: str = "pass"  # "fail" | "pass" | "more"
    min_verdicts: int | None = None  # None: half the case's runs, and at least 3

    def __post_init__(self) -> None:
        if self.mode not in GATE_MODES:
            raise ValueError(f"gate mode must be one of {', '.join(GATE_MODES)}, got {self.mode!r}")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 0.5:
            raise ValueError(f"gate alpha must be between 0 and 0.5, got {self.alpha!r}")
        if self.undecided not in UNDECIDED_POLICIES:
            raise ValueError(f"gate undecided must be one of {', '.join(UNDECIDED_POLICIES)}, got {self.undecided!r}")
        if self.min_verdicts is not None and (isinstance(self.min_verdicts, bool) or not isinstance(
                self.min_verdicts, int) or self.min_verdicts < 1):
            raise ValueError(f"gate min_verdicts must be a whole number of at least 1, got {self.min_verdicts!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "alpha": self.alpha, "undecided": self.undecided, "min_verdicts": self.min_verdicts}

    @classmethod
    def from_record(cls, raw: dict[str, Any]) -> GatePolicy:
        """The policy a session recorded (session.json's gate: these keys, its looks beside them)."""
        return cls(**{k: raw[k] for k in GATE_KEYS if k in raw})

    @classmethod
    def from_dict(cls, raw: Any, path: Path, line: int | None = None) -> GatePolicy:
        if not isinstance(raw, dict):
            raise ConfigError(path, f"gate must be a mapping, got {raw!r}", line=line_of(raw) or line,
                              fix="write gate: {mode: evidence, alpha: 0.05, undecided: pass}")
        for key in raw:
            if key not in GATE_KEYS:
                raise ConfigError(path, f"unknown key gate.{key}", line=line_of(raw, key),
                                  fix=f"gate takes: {', '.join(GATE_KEYS)}")
        fixes = {"mode": "write mode: evidence (or point, the rate >= threshold rule)", "alpha": "write alpha: 0.05",
                 "undecided": "write undecided: pass (or fail for a release gate, more to add runs)",
                 "min_verdicts": "write min_verdicts: 3, or leave it out (half the runs, at least 3)"}
        try:
            return cls(**{k: raw[k] for k in GATE_KEYS if k in raw})
        except ValueError as exc:
            key = str(exc).split()[1]
            raise ConfigError(path, f"gate.{str(exc)[len('gate '):]}", line=line_of(raw, key), fix=fixes[key]) from None


@dataclass
class Config:
    path: Path | None = None
    agent: dict[str, Any] = field(default_factory=lambda: {"type": "demo"})
    runs: int = 5
    concurrency: int = 4
    timeout_s: float = 120.0
    threshold: float = 0.8
    bands: dict[str, float] = field(default_factory=lambda: {"green": 0.9})
    presets: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PRESETS))
    stale_after_days: float = 7.0
    keep: str = "failed"
    cases_dir: str = "cases"
    workspaces_dir: str = "workspaces"
    isolation: str = "auto"  # "auto" (sandbox where it starts) | "sandbox" | "none" (scarbook.run.session.choose_isolation)
    network: bool = False  # the sandbox's network; no effect with isolation: none
    judge_raw: dict[str, Any] = field(default_factory=dict)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    retry_infra: int = 1  # a run the machine failed (cause infra) runs again at most this many times
    # extra stderr/transcript patterns per cause, (kind, regex) in the file's order (run/causes.py)
    cause_patterns: tuple[tuple[str, str], ...] = ()
    gate: GatePolicy = field(default_factory=GatePolicy)
    record: RecordSettings | None = None  # record: (scarbook.record): None records nothing

    @property
    def green(self) -> float:
        return float(self.bands.get("green", 0.9))

    @property
    def judge_model(self) -> str:
        return self.judge.model

    def fingerprint(self) -> str:
        """What makes two sessions comparable: the agent and the judge."""
        blob = json.dumps({"agent": self.agent, "judge": self.judge_model,
                           "judge_prompt": self.judge.prompt_digest}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _num(data: Any, key: str, path: Path, *, integer: bool = False, lo: float | None = None,
         hi: float | None = None) -> Any:
    value = data[key]
    ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
    ok = ok and (lo is None or value >= lo) and (hi is None or value <= hi)
    if not ok:
        rng = f" between {lo:g} and {hi:g}" if lo is not None and hi is not None else (
            f" of at least {lo:g}" if lo is not None else "")
        raise ConfigError(path, f"{key} must be {'an integer' if integer else 'a number'}{rng}, got {value!r}",
                          line=line_of(data, key), fix=f"write e.g. {key}: {DEFAULTS_FOR_FIX.get(key, 1)}")
    return value


DEFAULTS_FOR_FIX = {"retry_infra": 1, "runs": 5, "concurrency": 4, "timeout_s": 120, "threshold": 0.8, "stale_after_days": 7}


def parse_agent(raw: Any, path: Path, line: int | None) -> dict[str, Any]:
    if isinstance(raw, str):
        raw = {"type": raw}
    if not isinstance(raw, dict) or raw.get("type") not in AGENT_TYPES:
        got = raw.get("type") if isinstance(raw, dict) else raw
        raise ConfigError(path, f"agent.type must be one of {', '.join(AGENT_TYPES)}, got {got!r}",
                          line=line_of(raw) or line, fix="write e.g. agent: {type: command, argv: [./agent, \"{task}\"]}")
    kind = raw["type"]
    for key in raw:
        if key not in AGENT_KEYS[kind]:
            raise ConfigError(path, f"unknown key {key!r} for a {kind} agent", line=line_of(raw, key) or line,
                              fix=f"{with_article(kind)} agent takes: {', '.join(AGENT_KEYS[kind])}")
    if kind == "demo" and raw.get("draws", "independent") not in ("independent", "deck"):
        raise ConfigError(path, f"agent.draws must be independent or deck, got {raw['draws']!r}",
                          line=line_of(raw, "draws") or line,
                          fix="write draws: independent (each run drawn on its own) or deck (blocks of ten)")
    if kind == "command":
        argv = raw.get("argv")
        if isinstance(argv, str):
            import shlex
            argv = shlex.split(argv)
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            raise ConfigError(path, "agent.argv must be a non-empty list of strings", line=line_of(raw, "argv") or line,
                              fix='write argv: [python, agent.py, "{task}"]')
        env = raw.get("env", [])
        if not (isinstance(env, list) and all(isinstance(e, str) for e in env)):
            raise ConfigError(path, "agent.env must be a list of variable names", line=line_of(raw, "env") or line,
                              fix="write env: [PATH, HOME, ANTHROPIC_API_KEY]")
        cap = raw.get("max_output_bytes", 1)
        if not (isinstance(cap, int) and not isinstance(cap, bool) and cap > 0):
            raise ConfigError(path, f"agent.max_output_bytes must be a positive whole number of bytes, got {cap!r}",
                              line=line_of(raw, "max_output_bytes") or line, fix="write e.g. max_output_bytes: 1000000")
        for key in ("stdin", "transcript"):
            if raw.get(key) is not None and not isinstance(raw[key], bool):
                raise ConfigError(path, f"agent.{key} must be true or false, got {raw[key]!r}",
                                  line=line_of(raw, key) or line, fix=f"write {key}: true")
        return {**dict(raw), "argv": list(argv), "env": list(env)}
    if kind in ("claude-code", "codex"):
        args = raw.get("args", [])
        if isinstance(args, str):
            import shlex
            args = shlex.split(args)
        if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
            raise ConfigError(path, f"agent.args must be a list of strings (extra {kind} arguments)",
                              line=line_of(raw, "args") or line,
                              fix="write args: " + ("[--model, claude-sonnet-4-5]" if kind == "claude-code"
                                                    else "[--full-auto, -m, gpt-5-codex]"))
        env = raw.get("env", [])
        if not (isinstance(env, list) and all(isinstance(e, str) for e in env)):
            raise ConfigError(path, "agent.env must be a list of variable names", line=line_of(raw, "env") or line,
                              fix="write env: [HTTPS_PROXY]")
        return {**dict(raw), "args": list(args), "env": list(env)}
    if kind == "python":
        fn = raw.get("function")
        if not (isinstance(fn, str) and ":" in fn):
            raise ConfigError(path, "agent.function must be 'module:function'", line=line_of(raw, "function") or line,
                              fix="write function: my_agent.main:run")
    return dict(raw)


CAUSE_KINDS_YAML = ("infra", "judge", "case", "agent")


def parse_causes(raw: Any, path: Path, line: int | None) -> tuple[tuple[str, str], ...]:
    """`causes: {infra: [regex, ...], case: [...]}`: each regex compiled here, so a bad one is said
    with its line before anything runs."""
    fix = "write causes: {infra: ['quota exceeded', '^ECONNRESET']}"
    if not isinstance(raw, dict):
        raise ConfigError(path, "causes must map a cause (infra, judge, case, agent) to a list of regular expressions",
                          line=line_of(raw) or line, fix=fix)
    pairs = []
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
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(path, f"causes.{kind}[{i}] {pattern!r} is not a valid regular expression: {exc}",
                                  line=where, fix="escape the special characters (\\( \\[ \\.) or quote the pattern") from None
            pairs.append((kind, pattern))
    return tuple(pairs)


def load_config(path: Path | None) -> Config:
    """Read scarbook.yaml; a missing file means all defaults."""
    cfg = Config(path=path)
    if path is None or not path.is_file():
        _attach_judge(cfg, {}, path or Path(CONFIG_FILE))
        return cfg
    data = load_yaml_file(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, "scarbook.yaml must be a mapping of keys", line=line_of(data),
                          fix="see `scarbook init` for a starter file")
    for key in data:
        if key not in TOP_KEYS:
            raise ConfigError(path, f"unknown key {key!r}", line=line_of(data, key),
                              fix=f"scarbook.yaml takes: {', '.join(TOP_KEYS)}")
    if "agent" in data:
        cfg.agent = parse_agent(data["agent"], path, line_of(data, "agent"))
    if "runs" in data:
        cfg.runs = _num(data, "runs", path, integer=True, lo=1)
    if "concurrency" in data:
        cfg.concurrency = _num(data, "concurrency", path, integer=True, lo=1)
    if "timeout_s" in data:
        cfg.timeout_s = float(_num(data, "timeout_s", path, lo=0.001))
    if "threshold" in data:
        cfg.threshold = float(_num(data, "threshold", path, lo=0, hi=1))
    if "stale_after_days" in data:
        cfg.stale_after_days = float(_num(data, "stale_after_days", path, lo=0))
    if "bands" in data:
        bands = data["bands"]
        if not isinstance(bands, dict) or set(bands) - {"green"} or not all(
                isinstance(v, (int, float)) and 0 <= v <= 1 for v in bands.values()):
            raise ConfigError(path, "bands takes green: <number between 0 and 1>", line=line_of(data, "bands"),
                              fix="write bands: {green: 0.9}")
        cfg.bands = {k: float(v) for k, v in bands.items()}
    if "presets" in data:
        presets = data["presets"]
        if not isinstance(presets, dict) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in presets.values()):
            raise ConfigError(path, "presets must map a name to a positive number of runs",
                              line=line_of(data, "presets"), fix="write presets: {daily: 5, release: 20}")
        cfg.presets = {str(k): int(v) for k, v in presets.items()}
    if "keep" in data:
        if data["keep"] not in tuple(Keep):
            raise ConfigError(path, f"keep must be 'failed' or 'all', got {data['keep']!r}",
                              line=line_of(data, "keep"), fix="write keep: failed")
        cfg.keep = data["keep"]
    if "isolation" in data:
        if data["isolation"] not in tuple(Isolation):
            raise ConfigError(path, f"isolation must be 'none', 'sandbox' or 'auto', got {data['isolation']!r}",
                              line=line_of(data, "isolation"), fix="write isolation: auto")
        cfg.isolation = data["isolation"]
    if "network" in data:
        if not isinstance(data["network"], bool):
            raise ConfigError(path, f"network must be true or false, got {data['network']!r}",
                              line=line_of(data, "network"), fix="write network: true")
        cfg.network = data["network"]
    for key in ("cases_dir", "workspaces_dir"):
        if key in data:
            if not isinstance(data[key], str) or not data[key].strip():
                raise ConfigError(path, f"{key} must be a path", line=line_of(data, key), fix=f"write {key}: {key[:-4]}")
            setattr(cfg, key, data[key])
        where = path.parent / getattr(cfg, key)
        if where.exists() and not where.is_dir():
            raise ConfigError(path, f"{key} names {where}, which is a file, not a folder",
                              line=line_of(data, key) or None,
                              fix=f"point {key} at a folder, or move that file aside")
    _parse_sections(cfg, data, path)
    if "retry_infra" in data:
        cfg.retry_infra = _num(data, "retry_infra", path, integer=True, lo=0)
    if "causes" in data:
        cfg.cause_patterns = parse_causes(data["causes"], path, line_of(data, "causes"))
    _attach_judge(cfg, data.get("judge") or {}, path)
    return cfg


def _parse_sections(cfg: Config, data: dict, path: Path) -> None:
    """The sections with their own parsers: executor:, gate: and record:."""
    if "executor" in data:
        cfg.executor = ExecutorSettings.from_dict(data["executor"], path)
    if "gate" in data:
        cfg.gate = GatePolicy.from_dict(data["gate"], path, line_of(data, "gate"))
    if "record" in data:
        cfg.record = parse_record(data["record"], path)


def _attach_judge(cfg: Config, raw: Any, path: Path) -> None:
    if not isinstance(raw, dict):
        raise ConfigError(path, "judge must be a mapping", fix="write judge: {model: claude-sonnet-4-6}")
    cfg.judge_raw = dict(raw)
    cfg.judge = JudgeSettings.from_dict(raw, path)
