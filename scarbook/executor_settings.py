"""The `executor:` section of scarbook.yaml: where runs execute (this machine, or a Ray cluster).

    executor: {type: local}                                   # the default: an asyncio pool here
    executor: {type: ray, address: auto, num_cpus: 1, resources: {gpu_box: 1}}

Every unknown key or wrong type is a ConfigError naming `executor.<key>` and its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.errors import ConfigError
from scarbook.yamlio import line_of
from scarbook.wording import with_article

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
    def from_dict(cls, raw: Any, path: Path) -> "ExecutorSettings":
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
