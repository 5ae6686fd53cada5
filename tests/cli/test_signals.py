"""A CI runner cancelling a job sends SIGTERM (a closed terminal, SIGHUP): both are handled like
Ctrl-C — finished runs kept, running agents killed, exit 3. And when `scarbook eval` ends, no process
a run started is still running, even one that escaped with a double fork and setsid."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scarbook.history.store import History
from tests.helpers.proc_helpers import DAEMON, alive

pytestmark = pytest.mark.needs_proc
SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]


def recorded(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in (root / "workspaces" / "history").glob("*/runs-*.jsonl"))


# Writes its pid, and the pid of a daemon it starts (double fork + setsid), into the pids folder.
ESCAPING_AGENT = """\
import os, sys, time
pids = sys.argv[1]
def note(pid):
    open(os.path.join(pids, str(pid)), "w").close()
note(os.getpid())
""" + DAEMON + """
time.sleep(0.2 if int(os.environ["SCARBOOK_RUN"]) <= {quick} else 60)
open("tmp.txt", "w").write("ok\\n")
print("done")
"""


def start_eval(project, quick: int, runs: int) -> tuple[subprocess.Popen, Path]:
    pids = project.root / "pids"
    pids.mkdir()
    agent = project.root / "agent.py"
    agent.write_text(ESCAPING_AGENT.replace("{quick}", str(quick)))
    # isolation: none — the agents note their pids outside their workspaces, for the test to check
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}, {pids}]}}\nconcurrency: 2\n"
                   "isolation: none\n")
    project.case("slow", "id: slow\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "--runs", str(runs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, pids


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_keep_finished_runs_and_kill_running_agents(project, sig) -> None:
    proc, pids = start_eval(project, quick=2, runs=6)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # two runs recorded, and the next two agents mid-run
        if recorded(project.root) >= 2 and len(list(pids.iterdir())) >= 8:
            break
        time.sleep(0.02)
    assert recorded(project.root) >= 2, "no runs finished in time"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, (out, err)
    assert f"{sig.name} received: stopping — running agents are killed, finished runs are kept" in err
    history = History(project.workspaces)
    (info,) = history.sessions()
    runs = history.runs(info.id)
    assert info.state == "cancelled" and len(runs) == 2 and all(r.status == "pass" for r in runs)
    assert f"session {info.id}: cancelled; 2 runs — 2 pass, 0 fail, 0 error" in out
    started = [int(p.name) for p in pids.iterdir()]
    assert [pid for pid in started if alive(pid)] == []


def test_nothing_a_run_started_is_running_after_the_session(project) -> None:
    proc, pids = start_eval(project, quick=99, runs=4)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (out, err)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 8  # 4 agents, 4 daemons
    assert [pid for pid in started if alive(pid)] == []
