"""Runs on a Ray cluster: each run's worker part is a Ray task; the judge and history stay here.

The driver (this process) ships each case's seed once through the object store, submits one task
per run (`scarbook.run.ray.worker.run_remote`, holding `num_cpus` and `resources`), and, as each answer
arrives, unpacks the run's folder under workspaces/<session>/ so review, verify and "new scar from
this run" work as for a local run. The runner then judges the run here (the API key never leaves
this machine) and records it the moment it is done.

A run whose worker or node is lost is submitted once more (`infra_retries` on the record); lost
again, it is an `error` (never a fail). Cancelling asks Ray to interrupt the task (the worker then
kills the agent's process group) and, if it has not ended after a grace period, kills the worker
(`ray.cancel(force=True)`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec

from scarbook.config import ExecutorSettings
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.fs.files import read_regular_bytes
from scarbook.history.store import now_iso
from scarbook.models import AgentStage, Case, ExecutorType, RunRecord, RunStatus
from scarbook.models.session_parts import RunPlace
from scarbook.models.words import Isolation
from scarbook.proc import credentials
from scarbook.proc.common import KILL_GRACE_S
from scarbook.run.cause_matching import AgentFacts
from scarbook.run.events import CheckDone, RunStarted
from scarbook.run.executor import LocalExecutor
from scarbook.run.ray.worker import AgentRecipe
from scarbook.run.session_run import AWAITING_JUDGE, AgentPart, RunContext, transcript_file, unprepared
from scarbook.run.workspace import SeedChanged, SeedFile, SeedManifest, check_seed_files, seed_manifest
from scarbook.run.workspace_bundle import unpack
from scarbook.text import escape_name

CANCEL_GRACE_S = KILL_GRACE_S + 2.0  # the worker's own kill of the agent, plus room
INSTALL_HINT = "the Ray executor needs Ray: pip install 'scarbook[ray]'"


# ray._private.node gives a new node's processes a fixed 30 s to come up (no setting changes it)
STARTUP_TIMED_OUT = "timed out during startup"
SLOW_START = ("could not start Ray here: its processes did not come up within Ray's own 30 s start-up wait (a "
              "busy machine?) — run again, or start Ray once with `ray start --head` and set "
              "executor.address: auto in scarbook.yaml")


def import_ray():
    try:
        import ray
    except ImportError:
        raise ScarbookError(INSTALL_HINT) from None
    return ray


def _infra_errors(ray) -> tuple[type[BaseException], ...]:
    """Ray's errors that mean the machinery lost the run, not that the run went wrong."""
    ex = ray.exceptions
    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "ObjectLostError",
             "RaySystemError", "OutOfMemoryError", "ObjectFetchTimedOutError")
    return tuple(getattr(ex, n) for n in names if hasattr(ex, n))


