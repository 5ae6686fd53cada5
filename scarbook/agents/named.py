"""scarbook.yaml's `agents:` — agents by name, a variant written as an overlay on another (issue 36).

    agent: {type: demo}                 # the one agent `scarbook eval` runs by default, as before
    agents:
      baseline: {type: command, argv: [python, agent.py, "{task}"]}
      candidate: {base: baseline, env: {PROMPT_VERSION: v2}, args: [--model, claude-opus-4-1]}

An entry is an agent as `agent:` takes it, or an overlay on another entry: `base:` names it, and the
rest changes it — `args:` are added after the base's arguments (a command agent's argv, a preset's
args), `env:` as a mapping sets those variables in the agent's environment (as a list it replaces the
variables passed through, as `agent:`'s does), and any other key replaces the base's. A base may be an
overlay itself; a cycle or a base that is not there is said by name, with the names there are.

`scarbook eval --agents baseline,candidate` runs them in one session (the first is the baseline).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scarbook.agents.spec import AGENT_KINDS, AgentSpec, agent_settings
from scarbook.errors import ConfigError
from scarbook.fs.yamlio import line_of

if TYPE_CHECKING:
    from scarbook.models.session_parts import AgentEntry

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
OVERLAY_KEYS = ("base", "args", "env")
# What the A-against-B report says of a candidate (reports/versus_table.py's CALL_WORDS and MARGIN_WORDS): an agent
# named so reads as a decision beside them ("WORSE: -33 points …", a column headed "ok").
DECISION_WORDS = ("better", "worse", "same", "undecided", "ok", "inferior")
FIX = "write e.g. agents: {baseline: {type: demo}, candidate: {base: baseline, env: {PROMPT_VERSION: v2}}}"


@dataclass(frozen=True)
class NamedAgent:
    """One entry of `agents:`, its overlays resolved: the settings `agent:` would take, and the
    variables set in its environment."""

    name: str
    settings: dict[str, Any]
    env_values: dict[str, str] = field(default_factory=dict)

    @property
    def spec(self) -> AgentSpec:
        return AgentSpec.from_config(self.settings)

    def fingerprint(self) -> str:
        """What tells two configurations of this agent apart (its settings and the variables it sets)."""
        import hashlib  # (OpenSSL's library: loaded when a session is fingerprinted, not to read scarbook.yaml)

        blob = json.dumps({"agent": self.settings, "env": self.env_values}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def entry(self, label: str) -> AgentEntry:
        """This agent as its session records it (SessionInfo.agents), `label` the agent as it ran, with the names
        of the variables it sets (not their values: the label reaches public CI summaries), so two agents that
        differ only there read apart in the comparison's `agents:` line."""
        from scarbook.models.session_parts import AgentEntry  # (the session's records: loaded when one runs)

        env = f" (env: {', '.join(sorted(self.env_values))})" if self.env_values else ""
        return AgentEntry(self.name, str(self.settings.get("type") or ""), self.fingerprint(), label + env)


def known(names: Mapping[str, Any] | list[str]) -> str:
    """'agents here: a, b' — said beside every mistake about a name."""
    listed = ", ".join(names) if names else "none"
    return f"agents in scarbook.yaml: {listed}"


def check_agents(raw: Any, path: Path, line: int | None) -> dict[str, NamedAgent]:
    """scarbook.yaml's `agents:` resolved once, at load: every entry's overlays resolved and checked
    against its type's row, in the file's order; a mistake is a ConfigError naming the line, the problem
    and the names there are. What a session takes is this record: none reads the YAML's lines again."""
    if not isinstance(raw, Mapping):
        raise ConfigError(path, "agents must map a name to an agent", line=line_of(raw) or line, fix=FIX)
    for name in raw:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ConfigError(path, f"agent name {name!r} must be 1-64 letters, digits, '.', '_' or '-' (starting "
                              "with a letter or digit)", line=line_of(raw, name) or line,
                              fix="rename it (names are what --agents takes, separated by commas)")
        if name.lower() in DECISION_WORDS:
            raise ConfigError(path, f"agent name {name!r} is a word the comparison says of a candidate "
                              f"({', '.join(DECISION_WORDS)}): in its table and under it the name would read as a "
                              "decision", line=line_of(raw, name) or line,
                              fix=f"rename it, e.g. {name.lower()}-agent")
    return {name: _resolve(raw, name, path, line, []) for name in raw}


