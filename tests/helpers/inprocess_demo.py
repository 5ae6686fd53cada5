"""The demo agent in this process, for tests where the agent's process is not what is tested.

`scarbook.agents.demo.act` is the demo agent's whole behaviour; scarbook runs it as a program
(`python -I -S demo.py`), which costs a Python start per run. Tests that run sessions of dozens of
runs to check numbers, reports, diffs or screens use the `inprocess_demo` fixture: every `type: demo`
agent scarbook builds in this process then runs `act` on a thread, with the same workspace, task,
environment (SCARBOOK_* and SCARBOOK_DEMO_DELAY), delay, transcript, usage file and final output
(stdout's text: the answer and a newline). Outcomes are the program's: the same seeded draw
(tests/agents/test_demo.py compares the two run by run).

Agents built in other processes (a `scarbook` subprocess, a Ray worker) stay programs.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from scarbook.agents import demo
from scarbook.agents.spec import DemoSpec
from scarbook.models import AgentResult


class InProcessDemoAgent:
    env_allow = ("SCARBOOK_DEMO_DELAY", "SCARBOOK_DEMO_DRAWS")

    def __init__(self, spec: DemoSpec) -> None:
        self.seed = None if spec.seed is None else str(spec.seed)
        self.profile = str(spec.profile) if spec.profile else "default"
        self.delay = spec.delay
        self.draws = spec.draws
        self.label = "demo" + (f" ({spec.profile})" if spec.profile else "")
        self.runs = 0

    def sandbox_for(self, network: bool | None) -> None:
        return None

    def preflight(self) -> None:
        pass

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        # what the program gets: the allowed variables from here, then the run's own
        env = {**{k: os.environ[k] for k in self.env_allow if k in os.environ}, **env}
        start = time.monotonic()
        self.runs += 1
        try:
            output = await asyncio.wait_for(
                asyncio.to_thread(demo.act, task.strip(), cwd, env, self.seed, self.profile, self.delay,
                                  self.draws), timeout_s)
        except TimeoutError:
            return AgentResult(timed_out=True, crashed=f"timed out after {timeout_s:g}s",
                               duration_s=time.monotonic() - start)
        return AgentResult(output=output + "\n", exit_code=0, duration_s=time.monotonic() - start)


@pytest.fixture
def inprocess_demo(monkeypatch) -> list[InProcessDemoAgent]:
    """Every demo agent built in this process during the test runs in-process; the list holds them."""
    built: list[InProcessDemoAgent] = []

    def build(spec: DemoSpec, project_root: Path | None) -> InProcessDemoAgent:
        built.append(InProcessDemoAgent(spec))
        return built[-1]

    # It keeps the demo's `sandbox` capability: a session records the isolation the demo program would
    # have run under (the default sandbox), and says no "unconfined" line the program would not cause.
    # What it runs is scarbook's own demo code, on a thread; nothing of it is confined.
    monkeypatch.setattr(DemoSpec, "build", build)
    return built
