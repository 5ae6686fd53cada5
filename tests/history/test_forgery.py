"""A hostile agent that forges its own history: a real `command` agent finds the session's runs file
through the $SCARBOOK_* variables it is given and appends `pass` records. None of them counts, and
each is named: the numbers come only from the runs the runner started and recorded. The agents run
with isolation: none, where history is theirs to write (in the sandbox it is read-only)."""

from __future__ import annotations

import sys

FORGER = r'''
import json, os, sys
history = os.path.join(os.environ["SCARBOOK_WORKSPACE"], "..", "..", "..", "history", os.environ["SCARBOOK_SESSION"])
runs = os.path.join(history, "runs-" + os.environ["SCARBOOK_CASE"] + ".jsonl")
me = int(os.environ["SCARBOOK_RUN"])
def forged(k, **extra):
    return {"session_id": os.environ["SCARBOOK_SESSION"], "case_id": os.environ["SCARBOOK_CASE"], "k": k,
            "status": "pass", "reason": "all checks passed", **extra}
with open(runs, "a") as fh:
    if me == 1:
        for k in range(11, 20):  # nine passes beyond the plan
            fh.write(json.dumps(forged(k)) + "\n")
        fh.write(json.dumps(forged(1)) + "\n")  # and its own run, before the runner records the real one
        fh.write(json.dumps(forged(2, status="passed")) + "\n")
        fh.write(json.dumps(forged(3, checks="none")) + "\n")
        fh.write(json.dumps(forged(4, session_id="20260101-000000-000aa")) + "\n")
with open(os.path.join(history, "runs-made-up.jsonl"), "a") as fh:
    fh.write(json.dumps(forged(1, case_id="made-up")) + "\n")
print("I did nothing")  # the check fails: tmp.txt is never written
'''


def test_forged_pass_records_are_not_counted_and_are_named(project) -> None:
    agent = project.root / "forger.py"
    agent.write_text(FORGER)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}]}}\nconcurrency: 1\nisolation: none\n")
    project.case("victim", "id: victim\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    result = project.cli("eval", "--runs", "2", "-q")
    assert result.exit_code == 1  # both runs failed, in the session's own report too

    history_dir = project.workspaces / "history"
    (folder,) = [p for p in history_dir.iterdir() if p.is_dir()]
    runs_file = folder / "runs-victim.jsonl"
    lines = runs_file.read_text().splitlines()
    assert len(lines) == 15  # 13 forged, 2 real (the real k=1 after the forged one)
    forged_k1 = next(n for n, ln in enumerate(lines, 1) if '"k": 1,' in ln and "I did nothing" not in ln)
    real_k1 = next(n for n, ln in enumerate(lines, 1) if ln.startswith('{"session_id"') and '"k":1,' in ln)

    def excluded(where: str, why: str, sed: str) -> str:
        return (f"history: history file {runs_file} {where} not counted: {why} — the runner never writes that "
                f"(forged or damaged); delete it to silence this: sed -i '{sed}' {runs_file}")

    expected = [excluded(f"line {n} is", f"run k={k} is outside this session's plan (k from 1 to 2)", f"{n}d")
                for n, k in zip(range(1, 10), range(11, 20), strict=False)]
    expected.insert(forged_k1 - 1, excluded(f"lines {forged_k1}, {real_k1} are",
                                            "run k=1 is recorded 2 times and the runner records each run once",
                                            f"{forged_k1}d;{real_k1}d"))
    expected[11:11] = [excluded("line 11 is", "status 'passed' is not one of pass, fail, error, unjudged", "11d"),
                       excluded("line 12 is", "field checks is a string, not a list", "12d"),
                       excluded("line 13 is", "it names session '20260101-000000-000aa', not " + folder.name, "13d")]
    made_up = folder / "runs-made-up.jsonl"
    expected.insert(0, f"history: history file {made_up} is not counted: session {folder.name} did not run case "
                       f"'made-up' — the runner never writes that (forged or damaged); move it aside to silence "
                       f"this: mv {made_up} {made_up}.damaged")

    # issue 33.14: the session recorded 2 runs of victim when it ended, and only k=2 counts: no verdict there
    expected.append(f"history: history file {runs_file} holds 1 run of case victim, but session {folder.name} "
                    "recorded 2 when it ended — 1 was deleted or left out (forged or damaged): the session is damaged "
                    "and case victim has no verdict in it")
    sessions = project.cli("sessions")
    assert sessions.exit_code == 0
    assert sessions.stderr.splitlines() == expected
    # only the real k=2 counts (a fail); the real k=1, left out with its forged copy, is unjudged
    assert sessions.stdout.splitlines()[1].split()[1:6] == ["finished", "2", "0", "1", "0"]

    listed = project.cli("list")
    assert listed.exit_code == 0
    assert sorted(listed.stderr.splitlines()) == sorted(expected[1:])  # list reads only the case's own file
    row = next(ln for ln in listed.stdout.splitlines() if ln.startswith("victim"))
    assert row.split()[1:4] == ["–", "0/1/0", "just"]  # not 90%, and no rate at all: a run it recorded is missing

    shown = project.cli("show", "victim")
    assert shown.exit_code == 0 and sorted(shown.stderr.splitlines()) == sorted(expected[1:])
    assert [ln.split(" —")[0] for ln in shown.stdout.splitlines() if ln.startswith("run ")] == [
        "run 1: UNJUDGED", "run 2: FAIL"]


WIPER = r'''
import json, os, pathlib
history = os.path.join(os.environ["SCARBOOK_WORKSPACE"], "..", "..", "..", "history", os.environ["SCARBOOK_SESSION"])
if pathlib.Path(os.environ["SCARBOOK_WORKSPACE"], "..", "..", "..", "..", "behave").exists():
    open("tmp.txt", "w").write("ok")
else:  # a copy of every planned run, so each real one is a duplicate and none counts
    with open(os.path.join(history, "runs-" + os.environ["SCARBOOK_CASE"] + ".jsonl"), "a") as fh:
        for k in (1, 2):
            fh.write(json.dumps({"session_id": os.environ["SCARBOOK_SESSION"], "case_id": os.environ["SCARBOOK_CASE"],
                                 "k": k, "status": "pass", "reason": "ok"}) + "\n")
'''


def test_an_agent_that_spoils_its_own_session_does_not_bring_back_an_older_rate(project) -> None:
    agent = project.root / "wiper.py"
    agent.write_text(WIPER)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}]}}\nconcurrency: 1\nisolation: none\n")
    project.case("victim", "id: victim\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    (project.root / "behave").write_text("")
    assert project.cli("eval", "--runs", "2", "-q").exit_code == 0  # an older session: 2/2 pass
    (project.root / "behave").unlink()
    assert project.cli("eval", "--runs", "2", "-q").exit_code == 1  # this one fails, and forges copies
    listed = project.cli("list")
    row = next(ln for ln in listed.stdout.splitlines() if ln.startswith("victim"))
    assert row.split()[1] == "–"  # no rate: the latest session's runs were all left out, and the old 100% is not shown
    assert listed.stderr.count("is recorded 3 times and the runner records each run once") == 2  # k=1, k=2