class RayExecutor:
    """The runner's executor for `executor: {type: ray}` (see module doc)."""

    # A node's own shutdown (its supervisor stopping Ray) is not this scarbook's to see: a run whose agent died
    # of a signal from outside stays the machine's (run/signal_hold.py)
    agents_here = False

    def __init__(self, settings: ExecutorSettings, concurrency: int, *, agent_spec: Any, project_root: Path,
                 keep_all: bool, hidden_env: tuple[str, ...] = (), isolation: str = "none",
                 network: bool = False) -> None:
        self.settings = settings
        self.concurrency = max(1, concurrency)
        # the agent (and its sandbox) as the workers rebuild it
        self.recipe = AgentRecipe(agent_spec, str(project_root), isolation, network)
        self.keep_all = keep_all
        self.hidden_env = hidden_env  # kept from the Ray processes started here (the judge's key, credentials)
        self.seeds_shipped = 0
        self._seeds: dict[str, Any] = {}  # case id -> ObjectRef of (case, inline manifest)
        # Ray ships no type information: the module and the remote function are Any to mypy.
        self._remote: Any = None
        self._ray: Any = None

    def where(self) -> RunPlace:
        """The cluster its runs go to: executor.address as written ("auto", "ray://head:10001"), or
        None for a Ray instance started on this machine."""
        return RunPlace.ray(self.settings.address)

    # -- connecting ---------------------------------------------------------------------------
    def connect(self) -> str | None:
        """Join the cluster (or start Ray here when no address is set). Blocking; call before the loop.
        Returns a warning to show when no node can hold a run now (it waits until one joins)."""
        ray = self._ray = import_ray()
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING,
                                      "configure_logging": True}
            if self.settings.runtime_env:
                kwargs["runtime_env"] = self.settings.runtime_env
            try:
                if self.settings.address:
                    ray.init(address=self.settings.address, **kwargs)
                else:
                    with _without_secrets(self.hidden_env):
                        ray.init(include_dashboard=False, **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = self.settings.address or "a new local instance"
                raise ScarbookError(f"could not connect to Ray at {where}: {' '.join(str(exc).split())} — start "
                                    "a cluster with `ray start --head` (and `ray start --address=HEAD:6379` on "
                                    "the workers), or set executor.address in scarbook.yaml") from None
            except Exception as exc:  # Ray raises a bare Exception when its node outlives its fixed start-up wait
                if STARTUP_TIMED_OUT not in str(exc):
                    raise
                raise ScarbookError(SLOW_START) from None
        from scarbook.run.ray.worker import run_remote

        self._remote = ray.remote(max_retries=0)(run_remote)
        return self._fit_warning()

    def _fit_warning(self) -> str | None:
        """Ray keeps a task no node can hold waiting (an autoscaler may add such a node): say so."""
        need = {"CPU": self.settings.num_cpus, **self.settings.resources}
        nodes = [n.get("Resources", {}) for n in self._ray.nodes() if n.get("Alive")]
        if any(all(have.get(k, 0) >= v for k, v in need.items() if v) for have in nodes):
            return None
        want = ", ".join(f"{k}: {v:g}" for k, v in need.items())
        return (f"no Ray node offers what one run needs ({want}); the runs wait until such a node joins — "
                "lower executor.num_cpus or executor.resources in scarbook.yaml, or start a node with them")

    # -- the Executor protocol ----------------------------------------------------------------
    def run(self, next_job: Callable[[], Any], work: Callable[[Any], Awaitable[Any]]) -> AsyncIterator[Any]:
        """As many runs in flight as `concurrency`; Ray places them where `num_cpus`/`resources` fit."""
        return LocalExecutor(self.concurrency).run(next_job, work)

    async def agent_part(self, ctx: RunContext, agent: Any, case: Case, k: int,
                         manifests: dict[str, SeedManifest], emit: Callable) -> AgentPart:
        if self._remote is None:
            self.connect()
        ray = self._ray
        infra = _infra_errors(ray)
        driver_ws = Path(ctx.session_dir) / case.id / str(k)
        emit(RunStarted(ctx.session_id, case.id, k, str(driver_ws)))
        started, lost = now_iso(), []
        try:  # the seed shipped once per case, its large files checked before every run (as a local copy checks)
            shipped = self._ship(case, manifests)
            await asyncio.to_thread(check_seed_files, manifests[case.id])
        except (OSError, safefs.Refused, SeedChanged) as exc:
            return _error_part(ctx, case, k, started, 0.0, 0, unprepared(driver_ws, exc), stage=AgentStage.SEED)
        opts = {"num_cpus": self.settings.num_cpus, "resources": dict(self.settings.resources) or None}
        start = time.monotonic()
        for attempt in (0, 1):
            ref = self._remote.options(**opts).remote(ctx, self.recipe, shipped, k,
                                                      self.settings.max_workspace_bytes, self.keep_all)
            try:
                reply = await ref
            except asyncio.CancelledError:
                await self._cancel(ref)
                raise
            except infra as exc:
                lost.append(_one_line(exc))
                continue
            except ray.exceptions.RayTaskError as exc:  # scarbook's own code failed on the worker
                return _error_part(ctx, case, k, started, time.monotonic() - start, attempt,
                                   f"the Ray worker could not finish this run: {_one_line(exc.cause or exc)}",
                                   stage=AgentStage.SCARBOOK)
            part = self._land(reply, ctx, case, k)
            part.record.infra_retries = attempt
            if attempt:
                part.record.workspace_note += f" (retried once: the first attempt lost its worker: {lost[0]})"
            for result in part.record.checks:
                if result.detail != AWAITING_JUDGE:
                    emit(CheckDone(ctx.session_id, case.id, k, result))
            return part
        return _error_part(ctx, case, k, started, time.monotonic() - start, 1,
                           f"infrastructure: lost its Ray worker twice ({lost[0]}; then {lost[1]}) — no verdict",
                           stage=AgentStage.WORKER_LOST)

    # -- helpers ------------------------------------------------------------------------------
    def _ship(self, case: Case, manifests: dict[str, SeedManifest]):
        """The case and its seed, put in the object store once per case per session."""
        ref = self._seeds.get(case.id)
        if ref is None:
            if case.id not in manifests:
                manifests[case.id] = seed_manifest(case)
            ref = self._seeds[case.id] = self._ray.put((case, _inline(manifests[case.id])))
            self.seeds_shipped += 1
        return ref

    def recorder_hosts(self) -> tuple[str, ...]:
        """127.0.0.1, and this machine's address on the cluster (when not a loopback one): the recorder's
        doors listen there too, so the relays on the other nodes (record/relay.py) reach them."""
        if self._remote is None:
            self.connect()
        ip = self._ray.util.get_node_ip_address()
        return ("127.0.0.1",) if not ip or ip.startswith("127.") or ip == "localhost" else ("127.0.0.1", ip)

    def _land(self, reply, ctx: RunContext, case: Case, k: int) -> AgentPart:
        """Bring a remote run's folder here and point its record at it."""
        part, record = reply.part, reply.part.record
        here = Path(ctx.session_dir)
        recorded = Path(transcript_file(ctx, case.id, k))  # the recorder's own, written here as the calls went
        _keep_the_fuller(recorded, reply)
        refused = unpack(reply.bundle, here / case.id)
        for name in ("workspace", "transcript_path", "stderr_path"):
            value = getattr(record, name)
            if value and value.startswith(reply.scratch):
                setattr(record, name, str(here) + value[len(reply.scratch):])
        if record.transcript_path is None and recorded.is_file():
            record.transcript_path = str(recorded)  # the agent wrote none there: the recorder's is the run's
        record.node = reply.node
        record.workspace_kept = reply.workspace_packed
        where = f"node {reply.node.get('id', '?')[:12]} ({reply.node.get('host', '?')})"
        if reply.workspace_packed:
            why = " (for the judge: pruned here if the run passes)" if part.judge_inputs else ""
            record.workspace_note = f"brought back from {where}{why}: {reply.bundle.describe()}"
        else:
            record.workspace_note = f"passed on {where}; workspace pruned there"
        if refused:
            record.workspace_note += f"; refused to write: {', '.join(map(escape_name, refused[:5]))}"
        return part

    async def _cancel(self, ref) -> None:
        """Interrupt the task (the worker kills the agent), then kill the worker if it lingers."""
        ray = self._ray
        ray.cancel(ref, force=False)
        done, _ = await asyncio.to_thread(ray.wait, [ref], timeout=CANCEL_GRACE_S)
        if not done:
            ray.cancel(ref, force=True)


def _keep_the_fuller(recorded: Path, reply) -> None:
    """The run's transcript came back from the node holding every byte the recorder wrote here (the
    relay copied them in, between the agent's own lines): that one is the run's, so the recorder's copy
    makes way for it. Otherwise the recorder's stays, and the node's is refused by name (workspace_note)."""
    name = recorded.name
    if not reply.relayed or not any(e.rel == name and e.kind == "file" for e in reply.bundle.entries):
        return
    try:
        fd = safefs.open_dir(recorded.parent)
    except (OSError, safefs.Refused):
        return
    try:
        if os.stat(name, dir_fd=fd, follow_symlinks=False).st_size == reply.relayed:
            os.unlink(name, dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _inline(manifest: SeedManifest) -> SeedManifest:
    """A manifest whose files all carry their bytes: the workers cannot read the driver's seed/."""
    files = {}
    for rel, f in manifest.files.items():
        if f.data is not None:
            data = f.data
        else:
            assert f.source is not None  # a seed file carries its bytes or names the file that holds them
            data = read_regular_bytes(f.source)
            if hashlib.sha256(data).hexdigest() != f.digest:  # changed since it was digested, a moment ago
                raise SeedChanged(f.source)
        mode = f.mode if f.mode is not None or f.source is None else os.stat(f.source).st_mode & 0o777
        files[rel] = SeedFile(f.digest, data, mode=mode)
    return SeedManifest(files)


def _error_part(ctx: RunContext, case: Case, k: int, started: str, duration: float, retries: int,
                reason: str, *, stage: AgentStage) -> AgentPart:
    record = RunRecord(session_id=ctx.session_id, case_id=case.id, k=k, status=RunStatus.ERROR, reason=reason,
                       started_at=started, duration_s=duration, workspace_kept=False,
                       workspace=str(Path(ctx.session_dir) / case.id / str(k)), infra_retries=retries)
    return AgentPart(record, settled=True, facts=AgentFacts(stage=stage, error=reason))  # run/causes.py


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


@contextmanager
def _without_secrets(names: tuple[str, ...]):
    """Hide `names` (the judge's key, the credentials the agent is not passed) from the Ray processes
    started here: they inherit this environment, and an agent can read theirs. Other variables stay:
    an agent's allow-listed variables come from its worker's environment."""
    saved = {n: os.environ.pop(n) for n in names if n and n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def make_executor(settings: ExecutorSettings, ready, choice: str | None = None):
    """The executor a session runs on: `choice` (--executor) beats scarbook.yaml's `executor.type`.
    `ready` is the prepared session (a scarbook.run.session.ReadySession)."""
    kind = choice or settings.type
    if kind == ExecutorType.LOCAL:
        return None  # the runner's default LocalExecutor
    if choice == ExecutorType.RAY and settings.type != ExecutorType.RAY:
        settings = msgspec.structs.replace(settings, type=ExecutorType.RAY)
    judge, cfg = ready.judge, ready.site.config
    key_env: str = (judge.settings.api_key_env if judge is not None else None) or cfg.judge.api_key_env
    # what the agent on a worker is passed comes from the worker's environment: kept, unless the session
    # records (its agent then gets the recorder's dummies); every other credential stays here
    passed = [n for n in ready.agent.env_allow if ready.record is None or n not in credentials.CREDENTIALS]
    hidden = tuple(n for n in dict.fromkeys([key_env, *credentials.CREDENTIALS]) if n not in passed)
    ex = RayExecutor(settings, ready.concurrency, agent_spec=ready.agent_spec, project_root=ready.site.root,
                     keep_all=ready.keep_all, isolation=ready.isolation.ran if ready.isolation is not None else Isolation.NONE, network=cfg.network,
                     hidden_env=hidden)
    ex.recipe = replace(ex.recipe, private=(str(ready.site.workspaces_dir),))  # hidden in a node's sandbox
    return ex
