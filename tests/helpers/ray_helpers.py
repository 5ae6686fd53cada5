"""Shared by the Ray tests: projects whose scarbook.yaml runs on Ray, agents that misbehave on cue,
and which local process a TCP client is (to prove the judge is called from the driver only)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

# The Ray modules' mark (in their pytestmark): skipped where Ray is not installed. Ray itself (~0.5 s of CPU)
# is imported by the tests and fixtures that use it, not at collection: every xdist worker collects every
# module, and only the one running the "ray" xdist_group needs it.
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="the Ray executor's tests need the ray extra: pip install -e '.[test,ray]'")

# pytest-timeout's bound (a hang guard) for a test that starts Ray: the suite's 120 s is not enough on a loaded
# machine. test_ray_local's judge test at load ~20 on 2 cores took 78 s (16 s importing the judge's SDK, 32 s
# Ray's head processes, the rest its first workers), 126 s with stress-ng beside it, and 120 s cut it off
# mid-session in a run with 3 xdist workers (issue 37): nothing hung, it was only slow.
RAY_TEST_TIMEOUT_S = 300

# An agent that kills the Ray worker running it (its parent) on chosen attempts: run k's attempt n
# kills it when "k:n" is listed in KILL_ON; each attempt is counted in a file outside the workspace.
KILLER = """\
import os, signal, sys
marks, kill_on = sys.argv[1], sys.argv[2].split(",")
k = os.environ["SCARBOOK_RUN"]
path = os.path.join(marks, k)
n = len(open(path).read()) + 1 if os.path.exists(path) else 1
open(path, "a").write("x")
if f"{k}:{n}" in kill_on:
    os.kill(os.getppid(), signal.SIGKILL)
open("out.txt", "w").write("done\\n")
print("done")
"""

# An agent that says where it is, then sleeps (for cancel tests).
SLEEPER = """\
import os, sys, time
open(os.path.join(sys.argv[1], str(os.getpid())), "w").write("")
time.sleep(120)
"""

# An agent that says where it is, waits until the file sys.argv[2] exists (at most a minute), then does its
# task (for losing a node under it: the test releases the runs once the node is gone).
NAPPER = """\
import os, sys, time
open(os.path.join(sys.argv[1], str(os.getpid())), "w").write("")
for _ in range(1200):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.05)
open("out.txt", "w").write("done\\n")
print("done")
"""

# An agent that spends one dollar a run (for --max-cost).
SPENDER = """\
import json, os
open(os.environ["SCARBOOK_USAGE"], "a").write(json.dumps({"input_tokens": 10, "cost_usd": 1.0}) + "\\n")
open("out.txt", "w").write("done\\n")
print("done")
"""

ONE_CHECK_CASE = """\
id: {cid}
task: write out.txt
checks:
  - {{type: file_exists, path: out.txt}}
"""


def write_project(root: Path, *, agent: list[str] | None = None, executor: str = "{type: ray, address: auto}",
                  extra: str = "", cases: dict[str, str] | None = None, demo_seed: int = 7) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    # draws: deck in the file, not only in $SCARBOOK_DEMO_DRAWS (conftest): the Ray workers were started
    # without the test's environment, and the spec travels to them with the run
    agent_yaml = (f"{{type: demo, seed: {demo_seed}, draws: deck}}" if agent is None
                  else json.dumps({"type": "command", "argv": agent}))
    if agent is not None:  # a command agent's script sits beside the project, which the sandbox hides (/tmp)
        extra = "isolation: none\n" + extra
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent: {agent_yaml}
        runs: 2
        concurrency: 4
        timeout_s: 60
        threshold: 0.5
        executor: {executor}
        """) + extra)
    for cid, text in (cases or {}).items():
        (root / "cases" / cid).mkdir(parents=True, exist_ok=True)
        (root / "cases" / cid / "case.yaml").write_text(text)
    return root


def python_agent(tmp: Path, name: str, source: str, *args: str) -> list[str]:
    path = tmp / name
    path.write_text(source)
    return [sys.executable, str(path), *args]


def cli(root: Path, *args: str):
    from click.testing import CliRunner

    from scarbook.cli import main

    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def pid_of_peer(address: tuple[str, int]) -> int | None:
    """The local process holding the client end of a TCP connection to 127.0.0.1 (Linux /proc)."""
    host, port = address[:2]
    want = f"{''.join(f'{int(p):02X}' for p in reversed(host.split('.')))}:{port:04X}"
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == want:
            inode = fields[9]
            break
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:  # a busy process closes descriptors while we look: skip that one, not the process
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return int(pid)
            except OSError:
                continue
    return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(predicate, timeout_s: float = 20.0, step: float = 0.1) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def cpus_free() -> bool:
    import ray

    return ray.available_resources().get("CPU", 0) == ray.cluster_resources().get("CPU", -1)


def _descendants() -> set[int]:
    """The pids of every process below this one (Linux /proc)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in found:
                found.add(child)
                todo.append(child)
    return found


def add_node(cluster, attempts: int = 3, **node_args):
    """`cluster.add_node(**node_args)` (the head first), started again when Ray's own start-up wait runs out.
    ray._private.node gives a node's raylet a fixed 30 s to register (no setting changes it); on a busy
    machine its agents (Python processes) can take longer, and Ray raises "The current node timed out during
    startup" though the node is still coming up. The half-started node's processes are killed (they would
    join the cluster later, unknown to `cluster`) and the node is started again."""
    import signal

    for attempt in range(1, attempts + 1):
        before = _descendants()
        try:
            return cluster.add_node(**node_args)
        except Exception as exc:
            if "timed out during startup" not in str(exc) or attempt == attempts:
                raise
            for pid in _descendants() - before:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    raise AssertionError("unreachable")
