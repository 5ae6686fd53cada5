"""Infra scarbook sees but the agent can cause buys a retry, never a verdict (hostile agent, round seven).

Runs 1-6 pass; runs 7-10 fail their task and make the machine look at fault, then pass the retry (its workspace is
under attempt-2/). Before, the evidence was taken as scarbook's own: a 6/10 agent read 10/10 at threshold 0.5, above,
exit 0. Now each such cause is the agent's own word: the retry is kept, the gate reads the run as a fail too, and a
case whose decision differs between the two readings has no verdict (exit 3). Real agent processes through
`scarbook eval`.

- killed-by-signal: a SIGKILL is the OOM killer's when the kernel's count of OOM kills (/proc/vmstat) moved while
  the agent ran — a machine-wide count that cannot tell who caused the kill. An unconfined agent as root makes a
  memory cgroup of 64 MiB, starts a child in it that the OOM killer takes (a real OOM kill, of a 64 MiB cgroup: the
  machine's memory is never short), then SIGKILLs itself. (Sandboxed, / is read-only and capabilities are dropped:
  the agent cannot make a cgroup, but it could still exhaust the machine's memory, which a test must not.)
- workspace-unreadable: an unconfined agent swaps its workspace for another folder (renames it and makes a new one
  at its name): the diff refuses a path that no longer leads to the folder scarbook made.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from scarbook.proc import oom
from tests.helpers.hostile_project import eval_json
from tests.run.test_infra_claims import CASE, CLAIMING

# the real OOM kill moves the machine-wide count that test_self_kill needs still: never beside it
pytestmark = pytest.mark.xdist_group("oom-count")

OOM_KILL = """\
    import signal, subprocess
    procs = sys.argv[1]  # a memory cgroup's cgroup.procs (64 MiB): the child joins it and asks for 1 GiB
    subprocess.run([sys.executable, "-c", "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); "
                    "b = bytearray(1 << 30)", procs])
    os.kill(os.getpid(), signal.SIGKILL)
"""
SWAP_FOLDER = """\
    here = os.getcwd()
    os.rename(here, here + ".elsewhere")
    os.mkdir(here)
"""
LIMIT = 64 << 20


def _memory_cgroup(name: str) -> Path:
    """A memory cgroup of 64 MiB under this process's own (cgroup v1 or v2), made here; skipped where it cannot be."""
    if sys.platform != "linux" or os.geteuid() != 0 or oom.oom_kills() is None:
        pytest.skip("needs Linux's /proc/vmstat oom_kill and root (to make a memory cgroup)")
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        v1 = "memory" in controllers.split(",")
        base = Path("/sys/fs/cgroup/memory" if v1 else "/sys/fs/cgroup") / path.lstrip("/")
        if not (v1 or controllers == "") or not base.is_dir():
            continue
        folder = base / name
        try:
            folder.mkdir(exist_ok=True)
            (folder / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(str(LIMIT))
        except OSError:
            continue
        return folder
    pytest.skip("no memory cgroup this test can make (cgroup v1 memory, or v2 with the memory controller)")


def _hostile(project, claim: str, *args: str) -> None:
    code = CLAIMING.format(claim=claim.lstrip())  # runs 1-6 and every retry pass
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', code, *args])}}}\n"
                   "threshold: 0.5\nretry_infra: 1\nisolation: none\ntimeout_s: 60\n", gate="evidence")
    project.case("c", CASE)


def _assert_no_verdict(project, rule: str, status: str, evidence_starts: str, how: str) -> None:
    result, doc, runs = eval_json(project, 10)
    [case] = doc["cases"]
    assert (case["passes"], case["fails"], case["errors"]) == (10, 0, 0)  # the retries passed: the runs say so
    firsts = [r["attempts"][0]["cause"] for r in runs if len(r["attempts"]) > 1]
    assert [(c["kind"], c["rule"], c["evidence"][:len(evidence_starts)]) for c in firsts] == \
        [("infra", rule, evidence_starts)] * 4
    assert result.exit_code == 3, result.output  # was 0: 10/10 above 50%
    note = (f"it reads above only because 4 runs were retried on the agent's own word ({rule}: {how}); read as "
            "fails they make it undecided")
    assert (case["decision"], case["gate_note"]) == ("no verdict", note)
    assert f"c: no verdict — {note}\n" in result.stdout
    assert doc["retried_after_infra"] == doc["retried_on_agents_word"] == 4
    shown = project.cli("show", "c").stdout
    assert shown.count(f"  attempt 1: {status} — infra ({rule}, the agent's own word): ") == 4


def test_an_oom_kill_the_agent_made_itself_buys_no_verdict(project) -> None:
    cgroup = _memory_cgroup(f"scarbook-test-{os.getpid()}")
    try:
        _hostile(project, OOM_KILL, str(cgroup / "cgroup.procs"))
        _assert_no_verdict(project, "killed-by-signal", "fail", "killed by signal 9 (SIGKILL), not by scarbook's timeout — "
                                                        "the kernel's OOM killer killed",
                           "a kill the machine's count of OOM kills cannot tell from one it made itself")
    finally:
        cgroup.rmdir()


def test_a_workspace_the_agent_swapped_buys_no_verdict(project) -> None:
    _hostile(project, SWAP_FOLDER)
    _assert_no_verdict(project, "workspace-unreadable", "error", "could not diff the workspace: ",
                       "a workspace it can swap or close itself")


WRITES_WHAT_BREAKS_SCARBOOK = """\
    open(os.environ["SCARBOOK_USAGE"], "w").write("breaks scarbook\\n")
    sys.exit(1)
"""


def test_a_failure_of_scarbook_the_agents_input_caused_buys_no_verdict(project, monkeypatch) -> None:
    """scarbook reads what the agent wrote (its files, $SCARBOOK_USAGE, its transcript, its output): a reader that
    raises on it is scarbook's failure, yet the agent's doing. No such reader is known (round seven tried deep JSON,
    invalid UTF-8, pipes, folders and links where files go, names no terminal shows, a swapped case folder): a
    reader of $SCARBOOK_USAGE that raises on a line is put in for the one still unknown."""
    from scarbook.run import session_run

    real = session_run.read_agent_usage

    def breaks_on(path, *args):
        if Path(path).is_file() and "breaks scarbook" in Path(path).read_text():
            raise ValueError("a reader that met what it did not expect")
        return real(path, *args)

    monkeypatch.setattr(session_run, "read_agent_usage", breaks_on)
    _hostile(project, WRITES_WHAT_BREAKS_SCARBOOK)
    _assert_no_verdict(project, "scarbook-error", "error", "scarbook could not finish this run: ValueError: a reader "
                       "that met what it did not expect", "a failure of scarbook that what it wrote can cause")
