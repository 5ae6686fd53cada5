"""`scarbook rejudge` of a session that did not finish: one still running is refused (its runs are still
coming in), one whose process died (kill -9: `interrupted`) is graded, but the new session ends as its source
did — it holds only part of the runs, and a partial session never gates green (exit 3).

Before the fix, both were graded as if whole: the new session said `finished; 2 runs` and exited 0."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.hostile_project import good_or_bad, hostile_project, judged_case
from tests.helpers.judge_server import judge_server  # noqa: F401

pytestmark = pytest.mark.needs_proc
SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]

# Runs 1 and 2 end at once; run 3 says it started (ROOT/stuck) and waits, at most 30 s, for ROOT/release.
AGENT = """\
import sys, time
from pathlib import Path
root = Path(sys.argv[1])
Path("out.txt").write_text("good")
if int(Path.cwd().name) >= 3:
    (root / "stuck").write_text("3")
    for _ in range(600):
        if (root / "release").exists():
            break
        time.sleep(0.05)
print("done")
"""


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "run 3 never started"
        time.sleep(0.05)


def test_a_running_session_is_refused_and_an_interrupted_ones_rejudge_gives_no_verdict(
        project, judge_server, monkeypatch, tmp_path) -> None:  # noqa: F811
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    judge_server.responder = good_or_bad
    root = hostile_project(project.root, AGENT, judge_server.url, cases={"c": judged_case("c")}, runs=4)
    proc = subprocess.Popen([*SCARBOOK, "-C", str(root), "eval", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(root / "stuck", proc)
        [source] = [p.name for p in (root / "workspaces" / "history").iterdir() if p.is_dir()]

        running = project.cli("rejudge", "latest")
        assert running.exit_code == 2, running.stdout + running.stderr
        assert running.stderr.strip() == (f"scarbook: session {source} is still running: its runs are still coming "
                                          "in — wait for it to end (or cancel it), then grade it again")
        assert [p.name for p in (root / "workspaces" / "history").iterdir() if p.is_dir()] == [source]

        proc.send_signal(signal.SIGKILL)  # scarbook itself dies mid-run: the session is interrupted
        proc.communicate(timeout=30)
    finally:
        (root / "release").write_text("")
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    out = tmp_path / "rejudge.json"
    result = project.cli("rejudge", "latest", "--json", str(out))
    assert result.exit_code == 3, result.stdout + result.stderr
    report = json.loads(out.read_text())
    assert report["exit_code"] == 3
    assert report["session"]["state"] == "interrupted"
    assert len(report["runs"]) == 2 and {r["status"] for r in report["runs"]} == {"pass"}  # nothing lost
    note = (f"rejudge of session {source}, which was interrupted: it holds only the runs that session "
            "finished, so it gives no verdict either")
    assert report["session"]["note"] == note
    assert note in result.stdout + result.stderr


def test_one_shard_of_a_session_is_not_graded_again_as_a_whole_session(project, judge_server, monkeypatch):  # noqa: F811
    """Before: `rejudge` of shard 1/2 recorded a session of its half of the runs and gated on it (exit 0),
    where the shard itself leaves the gate to `scarbook merge`."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    judge_server.responder = good_or_bad
    hostile_project(project.root, "open('out.txt', 'w').write('good')\n", judge_server.url,
                    cases={"c": judged_case("c")}, runs=2)
    assert project.cli("eval", "-q", "--shard", "1/2", "--session-id", "ci-3").exit_code == 0
    result = project.cli("rejudge", "latest")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr.strip() == ("scarbook: session ci-3.shard-1-of-2 is shard 1/2 of session ci-3: it holds part "
                                     "of its runs — merge the shards (`scarbook merge`), then `scarbook rejudge ci-3`")
    assert [p.name for p in (project.workspaces / "history").iterdir() if p.is_dir()] == ["ci-3.shard-1-of-2"]
