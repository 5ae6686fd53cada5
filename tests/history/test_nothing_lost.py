"""Nothing lost: Ctrl-C keeps finished runs, two scarbook processes share one history, and a damaged
history file is reported by name while the other sessions stay visible."""

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
from tests.helpers.proc_helpers import alive as _alive

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]


def _recorded(root: Path) -> int:
    """Complete run lines in the runs files (what a reader would get right now)."""
    n = 0
    for path in (root / "workspaces" / "history").glob("*/runs-*.jsonl"):
        try:
            n += path.read_bytes().count(b"\n")
        except OSError:
            pass
    return n


@pytest.mark.needs_proc
def test_ctrl_c_keeps_finished_runs_and_kills_running_agents(project) -> None:
    pids = project.root / "pids"
    pids.mkdir()
    agent = project.root / "slow_agent.py"
    agent.write_text("import os, sys, time\n"
                     "open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\n"
                     "time.sleep(0.3 if int(os.environ['SCARBOOK_RUN']) <= 3 else 60)\n"  # runs 4+ hang
                     "open('tmp.txt', 'w').write('ok\\n')\nprint('done')\n")
    # isolation: none — the agents note their pids outside their workspaces, for the test to check
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}, {pids}]}}\nconcurrency: 2\n"
                   "isolation: none\n")
    project.case("slow", "id: slow\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "--runs", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    # Interrupt once 3 runs are recorded and an agent is mid-run (it wrote its pid, has not finished).
    while time.monotonic() < deadline:
        done = _recorded(project.root)
        if done >= 3 and len(list(pids.iterdir())) > done:
            break
        time.sleep(0.02)
    assert _recorded(project.root) >= 3, "no runs finished in time"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, (out, err)  # a cancelled session never passes the gate
    assert "interrupted: stopping — running agents are killed, finished runs are kept" in err

    history = History(project.workspaces)
    (info,) = history.sessions()
    assert info.state == "cancelled" and info.finished_at
    runs = history.runs(info.id)
    assert len(runs) == 3 and all(r.status == "pass" for r in runs)
    assert f"session {info.id}: cancelled; {len(runs)} runs — {len(runs)} pass, 0 fail, 0 error" in out
    started = sorted(pids.iterdir())
    assert len(started) > len(runs)  # some agents were still running when Ctrl-C came
    deadline = time.monotonic() + 30  # killed at Ctrl-C: wait until they are gone (a condition), not 0.2 s
    while [p.name for p in started if _alive(int(p.name))] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [p.name for p in started if _alive(int(p.name))] == []
    # Every started run's workspace dir is still on disk; the unfinished ones were not pruned.
    case_dir = project.workspaces / info.id / "slow"
    finished = {r.k for r in runs}
    dirs = {int(d.name) for d in case_dir.iterdir() if d.is_dir()}
    assert dirs & finished == set()  # the passing finished runs were pruned as usual
    assert len(dirs) >= len(started) - len(runs) >= 1  # the interrupted ones were kept
    sessions = subprocess.run([*SCARBOOK, "-C", str(project.root), "sessions"], capture_output=True, text=True)
    assert sessions.stdout.splitlines()[1].split()[1:3] == ["cancelled", str(len(runs))]


def test_two_processes_record_into_one_history(project) -> None:
    project.bundled()
    env = {**os.environ, "SCARBOOK_DEMO_DELAY": "0"}
    procs = [subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "--runs", "10", "-q", "-l", label],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for label in ("left", "right")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    history = History(project.workspaces)
    sessions = history.sessions()
    assert sorted(s.label for s in sessions) == ["left", "right"] and sessions.problems == []
    assert len({s.id for s in sessions}) == 2
    for s in sessions:
        assert s.state == "finished"
        runs = history.runs(s.id)
        assert len(runs) == 40
        assert {(r.case_id, r.k) for r in runs} == {(c, k) for c in s.case_ids for k in range(1, 11)}
        assert sum(r.status == "pass" for r in runs) == 35
    for path in (project.workspaces / "history").rglob("session.json"):
        json.loads(path.read_text())  # every file is whole
    runs_files = list((project.workspaces / "history").rglob("runs-*.jsonl"))
    assert len(runs_files) == 8
    for path in runs_files:  # ten whole lines each (in finishing order), none torn or interleaved
        text = path.read_text()
        assert text.endswith("\n") and sorted(json.loads(line)["k"] for line in text.splitlines()) == list(range(1, 11))
    assert not list((project.workspaces / "history").rglob("*.tmp"))


def _cut_last_line(path: Path) -> None:
    """Leave the file as a machine crash mid-append would: the last run's line half written, and no count
    of the runs recorded in session.json (a session writes it when it ends, which a crashed one never did)."""
    text = path.read_text()
    last = text.rstrip("\n").rfind("\n") + 1
    path.write_text(text[:last + (len(text) - last) // 2])
    forget_recorded(path.parent)


def forget_recorded(folder: Path) -> None:
    """session.json as a session that never reached its end leaves it: no `recorded` counts (issue 33.14)."""
    doc = json.loads((folder / "session.json").read_text())
    doc["session"]["1"].pop("recorded", None)
    (folder / "session.json").write_text(json.dumps(doc))


def _old_and_new(project):
    """Two sessions of three runs, labelled old and new, and the old one's runs file."""
    project.bundled()
    project.cli("eval", "write-one-line", "--runs", "3", "-q", "-l", "old")
    project.cli("eval", "write-one-line", "--runs", "3", "-q", "-l", "new")
    old, new = sorted(History(project.workspaces).sessions(), key=lambda s: s.label == "new")
    return old, new, project.workspaces / "history" / old.id / "runs-write-one-line.jsonl"


def test_a_runs_file_cut_by_a_crash_keeps_its_complete_runs_and_says_so(project) -> None:
    old, new, runs_file = _old_and_new(project)
    kept = sorted(json.loads(line)["k"] for line in runs_file.read_text().splitlines()[:2])  # in finishing order
    _cut_last_line(runs_file)
    cut = (f"history file {runs_file} ends in a half-written run (line 3, cut by a crash); the 2 complete runs "
           f"before it are kept — delete that line to silence this: sed -i '$d' {runs_file}")

    result = project.cli("sessions")
    assert (result.exit_code, result.stderr) == (0, f"history: {cut}\n")
    rows = result.stdout.splitlines()[1:]
    assert rows[0].split()[:4] == [new.id, "new", "finished", "3"]
    assert rows[1].split()[:4] == [old.id, "old", "finished", "2"]

    shown = project.cli("show", "write-one-line", "--session", "old")
    assert (shown.exit_code, shown.stderr) == (0, f"history: {cut}\n")
    assert [ln.split(":")[0] for ln in shown.stdout.splitlines() if ln.startswith("run ")] == [f"run {k}" for k in kept]
    assert [r.k for r in History(project.workspaces).runs(old.id)] == kept

    # The fix the message gives works: after it the file reads clean.
    subprocess.run(["sed", "-i", "$d", str(runs_file)], check=True)
    again = History(project.workspaces).runs(old.id)
    assert [r.k for r in again] == kept and again.problems == []


def test_a_line_being_written_by_a_live_session_is_not_reported_as_a_crash(tmp_path: Path) -> None:
    from scarbook.models import RunRecord, SessionInfo

    writer = History(tmp_path)
    info = SessionInfo(id=writer.new_session_id(), started_at="2026-12-03T08:00:00+00:00", case_ids=["c"])
    writer.start_session(info)  # holds the session's lock, as a recording process does
    writer.record_run(RunRecord(session_id=info.id, case_id="c", k=1, status="pass", reason="ok"))
    runs_file = tmp_path / "history" / info.id / "runs-c.jsonl"
    with open(runs_file, "a") as fh:
        fh.write('{"session_id": "' + info.id + '", "case_id": "c", "k": 2, "sta')  # an append in flight
    reader = History(tmp_path)
    live = reader.runs(info.id)
    assert [r.k for r in live] == [1] and live.problems == []
    writer.finish_session(info)  # the session is over: now a cut line can only be a crash's
    ended = reader.runs(info.id)
    assert [r.k for r in ended] == [1]
    assert [str(p) for p in ended.problems] == [
        f"history file {runs_file} ends in a half-written run (line 2, cut by a crash); the complete run "
        f"before it is kept — delete that line to silence this: sed -i '$d' {runs_file}"]


def test_a_damaged_line_is_reported_by_name_and_others_still_show(project) -> None:
    old, new, runs_file = _old_and_new(project)
    lines = runs_file.read_text().splitlines(keepends=True)
    runs_file.write_text(lines[0] + '{"k": 2,\n' + lines[2])  # a run in the middle is not whole
    kept = sorted(json.loads(lines[i])["k"] for i in (0, 2))
    damaged = (f"history file {runs_file} line 2 is not counted: it is not JSON (Expecting property name enclosed "
               f"in double quotes: column 9) — the runner never writes that (forged or damaged); delete it to "
               f"silence this: sed -i '2d' {runs_file}")

    # issue 33.14: the session recorded 3 runs of the case when it ended; 2 count, so it has no verdict there
    short = (f"history file {runs_file} holds 2 runs of case write-one-line, but session {old.id} recorded 3 when "
             "it ended — 1 was deleted or left out (forged or damaged): the session is damaged and case "
             "write-one-line has no verdict in it")
    result = project.cli("sessions")
    assert result.exit_code == 0
    assert result.stderr == f"history: {damaged}\nhistory: {short}\n"
    rows = result.stdout.splitlines()[1:]
    assert rows[0].split()[:4] == [new.id, "new", "finished", "3"]
    assert rows[1].split()[:4] == [old.id, "old", "finished", "3"]  # the two whole runs, and the missing one unjudged

    shown = project.cli("show", "write-one-line", "--session", "old")
    assert (shown.exit_code, shown.stderr) == (0, f"history: {damaged}\nhistory: {short}\n")
    shown_runs = [ln.split(":")[0] for ln in shown.stdout.splitlines() if ln.startswith("run ")]
    missing = min({1, 2, 3} - set(kept))  # the damaged line's run, shown unjudged under the first k not counted
    assert shown_runs == [f"run {k}" for k in sorted([*kept, missing])]

    # A damaged session.json: that session is reported, the other still listed and used by `list`.
    session_file = project.workspaces / "history" / new.id / "session.json"
    session_file.write_text(session_file.read_text()[:40])
    result = project.cli("sessions")
    assert result.stderr.startswith(f"history: history file {session_file} is damaged (")
    assert [r.split()[0] for r in result.stdout.splitlines()[1:]] == [old.id]
    listed = project.cli("list")
    assert f"history: history file {session_file} is damaged (" in listed.stderr
    assert f"history: {damaged}" in listed.stderr  # list fell back to the old session, and said so
    assert listed.exit_code == 0


def test_each_read_keeps_its_own_problems(project) -> None:
    """Two readers of one History (the TUI reads on threads): the listing one makes does not wipe the
    problems another's read of a runs file found — each read returns its own."""
    old, new, runs_file = _old_and_new(project)
    lines = runs_file.read_text().splitlines(keepends=True)
    runs_file.write_text(lines[0] + "not json\n" + lines[2])
    history = History(project.workspaces)
    runs = history.runs(old.id)
    listed = history.sessions()  # another reader, meanwhile
    assert [s.id for s in listed] == [new.id, old.id] and listed.problems == []
    assert len(runs) == 3 and [str(p) for p in runs.problems] == [  # 2 that count, 1 missing (issue 33.14)
        f"history file {runs_file} line 2 is not counted: it is not JSON (Expecting value: column 1) — the runner "
        f"never writes that (forged or damaged); delete it to silence this: sed -i '2d' {runs_file}",
        f"history file {runs_file} holds 2 runs of case write-one-line, but session {old.id} recorded 3 when it "
        "ended — 1 was deleted or left out (forged or damaged): the session is damaged and case write-one-line has "
        "no verdict in it"]


def _one_session(project):
    """One session of two runs: the history, the session, and its runs file."""
    project.bundled()
    project.cli("eval", "write-one-line", "--runs", "2", "-q")
    history = History(project.workspaces)
    (info,) = history.sessions()
    return history, info, project.workspaces / "history" / info.id / "runs-write-one-line.jsonl"


def test_runs_files_of_earlier_versions_are_still_read(project) -> None:
    history, info, new_file = _one_session(project)
    docs = {str(n): json.loads(line) for n, line in enumerate(new_file.read_text().splitlines(), 1)}
    new_file.unlink()
    (new_file.parent / "runs-write-one-line.json").write_text(json.dumps({"_default": docs}))
    assert [(r.case_id, r.k) for r in history.runs(info.id)] == [("write-one-line", 1), ("write-one-line", 2)]
    assert [r.k for r in history.runs(info.id, "write-one-line")] == [1, 2]
    assert "write-one-line" in history.latest_by_case(["write-one-line"])


def test_empty_history_file_is_not_a_silent_empty_history(project) -> None:
    history, info, runs_file = _one_session(project)
    runs_file.write_text("")
    listed = project.cli("list")
    assert listed.stderr == (f"history: history file {runs_file} is damaged (the file is empty); the other sessions "
                             f"are unaffected — move it aside to silence this: mv {runs_file} {runs_file}.damaged\n")
    row = next(ln for ln in listed.stdout.splitlines() if ln.startswith("write-one-line"))
    # It ran, but none of its runs can be read: no rate, and "damaged" (not "never run").
    assert row.split()[1] == "–" and "damaged" in row.split() and "never" not in row


def test_a_crashed_session_reads_as_interrupted(project) -> None:
    project.bundled()
    project.cli("eval", "write-one-line", "--runs", "2", "-q")
    history = History(project.workspaces)
    (info,) = history.sessions()
    path = project.workspaces / "history" / info.id / "session.json"
    doc = json.loads(path.read_text())
    doc["session"]["1"]["state"] = "running"  # as left by a process that died mid-session
    path.write_text(json.dumps(doc))
    (again,) = History(project.workspaces).sessions()
    assert again.state == "interrupted"
    assert len(History(project.workspaces).runs(info.id)) == 2
