"""An agent that sends itself SIGTERM, SIGINT or SIGHUP fails its run; a shutdown of scarbook that reaches the
agents first does not.

Before, every signal but a crash's was read as from outside (`killed-by-signal`, infra): retried, and killed
again, an error — out of the rate's denominator — so an agent that saw a run going wrong could `kill -TERM $$`
to lift its rate (3 passes + 2 errors read 100% where 3/5 is 60%, and the session had no verdict: exit 3).
Now such a run is held SHUTDOWN_GRACE_S (run/signal_hold.py): when scarbook's own shutdown begins within it
(a supervisor's SIGTERM to the whole cgroup reaches the agent a moment before scarbook's handler runs) the run
is cut like every run the shutdown stops — not recorded, and `scarbook resume` runs it again; otherwise it is
the agent's own doing: a fail (agent-killed).

Real `scarbook eval` processes and real agent processes, unconfined and in the sandbox. Nothing waits by
sleeping: each step waits for a condition (a file, a process gone), bounded generously."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.models import CheckResult, CheckStatus, RunRecord, RunStatus
from scarbook.run.agent_signals import FAULT_SIGNALS, held
from scarbook.run.causes import AgentFacts, attribute
from tests.helpers.proc_helpers import alive

pytestmark = pytest.mark.needs_proc
SCARBOOK = [sys.executable, "-c", "from scarbook.entry import main; main()"]
BOUND_S = 120  # a whole eval under a loaded machine: far more than it takes

# Runs 1-3 write GOOD; runs 4 and 5 write BAD and then send their shell the signal.
SELF_SIGNAL = ('if [ "$SCARBOOK_RUN" -le 3 ]; then echo GOOD > out.txt; '
               'else echo BAD > out.txt; kill -{sig} $$; echo still here; fi')


def _evidence(n: int, name: str) -> str:
    return (f"killed by signal {n} ({name}), which neither scarbook nor a shutdown sent (not scarbook's timeout "
            "or cancel, and scarbook was not stopped within 2 s after): the agent's own doing")


def _eval(project, runs: int) -> tuple[subprocess.CompletedProcess, dict]:
    report = project.root / "report.json"
    done = subprocess.run([*SCARBOOK, "-C", str(project.root), "eval", "--runs", str(runs), "-q", "--json",
                           str(report)], capture_output=True, text=True, timeout=BOUND_S)
    assert "Traceback" not in done.stdout + done.stderr
    return done, json.loads(report.read_text())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_an_agent_that_signals_itself_fails_its_run(project, isolation, sig) -> None:
    if isolation == "sandbox":
        from tests.helpers.recorder_upstream import sandbox_or_skip

        sandbox_or_skip(project.root)
    script = SELF_SIGNAL.format(sig=sig.name.removeprefix("SIG"))
    project.config(f"agent: {{type: command, argv: {json.dumps(['sh', '-c', script])}}}\nisolation: {isolation}\n"
                   "concurrency: 5\nretry_infra: 1\nthreshold: 0.9\ngate: {mode: point}\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: not_contains, path: out.txt, text: BAD}\n")
    done, doc = _eval(project, 5)
    runs = sorted(doc["runs"], key=lambda r: r["k"])
    said = [(r["status"], r["cause"] and (r["cause"]["kind"], r["cause"]["rule"], r["cause"]["evidence"]),
             len(r["attempts"])) for r in runs]
    assert said == [("pass", None, 1)] * 3 + [("fail", ("agent", "agent-killed", _evidence(int(sig), sig.name)), 1)] * 2
    # ("error", ("infra", "killed-by-signal", ...), 2) for runs 4 and 5 before: retried, then out of the rate
    (case,) = doc["cases"]
    assert (case["passes"], case["fails"], case["errors"]) == (3, 2, 0)  # (3, 0, 2) before: read 100%
    assert done.returncode == 1, done.stdout + done.stderr  # 60% < 90%: red (3 before: no verdict)


# Notes its pid in the pids folder; runs 1-2 finish at once, runs 3 and 4 wait for the shutdown (60 s) unless the
# project holds a file `go` (made before the resume).
SLOW_AGENT = """\
import os, sys, time
root = sys.argv[1]
open(os.path.join(root, "pids", os.environ["SCARBOOK_RUN"]), "w").write(str(os.getpid()))
if int(os.environ["SCARBOOK_RUN"]) > 2 and not os.path.exists(os.path.join(root, "go")):
    time.sleep(60)
