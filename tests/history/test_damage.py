"""Damaged history never crashes or hangs a command: each bad file is named with its fix, and the rest
of the history stays readable. One row per bad input, the exact message beside it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from scarbook.history.store import History
from tests.history.test_nothing_lost import forget_recorded

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
CASE = "write-one-line"


@pytest.fixture
def two_sessions(project):
    """Sessions `old` and `new` of three runs each of the bundled write-one-line case."""
    project.bundled(agent_seed=7)  # 3 of 3 runs pass in each session
    for label in ("old", "new"):
        assert project.cli("eval", CASE, "--runs", "3", "-q", "-l", label).exit_code == 0
    old, new = sorted(History(project.workspaces).sessions(), key=lambda s: s.label == "new")
    return project, old, new


@pytest.fixture(autouse=True)
def no_hang():
    """A command that blocks (on a FIFO, say) fails the test instead of hanging it."""
    def timeout(*_):
        raise TimeoutError("the command hung")
    old = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _session_json(folder: Path) -> Path:
    return folder / "session.json"


def _set_field(folder: Path, key: str, value) -> None:
    path = _session_json(folder)
    doc = json.loads(path.read_text())
    doc["session"]["1"][key] = value
    path.write_text(json.dumps(doc))


def _append(folder: Path, line: bytes) -> None:
    with open(folder / f"runs-{CASE}.jsonl", "ab") as fh:
        fh.write(line + b"\n")


def _replace_runs(folder: Path, make) -> None:
    path = folder / f"runs-{CASE}.jsonl"
    path.unlink()
    make(path)


DAMAGE = {"mv": "move it aside to silence this: mv {p} {p}.damaged"}
SJ, RF = "{folder}/session.json", "{folder}/runs-write-one-line.jsonl"
LINE4 = "— the runner never writes that (forged or damaged); delete it to silence this: sed -i '4d' {p}"

# (what is done to the NEW session's folder, the file the message names, the message after "history: ",
#  how many of the new session's runs still count (None: the session is not listed))
ROWS = [
    pytest.param(lambda f: _session_json(f).write_bytes(b"\xff\xfe{}"), SJ,
                 "history file {p} is damaged (not UTF-8 text: byte 0xff at offset 0); the other sessions are "
                 "unaffected — " + DAMAGE["mv"], None, id="session-json-not-utf8"),
    pytest.param(lambda f: _session_json(f).write_text("[]"), SJ,
                 "history file {p} is damaged (it is not a TinyDB file of tables of records); the other sessions "
                 "are unaffected — " + DAMAGE["mv"], None, id="session-json-list"),
    pytest.param(lambda f: _set_field(f, "runs_per_case", "three"), SJ,
                 "history file {p} is damaged (field runs_per_case is a string, not an integer); the other "
                 "sessions are unaffected — " + DAMAGE["mv"], None, id="session-json-wrong-type"),
    pytest.param(lambda f: _set_field(f, "case_ids", None), SJ,
                 "history file {p} is damaged (field case_ids is null, not a list of case ids); the other "
                 "sessions are unaffected — " + DAMAGE["mv"], None, id="session-json-null-case-ids"),
    pytest.param(lambda f: (_session_json(f).unlink(), os.mkfifo(_session_json(f))), SJ,
                 "history file {p} is damaged (it is a FIFO, not a file); the other sessions are unaffected — "
                 + DAMAGE["mv"], None, id="session-json-fifo"),
    pytest.param(lambda f: _session_json(f).unlink(), "{folder}",
                 "history folder {p} has runs (runs-write-one-line.jsonl) but no session.json (deleted?): its runs "
                 "are not listed — restore session.json, or move the folder aside to silence this: "
                 "mv {p} {p}.damaged", None, id="session-json-deleted"),
    pytest.param(lambda f: _append(f, b"{}"), RF,
                 "history file {p} line 4 is not counted: it lacks session_id, case_id, k, status, reason " + LINE4,
                 3, id="runs-line-empty-object"),
    pytest.param(lambda f: _append(f, b'{"session_id": "x", "case_id": "y", "k": "2", "status": "pass", '
                                      b'"reason": "ok"}'), RF,
                 "history file {p} line 4 is not counted: field k is a string, not an integer " + LINE4,
                 3, id="runs-line-wrong-type"),
    pytest.param(lambda f: _append(f, b"\xff\xfe"), RF,
                 "history file {p} line 4 is not counted: it is not UTF-8 text " + LINE4, 3, id="runs-line-not-utf8"),
    pytest.param(lambda f: _replace_runs(f, Path.mkdir), RF,
                 "history file {p} is damaged (it is a directory, not a file); the other sessions are unaffected — "
                 + DAMAGE["mv"], 0, id="runs-file-directory"),
    pytest.param(lambda f: _replace_runs(f, os.mkfifo), RF,
                 "history file {p} is damaged (it is a FIFO, not a file); the other sessions are unaffected — "
                 + DAMAGE["mv"], 0, id="runs-file-fifo"),
]


@pytest.mark.parametrize("damage, named, message, new_runs", ROWS)
def test_damaged_history_is_named_and_the_rest_stays_readable(two_sessions, damage, named: str, message: str,
                                                              new_runs: int | None) -> None:
    project, old, new = two_sessions
    folder = project.workspaces / "history" / new.id
    damage(folder)
    expected = "history: " + message.format(p=named.format(folder=folder)) + "\n"

    result = project.cli("sessions")
    assert (result.exit_code, result.stderr) == (0, expected)
    rows = {ln.split()[0]: ln.split()[1:4] for ln in result.stdout.splitlines()[1:]}
    assert rows[old.id] == ["old", "finished", "3"]
    assert rows.get(new.id) == (None if new_runs is None else ["new", "finished", str(new_runs)])

    listed = project.cli("list")
    assert (listed.exit_code, listed.stderr) == (0, expected)
    row = next(ln for ln in listed.stdout.splitlines() if ln.startswith(CASE))
    # The new session's good runs give the rate; when none is left, no rate (not the old session's);
    # a session that cannot be read at all is not listed, and the old one is the latest.
    assert (row.split()[1] == "–") == (new_runs == 0)

    shown = project.cli("show", CASE, "--session", "old")
    assert shown.exit_code == 0 and shown.stdout.count("\nrun ") == 3

    if new_runs is not None:  # diff reads both sessions' runs files
        diffed = project.cli("diff", "old", "new")
        assert (diffed.exit_code, diffed.stderr) == (0, expected)
        assert f"A = {old.id} old\nB = {new.id} new\n" in diffed.stdout


def test_an_unreadable_runs_file_is_named_with_the_fix(two_sessions) -> None:
    """EACCES for real: the tests run as root, who may read anything, so `scarbook sessions` runs in a
    user namespace of its own (unshare --user), where root's files are owned by an unmapped user and
    permission bits apply again."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "--user", "true"]).returncode != 0:
        pytest.skip("no user namespaces here")
    project, old, new = two_sessions
    runs_file = project.workspaces / "history" / new.id / f"runs-{CASE}.jsonl"
    runs_file.chmod(0)
    for p in [project.root, *project.root.parents]:  # the namespace's user must reach the project
        p.chmod(p.stat().st_mode | 0o005)
    out = subprocess.run(["unshare", "--user", *SCARBOOK, "-C", str(project.root), "sessions"],
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr) == (
        0, f"history: history file {runs_file} cannot be read (Permission denied); the other sessions are "
           f"unaffected — let yourself read it (chmod u+r {runs_file}) or move it aside: "
           f"mv {runs_file} {runs_file}.damaged\n")
    rows = {ln.split()[0]: ln.split()[1:4] for ln in out.stdout.splitlines()[1:]}
    assert rows == {old.id: ["old", "finished", "3"], new.id: ["new", "finished", "0"]}


