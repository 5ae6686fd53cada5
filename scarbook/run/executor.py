"""Where runs execute. The runner only talks to this interface, so a cluster executor (Ray, say)
can replace the local pool without touching cases, checks, history or the UI.

An executor does two things: `run` keeps up to N jobs in flight, and `agent_part` runs one run's
worker part (workspace, agent, diff, rule checks, judge inputs: session_run.run_agent_part) where
the executor puts it. The driver part (the judge, the verdict, history) always runs in the runner's
process. scarbook.run.ray.executor.RayExecutor is the cluster one."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

from scarbook.models.session_parts import RunPlace
from scarbook.models.words import ExecutorType

J = TypeVar("J")
R = TypeVar("R")


class Executor(Protocol[J, R]):
    # Its runs' agents are processes of this machine, where scarbook's own shutdown is seen as it begins: a run
    # whose agent died of a signal nobody is known to have sent waits for it a moment (run/signal_hold.py)
    agents_here: bool

    def run(self, next_job: Callable[[], J | None], work: Callable[[J], Awaitable[R]]) -> AsyncIterator[R]:
        """Pull jobs while slots are free (`next_job` returns None when there are no more for now),
        and yield each result as it completes. Cancelling the iteration cancels running work."""

    async def agent_part(self, ctx: Any, agent: Any, case: Any, k: int, manifests: dict, emit: Callable) -> Any:
        """Run the worker part of run k of `case` (same arguments as session_run.run_agent_part)."""

    def where(self) -> RunPlace:
        """Where its runs execute, as the session records it (SessionInfo.executor)."""

    def recorder_hosts(self) -> tuple[str, ...]:
        """The addresses the model-call recorder's doors listen on, so that its agents reach them."""


class LocalExecutor(Generic[J, R]):
    """An asyncio pool of `concurrency` slots in this process."""

    agents_here = True

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)

    def where(self) -> RunPlace:
        return RunPlace(ExecutorType.LOCAL)

    def recorder_hosts(self) -> tuple[str, ...]:
        return ("127.0.0.1",)

    async def agent_part(self, ctx: Any, agent: Any, case: Any, k: int, manifests: dict, emit: Callable) -> Any:
        from scarbook.run.session_run import run_agent_part

        return await run_agent_part(ctx, agent, case, k, manifests, emit)

    async def run(self, next_job: Callable[[], J | None], work: Callable[[J], Awaitable[R]]) -> AsyncIterator[R]:
        # Each job's task says itself done (a callback it is given once), instead of asyncio.wait: that
        # adds a callback to every running task and takes it off again at every completion (O(concurrency)
        # per run: at -j16 a visible share of the main process's time per run).
        running: set[asyncio.Task] = set()
        finished: deque[asyncio.Task] = deque()
        waiting: list[asyncio.Future] = []  # the one future the loop below waits on, while it waits

        def done(task: asyncio.Task) -> None:
            finished.append(task)
            if waiting and not waiting[0].done():
                waiting[0].set_result(None)

        loop = asyncio.get_running_loop()
        try:
            while True:
                while len(running) < self.concurrency:
                    job = next_job()
                    if job is None:
                        break
                    task = asyncio.ensure_future(work(job))
                    task.add_done_callback(done)
                    running.add(task)
                if not running:
                    return
                if not finished:
                    waiting.append(loop.create_future())
                    try:
                        await waiting[0]
                    finally:
                        waiting.clear()
                done_now = list(finished)
                finished.clear()
                running.difference_update(done_now)
                # Look at every finished task before raising one's exception, so no other failure
                # is left for asyncio to report as "Task exception was never retrieved".
                failed = [exc for t in done_now if not t.cancelled() and (exc := t.exception()) is not None]
                if failed:
                    raise failed[0]
                for task in done_now:
                    yield task.result()
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