open("tmp.txt", "w").write("ok\\n")
"""


def _wait_for(what: str, ready) -> None:
    deadline = time.monotonic() + BOUND_S
    while not ready():
        assert time.monotonic() < deadline, f"not within {BOUND_S} s: {what}"
        time.sleep(0.01)


def _recorded(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in (root / "workspaces" / "history").glob("*/runs-*.jsonl"))


@pytest.mark.parametrize("when", ["at-once", "after-the-agents-died"])
def test_a_shutdown_that_reaches_the_agents_first_cuts_their_runs_and_resume_runs_them(project, when) -> None:
    """A supervisor's SIGTERM to the whole cgroup: the agents get it as scarbook does (`at-once`), or a moment
    before scarbook's handler runs (`after-the-agents-died`: scarbook has seen them die and reaped them)."""
    (project.root / "pids").mkdir()
    (project.root / "agent.py").write_text(SLOW_AGENT)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, agent.py, {project.root}]}}\n"
                   "isolation: none\nconcurrency: 2\nretry_infra: 0\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "--runs", "4"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pids = project.root / "pids"
        _wait_for("runs 1 and 2 recorded, the agents of runs 3 and 4 started",
                  lambda: _recorded(project.root) >= 2 and all((pids / k).is_file() and (pids / k).read_text()
                                                               for k in ("3", "4")))
        agents = [int((pids / k).read_text()) for k in ("3", "4")]
        for pid in agents:
            os.kill(pid, signal.SIGTERM)
        if when == "after-the-agents-died":
            _wait_for("scarbook reaped the agents", lambda: not any(Path(f"/proc/{pid}").exists() for pid in agents))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 3, (out, err)
    assert "Traceback" not in out + err
    history = History(project.workspaces)
    (info,) = history.sessions()
    assert info.state == "cancelled"
    assert [(r.k, r.status) for r in history.runs(info.id)] == [(1, "pass"), (2, "pass")]
    assert f"session {info.id}: cancelled; 2 runs — 2 pass, 0 fail, 0 error" in out
    assert not any(alive(pid) for pid in agents)
    (project.root / "go").touch()
    resumed = subprocess.run([*SCARBOOK, "-C", str(project.root), "resume", info.id, "-q"], capture_output=True,
                             text=True, timeout=BOUND_S)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert [(r.k, r.status) for r in History(project.workspaces).runs(info.id)] == [(k, "pass") for k in range(1, 5)]


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPIPE",
                                  "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF"])
def test_every_signal_from_outside_but_sigkill_is_held(name) -> None:
    n = getattr(signal, name)
    assert held(n, timed_out=False) and not held(n, timed_out=True)  # scarbook's timeout sent it: nothing to tell


def test_a_crash_sigkill_and_no_signal_are_not_held() -> None:
    assert not any(held(n, timed_out=False) for n in FAULT_SIGNALS)  # its own code's: agent-crashed
    assert not held(signal.SIGKILL, timed_out=False)  # the OOM killer's count tells it (proc/oom.py)
    assert not held(None, timed_out=False)


def test_where_scarbook_could_not_watch_for_its_shutdown_the_signal_stays_the_machines() -> None:
    """A run on a Ray worker (`agents_here` False): its node's shutdown is not this scarbook's to see."""
    record = RunRecord(session_id="s", case_id="c", k=1, status=RunStatus.FAIL, reason="agent was killed by signal 15",
                       started_at="", workspace="", checks=[CheckResult("file_exists", CheckStatus.SKIPPED, "", 0)])
    unwatched = attribute(record, AgentFacts(crashed=True, signal=15, exit_code=-15))
    watched = attribute(record, AgentFacts(crashed=True, signal=15, exit_code=-15, watched_s=2.0))
    assert unwatched is not None and watched is not None
    assert (unwatched.kind, unwatched.rule, unwatched.evidence) == (
        "infra", "killed-by-signal", "killed by signal 15 (SIGTERM), not by scarbook's timeout")
    assert (watched.kind, watched.rule, watched.evidence) == ("agent", "agent-killed", _evidence(15, "SIGTERM"))
