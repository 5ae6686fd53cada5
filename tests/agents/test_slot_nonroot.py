"""isolation: slot where scarbook is not root: `scarbook eval` in a subprocess run by nobody (setpriv) on a project
nobody owns. Slots need no root now (the launcher's capabilities are its own user namespace's): the run sees its
own folder at its real path and no other, holds no capability, cannot reach its launcher, and leaves nothing the
next run of its slot sees — as under root (test_slot.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.test_slot import NO_CAPABILITY, check_peeked
from tests.agents.test_slot import pytestmark as slot_marks
from tests.conftest import DEFAULT_CONFIG, ProjectDir
from tests.helpers.slot_agents import results, slot_project

NOBODY = 65534
SCARBOOK = Path(sys.executable).parent / "scarbook"
pytestmark = [*slot_marks, pytest.mark.skipif(
    shutil.which("setpriv") is None or shutil.which("unshare") is None or not hasattr(os, "geteuid")
    or os.geteuid() != 0, reason="becoming another user needs root, setpriv and unshare (util-linux)")]


@pytest.fixture
def nobody_project() -> Iterator[ProjectDir]:
    """A project in a folder of nobody's own (pytest's tmp_path is root's alone), with a home of nobody's."""
    top = Path(tempfile.mkdtemp(prefix="scarbook-nobody-", dir="/tmp"))
    try:
        project = ProjectDir(top / "proj")
        project.cases_dir.mkdir(parents=True)
        (top / "home").mkdir()
        project.config(DEFAULT_CONFIG)
        yield project
    finally:
        shutil.rmtree(top, ignore_errors=True)


def closed_folder() -> tuple[Path, Path] | None:
    """(a folder others cannot enter, its child on the way to this Python): /root and /root/.pyenv where pyenv
    installed it for root. None when the way is open."""
    here = Path(os.path.realpath(sys.base_prefix))
    for folder in reversed(here.parents):
        if not os.stat(folder).st_mode & 0o001:
            return folder, folder / here.relative_to(folder).parts[0]
    return None


def eval_as_nobody(project: ProjectDir, *args: str) -> subprocess.CompletedProcess:
    """`scarbook eval` run by nobody. Where this Python lives in a folder only root enters, in a mount namespace
    of the test's own where that folder is an open tmpfs holding only the way to it (nothing else of root's)."""
    top = project.root.parent
    for folder, dirs, files in os.walk(top):
        for name in (folder, *(os.path.join(folder, n) for n in dirs + files)):
            os.chown(name, NOBODY, NOBODY, follow_symlinks=False)
    top.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "HOME": str(top / "home"), "LANG": "C.UTF-8"}
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
            str(SCARBOOK), "-C", str(project.root), "eval", *args]
    closed = closed_folder()
    if closed is not None:
        folder, way = closed
        aside = top / "aside"
        aside.mkdir()
        script = (f'mount --bind "{way}" "{aside}" && mount -t tmpfs -o mode=0755 tmpfs "{folder}" && '
                  f'mkdir "{way}" && mount --bind "{aside}" "{way}" && exec "$@"')
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *argv]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


def test_as_nobody_runs_in_slots_see_their_own_folder_hold_no_capability_and_leave_nothing(nobody_project) -> None:
    project = nobody_project
    slot_project(project, {1: "probe", 2: "peek", 3: "hostile", 4: "probe", 5: "at-launcher", 6: "plain"})
    done = eval_as_nobody(project, "--runs", "6", "-j", "1", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "isolation: slot —" not in done.stderr  # slots, not one bwrap a run
    got = results(project)
    assert [run.status for run, _ in got.values()] == ["pass"] * 6
    assert len({said["slot"] for _, said in got.values()}) == 1 and got[6][1]["pid1"] == "python3"
    check_peeked(project, got[2][1], got[2][0])
    assert got[2][1]["caps"] == NO_CAPABILITY
    first, left, after = got[1][1], got[3][1], got[4][1]
    assert {"file", "dir"} <= set(left["/tmp"])  # the hostile run could leave all this...
    keys = ("procs", "roots", "sysv", "keys", "persistent", "abstract", "tcp", "unix-names", "mq", "nice1")
    assert {k: after[k] for k in keys} == {k: first[k] for k in keys}  # ...and the next run sees none of it
    at = got[5][1]
    assert at["state"] != "T" and (at["ptrace-attach"], at["ptrace-seize"]) == ("Operation not permitted",) * 2
    assert at["/proc/1/ns/mnt"] == at["/proc/1/root"] == at["/proc/1/environ"] == "Permission denied"
    for run, _said in got.values():
        assert os.stat(run.workspace).st_uid == NOBODY  # (nothing of root's was made for it)