def _resolve(raw: Mapping[str, Any], name: str, path: Path, line: int | None, seen: list[str]) -> NamedAgent:
    entry = raw[name]
    where = line_of(raw, name) or line
    if isinstance(entry, str):
        entry = {"type": entry}
    if not isinstance(entry, Mapping):
        raise ConfigError(path, f"agents.{name} must be an agent (a mapping with type:) or an overlay (base:)",
                          line=where, fix=FIX)
    values, entry = _env_values(entry, name, path, where)
    if "base" not in entry:
        return _checked(NamedAgent(name, _settings(name, entry, path, where), values), raw[name], path, where)
    base = entry["base"]
    if not isinstance(base, str) or base not in raw:
        raise ConfigError(path, f"agents.{name}.base names {base!r}, which is not an agent here",
                          line=line_of(entry, "base") or where, fix=known(list(raw)))
    if base in (*seen, name):
        chain = seen[seen.index(base):] if base in seen else []
        cycle = " -> ".join([*chain, name, base])
        raise ConfigError(path, f"agents.{name}.base makes a cycle: {cycle}", line=line_of(entry, "base") or where,
                          fix="one agent of the cycle must be written out with its type:")
    parent = _resolve(raw, base, path, line, [*seen, name])
    settings = dict(parent.settings)
    for key, value in entry.items():
        if key in OVERLAY_KEYS:
            continue
        settings[key] = value
    if "env" in entry:  # a list: the variables passed through (the mapping form was taken out above)
        settings["env"] = entry["env"]
    if "args" in entry:
        settings = _with_args(settings, entry["args"], name, path, line_of(entry, "args") or where)
    return _checked(NamedAgent(name, _settings(name, settings, path, where), {**parent.env_values, **values}),
                    raw[name], path, where)


def _settings(name: str, entry: Mapping[str, Any], path: Path, where: int | None) -> dict[str, Any]:
    """The entry checked against its type's row, its messages saying which entry."""
    try:
        return agent_settings(entry, path, where)
    except ConfigError as exc:
        raise ConfigError(path, f"agents.{name}: {exc.problem}", line=exc.line, fix=exc.fix) from None


def _env_values(entry: Mapping[str, Any], name: str, path: Path, where: int | None) -> tuple[dict[str, str], dict]:
    """An entry's `env:` as a mapping: the variables it sets (taken out of what its type's row reads)."""
    env = entry.get("env")
    if not isinstance(env, Mapping):
        return {}, dict(entry)
    bad = [k for k, v in env.items() if not isinstance(k, str) or not isinstance(v, (str, int, float, bool))]
    if bad:
        raise ConfigError(path, f"agents.{name}.env must map variable names to values, got {bad[0]!r}",
                          line=line_of(entry, "env") or where, fix="write env: {PROMPT_VERSION: v2}")
    rest = {k: v for k, v in entry.items() if k != "env"}
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in env.items()}, rest


def _checked(agent: NamedAgent, entry: Mapping[str, Any], path: Path, where: int | None) -> NamedAgent:
    if agent.env_values and not AGENT_KINDS[agent.settings["type"]].SANDBOX:  # in scarbook's own process
        raise ConfigError(path, f"agents.{agent.name}.env: a {agent.settings['type']} agent runs inside scarbook's "
                          "own process, so no variable can be set for it alone", line=line_of(entry, "env") or where,
                          fix="run it as a command agent (type: command, argv: [python, -m, my_agent])")
    return agent


def _with_args(settings: dict[str, Any], args: Any, name: str, path: Path, where: int | None) -> dict[str, Any]:
    if isinstance(args, str):
        args = shlex.split(args)
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(path, f"agents.{name}.args must be a list of strings", line=where,
                          fix="write args: [--model, claude-opus-4-1]")
    kind = settings.get("type")
    row = AGENT_KINDS.get(kind) if isinstance(kind, str) else None
    target = "argv" if kind == "command" else "args" if row is not None and "args" in row.__struct_fields__ else None
    if target is None:
        raise ConfigError(path, f"agents.{name}.args: {kind!r} agents take no arguments", line=where,
                          fix="leave args out, or overlay a command, claude-code or codex agent")
    return {**settings, target: [*settings.get(target, ()), *args]}
