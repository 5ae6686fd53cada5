"""isolation: slot — hostile agents (real processes, through `scarbook eval`, root as this machine is) in sandbox
slots: one bwrap per concurrency slot whose launcher runs the runs one after another (agents/slots.py). Each test
is a property of benchmarks/slot_nocap_bench.py's --check, proved in the product: a run sees its own folder at its
real path and nothing of another run, leaves nothing the next run of its slot sees, cannot touch the launcher or
its own view, holds no capability, and its end (exit, timeout) ends all of it. test_slot_nonroot.py: the same
where scarbook is not root."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from scarbook.agents.slots import why_no_slots
from tests.agents.test_sandbox import needs_sandbox
from tests.helpers.slot_agents import results, slot_project

needs_slots = pytest.mark.skipif(sys.platform != "linux" or why_no_slots() is not None,
                                 reason=f"no sandbox slots here: {why_no_slots() if sys.platform == 'linux' else ''}")
pytestmark = [needs_sandbox, needs_slots]


def children(state: str | None = None) -> list[tuple[int, str]]:
    """(pid, name) of this process's children (in `state` only: "Z" for those exited and not reaped)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                name, fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)
            except OSError:
                continue
            parts = fields.split()
            if int(parts[1]) == me and (state is None or parts[0] == state):
                found.append((int(entry), name.split("(", 1)[1]))
    return found


def zombie_children() -> list[int]:
    return [pid for pid, _name in children("Z")]


def test_runs_in_slots_pass_see_their_own_folder_and_leave_no_zombie_and_no_slot(project) -> None:
    slot_project(project, {})
    result = project.cli("eval", "--runs", "12", "-j", "3", "-q")
    assert result.exit_code == 0, result.output
    got = results(project)
    assert [run.status for run, _ in got.values()] == ["pass"] * 12
    for run, said in got.values():
        assert run.workspace == str(project.workspaces / run.session_id / "c" / str(run.k))
        assert said["cwd"] == said["workspace"] == run.workspace  # the run's own folder, as a bwrap of its own shows
        assert said["pid1"] == "python3"  # the slot's launcher (a bwrap of the run's own: bwrap)
    assert len({said["slot"] for _, said in got.values()}) <= 3  # one slot per concurrent run, used again
    assert sorted(p.name for p in project.workspaces.iterdir()) == sorted([run.session_id, "history"])  # nothing else
    assert [pid for pid, name in children() if name == "bwrap"] == []  # no slot's bwrap left running
    assert zombie_children() == []


def test_a_run_leaves_nothing_the_next_run_of_its_slot_sees(project) -> None:
    slot_project(project, {1: "probe", 2: "probe", 3: "hostile", 4: "probe"})
    result = project.cli("eval", "--runs", "4", "-j", "1", "-q")
    assert result.exit_code == 0, result.output
    got = results(project)
    first, again, left, after = (got[k][1] for k in (1, 2, 3, 4))
    assert len({got[k][1]["slot"] for k in (1, 2, 4)}) == 1  # one slot served them all
    # the hostile run could leave all this (it ran, as root in the slot's user namespace)...
    assert left["mq"] is True and left["shm"] >= 0 and left["msg"] >= 0 and left["sem"] >= 0
    assert all(left[f"key{r}"] > 0 for r in (-3, -4, -5)) and left["persistent"]
    assert {"file", "dir", "xattr", "utime", "chmod"} <= set(left["/tmp"])
    assert "nodes" not in left  # the device nodes bound into /dev are scarbook's, owned by nobody
    keys = ("procs", "roots", "sysv", "keys", "persistent", "abstract", "tcp", "unix-names", "mq", "nice1")
    # ...and the next run sees what the first saw: no file, attribute, SysV object, queue, key, socket or process
    assert {k: after[k] for k in keys} == {k: first[k] for k in keys} == {k: again[k] for k in keys}


def test_a_fork_race_leaves_no_process(project) -> None:
    slot_project(project, {1: "probe", 2: "fork-race", 3: "probe"})
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    assert result.exit_code == 0, result.output
    got = results(project)
    assert got[2][0].status == "pass"
    assert got[3][1]["procs"] == got[1][1]["procs"] == []


def test_a_run_cannot_signal_ptrace_or_read_the_launcher_and_the_slot_serves_on(project) -> None:
    slot_project(project, {1: "at-launcher", 2: "plain"})
    result = project.cli("eval", "--runs", "2", "-j", "1", "-q")
    assert result.exit_code == 0, result.output
    got = results(project)
    said = got[1][1]
    assert said["state"] != "T"  # SIGSTOP did not stop it
    assert (said["ptrace-attach"], said["ptrace-seize"]) == ("Operation not permitted", "Operation not permitted")
    assert {p: said[p] for p in said if p.startswith("/proc/1/")} == dict.fromkeys(
        ("/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/fdinfo/0", "/proc/1/cwd", "/proc/1/root",
         "/proc/1/ns/mnt"), "Permission denied")  # (its own mount namespace, where every run's folder is, too)
    assert said["hostname"] == "Operation not permitted"
    assert got[2][0].status == "pass" and got[2][1]["slot"] == got[1][1]["slot"]


