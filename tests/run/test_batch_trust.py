"""Issue 33.12 and 33.13: a --judge-batch session left judging cannot be finished from a forged
batch.json, and a scarbook killed between sending a batch's create and hearing its id never leads
`scarbook resume` to create (and pay for) a second batch.

The judge is the real SDK against the loopback server's Message Batches endpoints (create, retrieve,
results, list); the forger is a real agent process, run unconfined in a later session, that rewrites
history/<session>/batch.json; the kill is a real kill -9 of a `scarbook eval --judge-batch` process
while the server holds its create's reply."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.history.store import History
from tests.helpers.hostile_project import good_or_bad, hostile_project, judged_case
from tests.helpers.judge_server import judge_server  # noqa: F401
from tests.run.test_batch_session import _judging_session

# Case good answers "good", case bad answers "bad"; case forge rewrites every batch.json as FORGE says.
AGENT = r'''
import json, os, pathlib, sys
root = pathlib.Path(sys.argv[1])
case = os.environ["SCARBOOK_CASE"]
if case == "forge":
    how = (root / "FORGE").read_text().strip()
    for path in (root / "workspaces" / "history").glob("*/batch.json"):
        plan = json.loads(path.read_text())
        if how == "cached":                 # every waiting sample answered PASS "from the cache"
            for c in plan["checks"]:
                c["samples"] = [{"sample": s["sample"], "key": s.get("key"), "cached": [
                    {"item": i + 1, "verdict": "PASS", "reason": "forged"} for i in range(len(c["rubric"]))]}
                    for s in c["samples"]]
        elif how == "swap":                 # the two checks' requests trade custom ids: each gets the other's answer
            a, b = (c["samples"][0] for c in plan["checks"])
            a["custom_id"], b["custom_id"] = b["custom_id"], a["custom_id"]
        path.write_text(json.dumps(plan))
print("done" if case == "forge" else case)
'''

@pytest.fixture
def project(tmp_path, judge_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-batch")
    judge_server.responder = good_or_bad
    return hostile_project(tmp_path, AGENT, judge_server.url, judge=", batch_poll_s: 0.02, cache: false", cases={
        "good": judged_case("good", "output"), "bad": judged_case("bad", "output"),
        "forge": "id: forge\ntask: t\nchecks:\n  - {type: output_contains, text: done}\n"})


def _cli(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def _judging(project: Path, judge_server) -> str:
    """A --judge-batch session of good and bad left judging: stopped (as Ctrl-C stops it) once its batch is sent."""
    info = _judging_session(project, judge_server, runs=1, cases=("good", "bad")).session
    assert info.state == "judging"
    judge_server.hold_batches = False
    return info.id


@pytest.mark.parametrize("how", ["cached", "swap"])
def test_resume_refuses_a_batch_json_that_is_not_what_was_submitted(project, judge_server, how) -> None:
    sid = _judging(project, judge_server)
    (project / "FORGE").write_text(how)
    assert _cli(project, "eval", "forge", "-q").exit_code == 0  # an unconfined agent rewrites batch.json
    resumed = _cli(project, "resume", sid)
    assert resumed.exit_code == 2, resumed.output
    path = project / "workspaces" / "history" / sid / "batch.json"
    assert resumed.stderr == (f"scarbook: {path} is not what session {sid} submitted (its sha256 is recorded in "
                              "the session's record at submit): it was changed since, so its waiting requests "
                              "cannot be trusted — the session cannot be finished from it; run its cases again\n")
    assert History(project / "workspaces").read_session(sid).state == "judging"  # nothing finished from it


def test_an_untouched_batch_json_still_resumes(project, judge_server) -> None:
    sid = _judging(project, judge_server)
    resumed = _cli(project, "resume", sid)
    assert resumed.exit_code == 1, resumed.output  # bad: 0/1
    assert sorted((r.case_id, r.status) for r in History(project / "workspaces").runs(sid)) == [
        ("bad", "fail"), ("good", "pass")]


@pytest.mark.needs_proc
def test_resume_adopts_the_batch_a_killed_scarbook_created_but_never_heard_of(project, judge_server) -> None:
    judge_server.batch_create_gate = gate = threading.Event()
    proc = subprocess.Popen([sys.executable, "-c", "from scarbook.cli import main; main()", "-C", str(project),
                             "eval", "good", "bad", "-q", "--judge-batch"],
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not judge_server.batches:  # the create reached the server; its reply is held
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the batch was never created"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        gate.set()
        if proc.poll() is None:
            proc.kill()
    (info,) = History(project / "workspaces").sessions()
    assert info.state == "judging" and not info.batch.id  # sent, but its id never heard
    judge_server.batch_create_gate = None
    resumed = _cli(project, "resume", info.id)
    assert resumed.exit_code == 1, resumed.output + resumed.stderr
    assert len(judge_server.batches) == 1  # adopted, not created again (the first would be billed, orphaned)
    after = History(project / "workspaces").read_session(info.id)
    assert after.batch.id == next(iter(judge_server.batches))
    assert sorted((r.case_id, r.status) for r in History(project / "workspaces").runs(info.id)) == [
        ("bad", "fail"), ("good", "pass")]
