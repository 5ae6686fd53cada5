"""An agent that SIGKILLs itself is not the machine's failure (closing the last way stop 48 left for an agent
to claim infra by a signal). Before, any SIGKILL read as the OOM killer's: infra, retried, and, killed again,
an error — out of the rate's denominator — so an agent that knew a run was going wrong could kill itself to
lift its rate (3 passes + 2 errors read 100% where 3/5 is 60%), unconfined and in the sandbox (where bwrap
reports the signal as exit 128+9). Now a SIGKILL is the machine's only when the kernel's count of OOM kills
(/proc/vmstat oom_kill) moved while the agent ran; where the count cannot be read it stays the machine's.
Real agent processes, unconfined and sandboxed; the OOM killer is simulated only where it must act."""

from __future__ import annotations

import sys

import pytest

from scarbook.proc import oom
from tests.helpers.hostile_project import eval_json, inline_agent
from tests.helpers.proc_helpers import oom_killer_kills_meanwhile

AGENT = """
import os, signal
k = int(os.environ["SCARBOOK_RUN"])
open("out.txt", "w").write("GOOD" if k <= 3 else "BAD")
if k >= 4:
    os.kill(os.getpid(), signal.SIGKILL)
"""
CHECK = "  - {type: not_contains, path: out.txt, text: BAD}\n"
SELF = ("killed by signal 9 (SIGKILL), which neither scarbook's timeout nor the kernel's OOM killer sent (its "
        "oom_kill count did not move while the agent ran): the agent's own doing")
# beside tests/run/test_infra_the_agent_causes.py's real OOM kill, the count would move while these agents run
pytestmark = pytest.mark.xdist_group("oom-count")
needs_vmstat = pytest.mark.skipif(oom.oom_kills() is None, reason="needs /proc/vmstat's oom_kill (Linux 4.13+)")


def _said(runs: list[dict]) -> list[tuple]:
    return [(r["status"], r["cause"] and (r["cause"]["kind"], r["cause"]["rule"], r["cause"]["evidence"]),
             len(r["attempts"])) for r in runs]


@needs_vmstat
@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_an_agent_that_kills_itself_fails_its_run(project, isolation) -> None:
    inline_agent(project, AGENT, isolation, CHECK, extra="retry_infra: 1\nthreshold: 0.9\ngate: {mode: point}\n")
    result, doc, runs = eval_json(project, 5)
    assert _said(runs[3:]) == [("fail", ("agent", "agent-killed", SELF), 1)] * 2  # ('error', infra, 2) before
    (case,) = doc["cases"]
    assert (case["passes"], case["fails"], case["errors"]) == (3, 2, 0)  # (3, 0, 2) before: 100%
    assert result.exit_code == 1, result.output  # 60% < 90%: red (3 before: no verdict, the rate read 100%)


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_sigkill_while_the_oom_killer_kills_stays_the_machines(project, monkeypatch, isolation) -> None:
    oom_killer_kills_meanwhile(monkeypatch)
    inline_agent(project, AGENT, isolation, CHECK, extra="retry_infra: 1\nthreshold: 0.9\ngate: {mode: point}\n")
    result, doc, runs = eval_json(project, 4)
    assert _said(runs[3:]) == [("error", ("infra", "killed-by-signal", "killed by signal 9 (SIGKILL), not by "
                                          "scarbook's timeout — the kernel's OOM killer killed 1 meanwhile"), 2)]
    assert result.exit_code == 3, result.output


def test_where_the_count_cannot_be_read_a_sigkill_stays_the_machines(project, monkeypatch, tmp_path) -> None:
    """macOS, Windows, an older kernel: forced here by a /proc/vmstat that is not there."""
    monkeypatch.setattr(oom, "VMSTAT", str(tmp_path / "no-vmstat"))
    inline_agent(project, AGENT, "none", CHECK, extra="retry_infra: 0\nthreshold: 0.9\ngate: {mode: point}\n")
    result, doc, runs = eval_json(project, 4)
    assert _said(runs[3:]) == [("error", ("infra", "killed-by-signal", "killed by signal 9 (SIGKILL), not by "
                                          "scarbook's timeout — the kernel's OOM killer sends it, so do people "
                                          "and supervisors"), 1)]


def test_the_count_is_read_from_vmstat_and_unknown_when_it_is_not_there(tmp_path, monkeypatch) -> None:
    vmstat = tmp_path / "vmstat"
    monkeypatch.setattr(oom, "VMSTAT", str(vmstat))
    vmstat.write_bytes(b"nr_free_pages 12\noom_kill 7\nnr_zone 3\n")
    assert oom.oom_kills() == 7
    vmstat.write_bytes(b"nr_free_pages 12\n")  # a kernel before 4.13
    assert oom.oom_kills() is None
    vmstat.write_bytes(b"oom_kill x\n")
    assert oom.oom_kills() is None
    vmstat.unlink()
    assert oom.oom_kills() is None
    assert (oom.moved(7, 9), oom.moved(None, 9), oom.moved(7, None)) == (2, None, None)


def test_the_count_before_a_run_is_read_at_most_once_a_second(tmp_path, monkeypatch) -> None:
    """/proc/vmstat costs 0.05-0.2 ms to read: a run's "before" count may be up to a second old."""
    vmstat = tmp_path / "vmstat"
    monkeypatch.setattr(oom, "VMSTAT", str(vmstat))
    monkeypatch.setattr(oom, "_last", (float("-inf"), None))
    now = [100.0]
    vmstat.write_bytes(b"oom_kill 3\n")
    assert oom.recent_oom_kills(lambda: now[0]) == 3
    vmstat.write_bytes(b"oom_kill 5\n")
    now[0] += 0.9
    assert oom.recent_oom_kills(lambda: now[0]) == 3  # not read again
    now[0] += 0.2
    assert oom.recent_oom_kills(lambda: now[0]) == 5
    assert oom.oom_kills() == 5  # the count after a run is always read


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/vmstat is Linux's")
def test_this_kernel_counts_oom_kills() -> None:
    assert isinstance(oom.oom_kills(), int)