def test_report_says_a_truncated_runs_file_was_read_in_part_as_list_does(project):
    # issue 25 (7): `report` showed 3 of 4 runs with no warning and exit 0; `list` flagged the file
    project.bundled(agent_seed=7)
    assert project.cli("eval", "write-one-line", "--runs", "4", "-q").exit_code == 0
    (runs_file,) = (project.workspaces / "history").glob("*/runs-write-one-line.jsonl")
    runs_file.write_bytes(runs_file.read_bytes()[:-40])  # the last run cut by a crash,
    forget_recorded(runs_file.parent)  # before the session could record its end
    sid = runs_file.parent.name
    listed, report = project.cli("list"), project.cli("report")
    problem = (f"history: history file {runs_file} ends in a half-written run (line 4, cut by a crash); the 3 "
               f"complete runs before it are kept — delete that line to silence this: sed -i '$d' {runs_file}")
    assert listed.stderr.strip() == problem
    assert report.stderr.strip() == problem
    assert report.exit_code == 0
    assert report.stdout.strip().splitlines()[-1] == (f"damaged: this report counts only the 3 runs of session "
                                                      f"{sid} that could be read — see the history lines on stderr")


@pytest.mark.parametrize(("command", "code"), [
    (["sessions"], 0), (["list"], 0), (["trends"], 0), (["show", CASE], 2), (["report"], 2), (["diff"], 2),
    (["calibrate", "--report"], 2),
])
def test_a_file_where_the_history_folder_should_be_is_named_by_every_reader(project, command, code) -> None:
    """It was "no sessions yet", or "…/history/case-ids.json cannot be read: Not a directory — move it aside
    (mv …/history/case-ids.json …)", a fix that cannot work: the file in the folder's place is the problem."""
    project.bundled()
    history = project.workspaces / "history"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text("not a folder")
    res = project.cli(*command)
    assert res.exit_code == code, res.output
    message = (f"{history} is a file, not a folder: scarbook keeps the run history in that folder — move the file "
               f"aside (mv {history} {history}.damaged); the next `scarbook eval` starts a new history there")
    prefix = "scarbook: " if code == 2 else "history: "
    assert res.stderr.splitlines().count(prefix + message) == 1, res.stderr


@pytest.mark.skipif(os.name == "nt", reason="POSIX file bits")
@pytest.mark.parametrize(("command", "code"), [
    (["sessions"], 0), (["list"], 0), (["trends"], 0), (["rubric", "stats"], 0), (["show", CASE], 2), (["report"], 2),
    (["diff"], 2), (["baseline", "set"], 2), (["calibrate", "--report"], 2),
])
def test_a_history_folder_closed_to_the_user_is_named_by_every_reader(project, command, code) -> None:
    """A history folder this user cannot read was a PermissionError traceback from list, sessions, trends and rubric
    stats (Path.exists raised it), and `show` said to move case-ids.json aside, which it could not even see."""
    from tests.helpers.hostile_project import without_dac_override

    project.bundled()
    assert project.cli("eval", "-q", "-n", "1", CASE).exit_code in (0, 1, 3)
    history = project.workspaces / "history"
    argv = without_dac_override([*SCARBOOK, "-C", str(project.root), *command])
    history.chmod(0)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        history.chmod(0o755)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, done.stderr
    message = (f"{history} is a folder this user cannot read: scarbook keeps the run history in that folder — let "
               f"yourself read it (chmod u+rx {history}), or run scarbook as its owner")
    prefix = "scarbook: " if code == 2 else "history: "
    assert done.stderr.splitlines().count(prefix + message) == 1, done.stderr
