"""Nothing a run starts outlives it: hostile agents (real processes) that leave a grandchild holding
stdout, or escape their process group with a double fork and setsid. Each runs through both spawn
paths (Linux epoll/pidfd, and the portable asyncio one)."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scarbook.agents import CommandAgent
from tests.helpers.proc_helpers import alive

pytestmark = [pytest.mark.usefixtures("spawn_mode"), pytest.mark.needs_proc]


def agent(code: str) -> CommandAgent:
    return CommandAgent([sys.executable, "-c", textwrap.dedent(code)], stdin=False, env_allow=["PIDFILE"])


def gone(pid: int, within: float = 5.0) -> bool:
    """Dead (or a zombie) within `within` s: a SIGKILL sent as the run ends takes effect asynchronously,
    and on a loaded machine the kernel may not have finished the process when the run returns."""
    end = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def read_pid(path: Path) -> int:
    for _ in range(500):
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.01)
    raise AssertionError(f"the agent never wrote {path}")


HOLDS_STDOUT = """
    import os, subprocess, sys
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # inherits stdout
    open(os.environ["PIDFILE"], "w").write(str(p.pid))
    print("done")
"""

DOUBLE_FORK = """
    import os, sys, time
    pidfile = os.environ["PIDFILE"]
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            {redirect}
            with open(pidfile + ".tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.rename(pidfile + ".tmp", pidfile)
            time.sleep(60)
            os._exit(0)
        os._exit(0)
    os.wait()
    while not os.path.exists(pidfile):
        time.sleep(0.01)
    print("done")
"""
TO_DEVNULL = "fd = os.open(os.devnull, os.O_RDWR); [os.dup2(fd, i) for i in (0, 1, 2)]"


@pytest.mark.parametrize("code", [HOLDS_STDOUT, DOUBLE_FORK.format(redirect=TO_DEVNULL),
                                  DOUBLE_FORK.format(redirect="pass")],
                         ids=["grandchild-holds-stdout", "setsid-escape", "setsid-escape-holding-stdout"])
async def test_exit_0_is_recorded_quickly_and_nothing_outlives_the_run(tmp_path: Path, monkeypatch, code) -> None:
    pidfile = tmp_path / "leftover.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    start = time.monotonic()
    result = await agent(code).run("t", tmp_path, {}, 20, tmp_path, "1")
    took = time.monotonic() - start
    assert (result.crashed, result.exit_code, result.timed_out, result.output) == (None, 0, False, "done\n")
    assert took < 3, f"an exit 0 took {took:.1f}s to be recorded"
    pid = read_pid(pidfile)
    assert gone(pid), f"process {pid} started by the run is still running after it"


async def test_a_timeout_kills_an_escaped_process_too(tmp_path: Path, monkeypatch) -> None:
    pidfile = tmp_path / "leftover.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    code = DOUBLE_FORK.format(redirect=TO_DEVNULL).replace('print("done")', "time.sleep(60)")
    result = await agent(code).run("t", tmp_path, {}, 1.5, tmp_path, "1")
    assert result.crashed == "timed out after 1.5s"
    pid = read_pid(pidfile)
    assert gone(pid), f"process {pid} started by the run is still running after it"
