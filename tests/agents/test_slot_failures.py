"""isolation: slot when things go wrong: a launcher killed mid-run, a slot that cannot start or cannot be wiped, a
scarbook SIGKILLed or interrupted mid-run, a machine without slots. The run is an error naming why (never the
agent's fail), its folder keeps what it wrote, nothing is left running, and the next run gets a new slot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scarbook.proc import slot_launcher
from tests.agents.test_slot import pytestmark as slot_marks
from tests.agents.test_slot import zombie_children
from tests.helpers.slot_agents import results, slot_project

pytestmark = slot_marks
SCARBOOK = Path(sys.executable).parent / "scarbook"


def label(project) -> str:
    return f"command: {sys.executable} {project.root / 'agent.py'}"


def live_pids(wanted) -> list[int]:
    """Processes not exited whose command line (bytes, NUL-separated) is `wanted`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z" and wanted(cmd):
                found.append(int(entry))
    return found


def slot_pids(project) -> list[int]:
    """Processes of this project's slots: its bwraps (`--as-pid-1`, binding its workspaces/) and launchers."""
    needle = str(project.workspaces).encode()
    return live_pids(lambda cmd: needle in cmd and (b"--as-pid-1" in cmd or b"slot_launcher.py" in cmd))


def agent_pids(project) -> list[int]:
    """Processes running the project's agent.py (a run and its daemon)."""
    needle = str(project.root / "agent.py").encode()
    return live_pids(lambda cmd: needle in cmd)


def launcher_of(project) -> int:
    for pid in slot_pids(project):
        if b"slot_launcher.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    kids = [int(p) for pid in slot_pids(project)
            for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    assert kids, "no launcher found"
    return kids[0]


