"""Issue 25 (9): places scarbook must write that it cannot — the history folder, cases/, a report path.
Before any run: one message naming the path and the fix, exit 2, no run started. Mid-session: exit 3,
crash.txt (beside the workspaces when the history refuses it), and nothing recorded is lost.

Read-only for real: the tests run as root here, and root ignores permission bits, so a folder is made
read-only with a read-only bind mount in a private mount namespace (`unshare -m`), which refuses root
too and vanishes with the process; as any other user, chmod does it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.run.session import NONE_NOTE
from tests.helpers.paths import FIXTURES

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
RO_BIND = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'


def _private_mounts_work() -> bool:
    if not sys.platform.startswith("linux") or not (shutil.which("unshare") and shutil.which("mount")):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", RO_BIND, "sh", "/tmp", "true"], capture_output=True)
    return probe.returncode == 0


def _read_only(path: Path, argv: list[str]) -> list[str]:
    """`argv` run so that `path` is read-only to it (and to everything it starts)."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        return argv
    if not _private_mounts_work():
        pytest.skip("running as root without unshare/mount: no way to make a folder read-only to root")
    return ["unshare", "-m", "sh", "-c", RO_BIND, "sh", str(path), *argv]


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


MARKER_AGENT = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran'); open('tmp.txt', 'w').write('x')"


@pytest.fixture
def marked(project):
    """A project whose agent leaves a marker outside its workspace when it runs."""
    marker = project.root.parent / "agent-ran"
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', MARKER_AGENT, str(marker)])}}}\n"
                   "isolation: none\n")
    project.case("c", "id: c\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    return project, marker


def test_a_history_folder_that_is_a_file_is_said_before_any_run(marked) -> None:
    project, marker = marked
    project.workspaces.mkdir()
    (project.workspaces / "history").write_text("not a folder")
    result = project.cli("eval", "--runs", "2", "-q")
    assert result.exit_code == 2
    history = project.workspaces / "history"
    assert result.stderr.strip() == (f"scarbook: the session history cannot be written: {history} is a file, not a "
                                     f"folder — make {history} a writable folder, or point workspaces_dir in "
                                     "scarbook.yaml at one")
    assert not marker.exists()


def test_a_read_only_history_folder_is_said_before_any_run(marked) -> None:
    project, marker = marked
    history = project.workspaces / "history"
    history.mkdir(parents=True)
    out = _run(_read_only(history, [*SCARBOOK, "-C", str(project.root), "eval", "--runs", "2", "-q"]))
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2, out.stderr
    why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert out.stderr.strip() == (f"scarbook: the session history cannot be written: cannot create files in "
                                  f"{history}: {why} — make {history} a writable folder, or point workspaces_dir "
                                  "in scarbook.yaml at one")
    assert not marker.exists()


def test_a_report_path_that_cannot_be_written_is_said_before_any_run(marked) -> None:
    project, marker = marked
    (project.root / "out").write_text("a file")
    result = project.cli("eval", "--runs", "2", "-q", "--junit", str(project.root / "out" / "r.xml"))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: --junit {project.root / 'out' / 'r.xml'} cannot be written: "
                                     f"{project.root / 'out'} is a file, not a folder — choose a writable path "
                                     "for --junit")
    assert not marker.exists()


# The agent's second run makes the history read-only under scarbook (as a disk remounted read-only
# would). Run a#1 is recorded; b#1 finishes but its runs file cannot be created (a file open before
# the remount could still be appended to), nor can session.json be rewritten at the end.
RO_AGENT = """\
import os, pathlib, subprocess, sys
count = pathlib.Path(sys.argv[1])
n = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(n))
open("tmp.txt", "w").write("x")
if n == 2:
    history = sys.argv[2]
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", "-o", "ro", history, history], check=True)
    else:
        for d in [history, *(os.path.join(history, s) for s in os.listdir(history))]:
            os.chmod(d, 0o555)
"""


def test_history_going_read_only_mid_session_exits_3_with_crash_txt_and_loses_nothing(project) -> None:
    history = project.workspaces / "history"
    argv = [sys.executable, "-c", RO_AGENT, str(project.root.parent / "count"), str(history)]
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\nisolation: none\nconcurrency: 1\n")
    for cid in ("a", "b"):
        project.case(cid, f"id: {cid}\ntask: write tmp.txt\nchecks: [{{type: file_exists, path: tmp.txt}}]\n")
    cmd = [*SCARBOOK, "-C", str(project.root), "eval", "--runs", "2", "-q"]
    if os.geteuid() == 0:
        if not _private_mounts_work():
            pytest.skip("running as root without unshare/mount: no way to make a folder read-only to root")
        cmd = ["unshare", "-m", *cmd]  # the agent's mount stays in this private namespace
    out = _run(cmd)
    try:
        assert "Traceback" not in out.stderr, out.stderr
        assert out.returncode == 3, out.stderr
        (info,) = History(project.workspaces).sessions()
        folder = history / info.id
        crash = project.workspaces / info.id / "crash.txt"
        unrecorded = project.workspaces / info.id / "unrecorded-runs.jsonl"
        why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
        assert out.stderr.splitlines()[0] == f"warning: {NONE_NOTE}"  # isolation: none, said first (issue 25.1)
        assert out.stderr.splitlines()[1] == (
            f"scarbook: session crashed: HistoryError: could not record run b#1 in {folder}: {why} — make that "
            f"folder writable (the runs recorded before it are kept) — traceback in {crash}; 1 finished run "
            f"history could not take are in {unrecorded}; the session record could not be written: "
            f"HistoryError: could not write {folder / 'session.json'}: {why} — make that folder writable (the "
            "runs recorded so far are kept)"), out.stderr
        assert "could not record run b#1" in crash.read_text()
        (saved,) = [json.loads(line) for line in unrecorded.read_text().splitlines()]
        assert (saved["case_id"], saved["k"], saved["status"]) == ("b", 1, "pass")
        (run,) = History(project.workspaces).runs(info.id)  # a#1, recorded before, is kept
        assert (run.case_id, run.k, run.status) == ("a", 1, "pass")
    finally:
        if os.geteuid() != 0:
            for d in [history, *history.iterdir()]:
                d.chmod(0o755)


def test_import_into_a_read_only_cases_folder_is_a_clean_error(project) -> None:
    transcript = FIXTURES / "transcripts" / "scarbook_run.jsonl"
    out = _run(_read_only(project.cases_dir, [*SCARBOOK, "-C", str(project.root), "import", str(transcript),
                                              "--id", "from-log"]))
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2
    why = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert out.stderr.strip() == (f"scarbook: cannot write the draft case: cannot create files in "
                                  f"{project.cases_dir}: {why} — make {project.cases_dir} a writable folder, or "
                                  "point cases_dir in scarbook.yaml at one")
    assert not (project.cases_dir / "from-log").exists()
