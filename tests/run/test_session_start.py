"""Issue 38.3: a session's start does its blocking work off the event loop: the stale sweep reads every
process's environment and git's revision is a program started and waited for; both used to run on the
loop's thread (the TUI's, while it drew). The revision is still recorded."""

from __future__ import annotations

import subprocess
import threading

import pytest

from scarbook.run import runner

pytestmark = pytest.mark.usefixtures("inprocess_demo")


def test_the_stale_sweep_and_gits_revision_run_off_the_loop_and_the_revision_is_kept(project, monkeypatch) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: out.txt}]\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=project.root, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=project.root, capture_output=True,
                          text=True, check=True).stdout.strip()
    threads: dict[str, str] = {}
    sweep, revision = runner.kill_stale, runner.git_revision

    def noted(name, fn):
        def call(*a):
            threads[name] = threading.current_thread().name
            return fn(*a)
        return call

    monkeypatch.setattr(runner, "kill_stale", noted("sweep", sweep))
    monkeypatch.setattr(runner, "git_revision", noted("git", revision))
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code in (0, 1), result.output
    assert threads.keys() == {"sweep", "git"} and "MainThread" not in threads.values(), threads
    assert project.load().history.sessions()[0].git_revision == head