def wait_for(predicate, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def started(project) -> list[Path]:
    return list(project.workspaces.glob("*/c/*/started"))


def test_a_launcher_killed_mid_run_is_the_run_s_error_its_folder_back_and_the_next_run_in_a_new_slot(project) -> None:
    slot_project(project, {1: "waits", 2: "plain"})
    project.config((project.root / "scarbook.yaml").read_text() + "retry_infra: 0\n")

    def kill_the_launcher() -> None:
        if wait_for(lambda: started(project)):
            os.kill(launcher_of(project), signal.SIGKILL)

    killer = threading.Thread(target=kill_the_launcher)
    killer.start()
    result = project.cli("eval", "--runs", "2", "-j", "1", "-q")
    killer.join()
    got = results(project)
    run = got[1][0]
    assert run.status == "error"
    assert run.reason == f"the sandbox slot failed ({label(project)}): the slot's launcher is gone"
    assert (run.cause.kind, run.cause.rule) == ("infra", "sandbox-slot-failed")  # the machine's, seen by scarbook
    assert (Path(run.workspace) / "kept.txt").read_text() == "kept"  # its folder holds what it wrote
    assert got[2][0].status == "pass"
    assert result.exit_code == 3, result.output
    assert slot_pids(project) == [] and zombie_children() == []


def test_a_slot_that_cannot_start_makes_each_run_an_error_naming_why(project, tmp_path, monkeypatch) -> None:
    from scarbook.agents.sandbox import find_bwrap

    fake = tmp_path / "bwrap"
    fake.write_text(f'#!/bin/sh\ncase " $* " in *" --as-pid-1 "*) echo "bwrap: no slot today" >&2; exit 1;; esac\n'
                    f'exec {find_bwrap()} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("SCARBOOK_BWRAP", str(fake))
    slot_project(project, {})
    project.config((project.root / "scarbook.yaml").read_text() + "retry_infra: 0\n")
    result = project.cli("eval", "--runs", "2", "-j", "1", "-q")
    assert result.exit_code == 3, result.output
    for run, _said in results(project).values():
        assert run.status == "error"
        assert run.reason == f"the sandbox slot failed ({label(project)}): the sandbox slot did not start: bwrap: no slot today"
    assert zombie_children() == []


def test_a_run_that_leaves_what_cannot_be_wiped_is_an_error_and_the_slot_is_replaced(project) -> None:
    slot_project(project, {1: "plain", 2: "deep", 3: "plain"})
    project.config((project.root / "scarbook.yaml").read_text() + "retry_infra: 0\n")
    result = project.cli("eval", "--runs", "3", "-j", "1", "-q")
    got = results(project)
    assert got[2][0].status == "error"
    assert got[2][0].reason == (f"the sandbox slot failed ({label(project)}): the run left what the launcher could not "
                                "wipe (maximum recursion depth exceeded while calling a Python object)")
    assert got[2][0].cause.rule == "slot-changed-by-run"
    assert got[3][0].status == "pass" and got[3][1]["slot"] != got[1][1]["slot"]
    assert result.exit_code == 3, result.output


def eval_until_the_run_waits(project, then: signal.Signals) -> None:
    """`scarbook eval` of one waiting run in a subprocess, sent `then` once its run has started in a slot."""
    slot_project(project, {1: "waits"})
    proc = subprocess.Popen([str(SCARBOOK), "-C", str(project.root), "eval", "--runs", "1", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: started(project)), "the run never started"
        proc.send_signal(then)
        proc.wait(30)
    finally:
        proc.kill()
        proc.wait()


def test_a_sigkilled_scarbook_leaves_no_process_and_the_run_s_folder_in_place(project) -> None:
    eval_until_the_run_waits(project, signal.SIGKILL)
    (session,) = [p for p in project.workspaces.iterdir() if p.name != "history"]
    assert wait_for(lambda: slot_pids(project) == [], within=10), slot_pids(project)  # --die-with-parent
    assert wait_for(lambda: agent_pids(project) == [], within=10), agent_pids(project)  # its setsid daemon too
    assert (session / "c" / "1" / "kept.txt").read_text() == "kept"  # never moved: nothing to put back
    assert sorted(p.name for p in project.workspaces.iterdir()) == sorted([session.name, "history"])


def test_ctrl_c_mid_run_stops_the_slots_and_leaves_the_run_s_folder_in_place(project) -> None:
    eval_until_the_run_waits(project, signal.SIGINT)
    assert slot_pids(project) == [] and agent_pids(project) == []
    (session,) = [p for p in project.workspaces.iterdir() if p.name != "history"]
    assert (session / "c" / "1" / "kept.txt").read_text() == "kept"



def test_where_the_launcher_does_not_know_the_machine_each_run_gets_its_own_bwrap(project, monkeypatch) -> None:
    monkeypatch.setattr(slot_launcher, "SYSCALLS", {"riscv64": {}})
    slot_project(project, {})
    result = project.cli("eval", "--runs", "2", "-j", "2")
    assert result.exit_code == 0, result.output
    assert (f"isolation: slot — no sandbox slots on {os.uname().machine} (the launcher knows riscv64), so each run "
            "gets a bwrap of its own (isolation: sandbox)") in result.stderr
    for run, said in results(project).values():
        assert said["cwd"] == run.workspace and said["pid1"] == "bwrap"  # a bwrap of its own


def test_where_bwrap_cannot_make_a_user_namespace_each_run_gets_its_own_bwrap_said_once(project, tmp_path,
                                                                                        monkeypatch) -> None:
    from scarbook.agents.sandbox import find_bwrap

    fake = tmp_path / "bwrap"  # as bwrap where unprivileged user namespaces are disabled (a per-run bwrap as root needs none)
    fake.write_text(f'#!/bin/sh\ncase " $* " in *" --unshare-user "*) echo "bwrap: No permissions to create new '
                    f'namespace" >&2; exit 1;; esac\nexec {find_bwrap()} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("SCARBOOK_BWRAP", str(fake))
    slot_project(project, {})
    result = project.cli("eval", "--runs", "3", "-j", "2")
    assert result.exit_code == 0, result.output
    note = ("isolation: slot — sandbox slots need a user namespace of their own, and bwrap could not make one (bwrap: "
            "No permissions to create new namespace), so each run gets a bwrap of its own (isolation: sandbox)")
    assert result.stderr.count(note) == 1, result.stderr
    assert {said["pid1"] for _run, said in results(project).values()} == {"bwrap"}


@pytest.mark.parametrize("machine, known", [("x86_64", True), ("aarch64", True), ("riscv64", False)])
def test_the_launcher_knows_its_syscalls_on_x86_64_and_aarch64(machine, known) -> None:
    assert slot_launcher.supported(machine) is known
    if known:
        assert set(slot_launcher.SYSCALLS[machine]) == {"keyctl", "ioprio_get"}