def test_a_run_that_lowers_the_launcher_s_limits_is_an_error_and_its_slot_is_replaced(project) -> None:
    slot_project(project, {1: "plain", 2: "lower-launcher", 3: "probe"})
    project.config((project.root / "scarbook.yaml").read_text() + "retry_infra: 0\n")
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    got = results(project)
    run, said = got[2]
    # a nice value is not lowered by a process with fewer capabilities; a limit is (same uid), and nothing without
    # a capability can raise it back
    assert said == {"renice": "Operation not permitted", "prlimit": "lowered"}
    assert run.status == "error"
    assert run.reason == (f"the sandbox slot failed (command: {sys.executable} {project.root / 'agent.py'}): the run "
                          "lowered the launcher's priority, limits, scheduling or CPU affinity")
    # the run's own doing: infra the gate does not take on the run's word (read as a fail too, as round six's claims)
    assert (run.cause.kind, run.cause.rule) == ("infra", "slot-changed-by-run")
    assert result.exit_code == 3, result.output
    assert got[3][0].status == "pass" and got[3][1]["slot"] != got[1][1]["slot"]  # a new slot
    assert got[3][1]["nice1"] == "0"  # whose launcher is not reniced
    assert (Path(run.workspace) / "result.json").exists()  # its folder holds what it wrote


PEEKED = {"write-beside": "Read-only file system", "rename-own-folder": "Read-only file system",
          "replace-transcript": "Read-only file system", "chmod-case-folder": "Read-only file system",
          "umount-workspaces": "Operation not permitted", "umount-own-folder": "Operation not permitted",
          "new-mount-namespace": "Operation not permitted"}
NO_CAPABILITY = dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), "0000000000000000")


def check_peeked(project, said: dict, run) -> None:
    """What a `peek` run saw: its own folder at its real path, no other run, no history, no capability; and it
    could not move, replace or unmount what holds it."""
    assert said["cwd"] == said["workspace"] == run.workspace
    assert said["workspaces"] == [run.session_id]  # no history, no other session
    assert said["session"] == ["c"] and said["case"] == sorted([str(run.k), f"{run.k}.transcript.jsonl",
                                                                 f"{run.k}.usage.jsonl"])  # no other run
    assert {k: said[k] for k in PEEKED} == PEEKED
    assert said["caps"] == NO_CAPABILITY  # the launcher's CAP_SYS_ADMIN is not the agent's, as uid 0 either


def test_a_run_sees_no_other_run_holds_no_capability_and_cannot_change_its_view(project) -> None:
    marker = Path("/tmp") / f"scar-host-{os.getpid()}"
    marker.touch()
    try:
        slot_project(project, {k: "peek" for k in range(1, 5)})
        result = project.cli("eval", "--runs", "4", "-j", "2", "-q")
    finally:
        marker.unlink()
    assert result.exit_code == 0, result.output
    got = results(project)
    for run, said in got.values():
        check_peeked(project, said, run)
        assert marker.name not in said["tmp"]  # a tmpfs (where only the project, under /tmp here, is shown again)
    assert len({said["slot"] for _, said in got.values()}) <= 2  # (slots, not a bwrap a run)
    assert [run.k for run, _ in got.values() if (Path(run.workspace) / "x").exists()] == []


def test_a_timeout_kills_the_run_through_its_pidfd_and_the_slot_serves_on(project) -> None:
    slot_project(project, {1: "probe", 2: "sleeper", 3: "probe"}, timeout_s=1)
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    got = results(project)
    assert got[2][0].status == "fail" and got[2][0].reason == "timed out after 1s"
    assert result.exit_code == 1, result.output
    assert got[3][1]["slot"] == got[1][1]["slot"]  # the same slot
    assert got[3][1]["procs"] == got[1][1]["procs"] == []  # its setsid daemon went with it


def test_an_agent_killed_by_a_signal_in_a_slot_reads_as_killed(project) -> None:
    slot_project(project, {1: "segv"}, keep="failed")
    result = project.cli("eval", "--runs", "1", "-q")
    (run, _said), = results(project).values()
    assert result.exit_code == 1, result.output
    assert run.status == "fail"
    assert run.reason == "agent was killed by signal 11 [in the sandbox: only the workspace is writable; no network]"


def test_a_write_by_the_path_the_agent_saw_in_its_slot_is_inside_its_workspace(project) -> None:
    """The agent's cwd is the run's own folder: a tool call's absolute path under it is the workspace's
    (no_writes_outside), and its transcript reaches the run's own file."""
    slot_project(project, {1: "writes-absolute"}, agent_extra=", transcript: true",
                 checks="  - {type: no_writes_outside, paths: [out.txt]}\n")
    result = project.cli("eval", "--runs", "1", "-q")
    (run, said), = results(project).values()
    assert said["cwd"] == run.workspace
    assert result.exit_code == 0, (result.output, run.reason)
    assert run.status == "pass" and run.transcript_path == str(Path(run.workspace).parent / "1.transcript.jsonl")
