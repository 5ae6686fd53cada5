"""isolation: slot — hostile agents (real processes, through `scarbook eval`, root as this machine is) in sandbox
slots: one bwrap per concurrency slot whose launcher runs the runs one after another (agents/slots.py). Each test
is a property of benchmarks/slot_nocap_bench.py's --check, proved in the product: a run leaves nothing the next
run of its slot sees, cannot touch the launcher or the slot's folder, and its end (exit, timeout) ends all of it."""

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


def test_runs_in_slots_pass_see_the_slot_s_folder_and_leave_no_zombie_and_no_slot(project) -> None:
    slot_project(project, {})
    result = project.cli("eval", "--runs", "12", "-j", "3", "-q")
    assert result.exit_code == 0, result.output
    got = results(project)
    assert [run.status for run, _ in got.values()] == ["pass"] * 12
    pool = project.workspaces / ".slots"
    for run, said in got.values():
        assert run.workspace == str(project.workspaces / run.session_id / "c" / str(run.k))  # back where it belongs
        assert said["cwd"] == said["workspace"] and said["cwd"].startswith(f"{pool}/") and said["cwd"].endswith("/ws")
    assert len({said["cwd"] for _, said in got.values()}) <= 3  # one slot per concurrent run, used again
    assert list(pool.iterdir()) == []  # the session's pool folder is gone with its slots
    assert [pid for pid, name in children() if name == "bwrap"] == []  # no slot's bwrap left running
    assert zombie_children() == []


def test_a_run_leaves_nothing_the_next_run_of_its_slot_sees(project) -> None:
    slot_project(project, {1: "probe", 2: "probe", 3: "hostile", 4: "probe"})
    result = project.cli("eval", "--runs", "4", "-j", "1", "-q")
    assert result.exit_code == 0, result.output
    got = results(project)
    first, again, left, after = (got[k][1] for k in (1, 2, 3, 4))
    assert len({got[k][1]["cwd"] for k in (1, 2, 4)}) == 1  # one slot served them all
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
        ("/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/fdinfo/0", "/proc/1/cwd", "/proc/1/root"),
        "Permission denied")
    assert said["hostname"] == "Operation not permitted"
    assert got[2][0].status == "pass" and got[2][1]["cwd"] == said.get("cwd", got[2][1]["cwd"])


def test_a_run_that_renices_the_launcher_is_an_error_and_its_slot_is_replaced(project) -> None:
    slot_project(project, {1: "plain", 2: "renice-launcher", 3: "probe"})
    project.config((project.root / "scarbook.yaml").read_text() + "retry_infra: 0\n")
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    got = results(project)
    run, said = got[2]
    assert said == "reniced"  # (it could: same uid; nothing without a capability can raise it back)
    assert run.status == "error"
    assert run.reason == (f"the sandbox slot failed (command: {sys.executable} {project.root / 'agent.py'}): the run "
                          "lowered the launcher's priority, limits, scheduling or CPU affinity")
    # the run's own doing: infra the gate does not take on the run's word (read as a fail too, as round six's claims)
    assert (run.cause.kind, run.cause.rule) == ("infra", "slot-changed-by-run")
    assert result.exit_code == 3, result.output
    assert got[3][0].status == "pass" and got[3][1]["cwd"] != got[1][1]["cwd"]  # a new slot
    assert got[3][1]["nice1"] == "0"  # whose launcher is not reniced
    assert (Path(run.workspace) / "result.json").exists()  # its folder is back, nothing lost


def test_a_run_sees_no_other_run_or_slot_and_cannot_change_its_slot_s_folder(project) -> None:
    marker = Path("/tmp") / f"scar-host-{os.getpid()}"
    marker.touch()
    try:
        slot_project(project, {k: "peek" for k in range(1, 5)})
        result = project.cli("eval", "--runs", "4", "-j", "2", "-q")
    finally:
        marker.unlink()
    assert result.exit_code == 0, result.output
    for _run, said in results(project).values():
        assert said["workspaces"] == [".slots"]  # no session, no other run, no history
        assert len(said["pool"]) == 1 and said["pool"][0] not in ("", "lock")  # its own slot only
        assert marker.name not in said["tmp"]  # a tmpfs (where only the project, under /tmp here, is shown again)
        assert {k: said[k] for k in ("write-slot-folder", "rename-ws", "replace-io-file", "link-in-io",
                                     "chmod-slot-folder")} == {
            "write-slot-folder": "Permission denied", "rename-ws": "Permission denied",
            "replace-io-file": "Permission denied", "link-in-io": "Permission denied",
            "chmod-slot-folder": "Operation not permitted"}


def test_a_timeout_kills_the_run_through_its_pidfd_and_the_slot_serves_on(project) -> None:
    slot_project(project, {1: "probe", 2: "sleeper", 3: "probe"}, timeout_s=1)
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    got = results(project)
    assert got[2][0].status == "fail" and got[2][0].reason == "timed out after 1s"
    assert result.exit_code == 1, result.output
    assert got[3][1]["cwd"] == got[1][1]["cwd"]  # the same slot
    assert got[3][1]["procs"] == got[1][1]["procs"] == []  # its setsid daemon went with it


def test_an_agent_killed_by_a_signal_in_a_slot_reads_as_killed(project) -> None:
    slot_project(project, {1: "segv"}, keep="failed")
    result = project.cli("eval", "--runs", "1", "-q")
    (run, _said), = results(project).values()
    assert result.exit_code == 1, result.output
    assert run.status == "fail"
    assert run.reason == "agent was killed by signal 11 [in the sandbox: only the workspace is writable; no network]"


def test_a_write_by_the_path_the_agent_saw_in_its_slot_is_inside_its_workspace(project) -> None:
    """The agent's cwd is its slot's folder: a tool call's absolute path under it is read as the workspace's
    (no_writes_outside), and its transcript reaches the run's own file."""
    slot_project(project, {1: "writes-absolute"}, agent_extra=", transcript: true",
                 checks="  - {type: no_writes_outside, paths: [out.txt]}\n")
    result = project.cli("eval", "--runs", "1", "-q")
    (run, said), = results(project).values()
    assert "/.slots/" in said["cwd"]
    assert result.exit_code == 0, (result.output, run.reason)
    assert run.status == "pass" and run.transcript_path == str(Path(run.workspace).parent / "1.transcript.jsonl")
