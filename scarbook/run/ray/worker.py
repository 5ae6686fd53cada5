"""The worker half of a run on Ray: what one Ray task does on whichever node Ray picked.

It makes the run's folder in a scratch directory of its own, writes the case's seed (received once
per case through the object store), runs the agent, the diff, the rule checks and `command` checks
there, and reads the judge's artifacts (capped). It returns the run's record so far with a bundle of
the run's folder: the logs always, the workspace too unless the run has passed already (a passing
workspace is pruned here; a run that still waits for the judge brings it back, since only the driver
knows its verdict). Nothing is left on the worker. The judge never runs here: its key stays on the
driver. When the session records, the agent's model calls go through this worker's relay
(record/relay.py) to the driver's recorder, which adds the key and records them; the relay copies
what it recorded into the run's transcript here, so it comes back with the run.

This module is imported on the workers; it does not import ray at module level.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scarbook.checks.verdict import verdict_of
from scarbook.models import Case, RunStatus
from scarbook.models.words import Isolation
from scarbook.run.session_run import AgentPart, RunContext, run_agent_part, transcript_file
from scarbook.run.workspace import SeedManifest
from scarbook.run.workspace_bundle import Bundle, pack

HEARTBEAT_S = 0.2  # how often the worker's loop wakes, so a cancel from the driver lands at once
_agents: dict[tuple, Any] = {}  # one agent per spec and project per worker process
_loop: asyncio.AbstractEventLoop | None = None
_relay_on: tuple[asyncio.AbstractEventLoop, Any] | None = None  # the relay and the loop it lives on


@dataclass(frozen=True)
class AgentRecipe:
    """What a worker needs to build the session's agent as the driver built it (the same sandbox)."""

    spec: Any
    project_root: str
    isolation: str = "none"
    network: bool = False
    private: tuple[str, ...] = ()  # hidden in the sandbox (the project's workspaces/, where it exists on the node)


@dataclass
class RemoteRun:
    """A Ray task's answer."""

    part: AgentPart
    scratch: str  # the worker's session folder the record's paths start with
    bundle: Bundle
    workspace_packed: bool
    node: dict[str, str] = field(default_factory=dict)
    relayed: int = 0  # bytes of the driver's recording of this run its transcript here holds (relay.py)


def run_remote(ctx: RunContext, recipe: AgentRecipe, shipped: tuple[Case, SeedManifest], k: int,
               cap: int, keep_all: bool) -> RemoteRun:
    """The Ray task body (the driver wraps it with ray.remote)."""
    case, manifest = shipped
    scratch = tempfile.mkdtemp(prefix=f"scarbook-{ctx.session_id}-")
    try:
        local = replace(ctx, session_dir=scratch)
        agent = _agent(recipe)
        part, relayed = _run_on_loop(_agent_part(local, agent, case, k, manifest))
        passed = not part.settled and not part.judge_inputs and verdict_of(part.record.checks)[0] == RunStatus.PASS
        keep = keep_all or not passed
        case_dir = os.path.join(scratch, case.id)
        bundle = pack(case_dir, cap, skip=() if keep else (str(k),))
        return RemoteRun(part, scratch, bundle, keep, node_info(), relayed)
    finally:
        from scarbook.proc import reaper

        reaper.sweep_all()  # one task at a time per worker: whatever this one left, goes
        shutil.rmtree(scratch, ignore_errors=True)


async def _agent_part(ctx: RunContext, agent: Any, case: Case, k: int, manifest: SeedManifest) -> tuple[AgentPart, int]:
    """The run's worker part; when the session records, through this node's relay to the driver's
    recorder: the agent's calls reach it, and what it recorded is copied into the run's transcript here."""
    if ctx.record_relay is None or ctx.record_env is None:
        return await run_agent_part(ctx, agent, case, k, {case.id: manifest}), 0
    driver, token = ctx.record_relay
    relay = _relay()
    env = await relay.open_run(driver, token, transcript_file(ctx, case.id, k), ctx.record_env)
    try:
        part = await run_agent_part(replace(ctx, record_env=env), agent, case, k, {case.id: manifest})
    finally:
        relayed, notes = await relay.close_run(token)
    part.record.notes.extend(notes)
    return part, relayed


def _relay():
    """This worker process's relay (record/relay.py), on its event loop; made on its first recorded run."""
    global _relay_on
    from scarbook.record.relay import Relay

    loop = asyncio.get_running_loop()
    if _relay_on is None or _relay_on[0] is not loop:
        _relay_on = (loop, Relay())
    return _relay_on[1]


def node_info() -> dict[str, str]:
    import ray

    try:
        ip = ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001 — where a run ran is a label; it must never fail the run
        ip = ""
    return {"id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "ip": ip,
            "pid": str(os.getpid())}


def _agent(recipe: AgentRecipe):
    """The session's agent, built here as the driver built it (the same sandbox, if any)."""
    from scarbook.agents import make_agent

    key = (repr(recipe.spec), recipe.project_root, recipe.isolation, recipe.network, recipe.private)
    if key not in _agents:
        agent = make_agent(recipe.spec, Path(recipe.project_root), isolation=recipe.isolation,
                           network=recipe.network, private=recipe.private)
        if recipe.isolation == Isolation.SANDBOX:  # this node's shims resolved, as the driver's were (agents/shims.py)
            agent.preflight()
        _agents[key] = agent
    return _agents[key]


def _run_on_loop(coro):
    """Run `coro` on this worker process's loop. A cancel from the driver arrives as a
    KeyboardInterrupt in this thread, seen only while Python code runs: the heartbeat makes the
    loop run some every HEARTBEAT_S, and the interrupt then cancels the run, which kills the
    agent's whole process group before the task ends."""
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    loop = _loop
    task = loop.create_task(coro)
    beat = [loop.call_later(HEARTBEAT_S, lambda: None)]

    def tick() -> None:
        beat[0] = loop.call_later(HEARTBEAT_S, tick)

    tick()
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():
            task.cancel()
            try:
                loop.run_until_complete(task)
            except BaseException:  # noqa: BLE001 — the first exception is the one that counts
                pass
        raise
    finally:
        beat[0].cancel()
