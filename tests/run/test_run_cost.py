"""Issue 38.3: what the main process pays per run on a trivial agent. Each trip off the event loop is
two thread wake-ups; at -j16 on two cores they were most of what the main process spent per run. A run
goes off the loop to seed its workspace and once more when its agent is done (the transcript's tail,
the output's file, the diff, the usage and the leading plain rule checks together), and records the
same as when each of those was a trip of its own. Real sessions, real programs."""

from __future__ import annotations

import asyncio
import json
import pathlib
import sys
import threading

import pytest

from tests.conftest import ProjectDir

CASE = """\
id: copy
task: copy the README to out.txt
checks:
  - {type: contains, path: out.txt, text: tiny-agent}
  - {type: output_contains, text: copied}
  - {type: file_exists, path: README.md}
"""
# k even: copies and says so; k odd: says so, copies nothing (the first check fails, the rest are not run)
AGENT = ("import os, shutil\nk = int(os.environ['SCARBOOK_RUN'])\n"
         "if k % 2 == 0: shutil.copy('README.md', 'out.txt')\nprint('copied')\n")


def _project(project: ProjectDir) -> None:
    agent = project.root / "agent.py"
    agent.write_text(AGENT)
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]}}\n"
                   "isolation: none\ntimeout_s: 60\nthreshold: 0.5\n")
    project.case("copy", CASE, seed={"README.md": "# tiny-agent\n"})


def _trips(project: ProjectDir, monkeypatch: pytest.MonkeyPatch, runs: int) -> int:
    """Trips off the event loop of a -j1 session of `runs` runs (a program started while none runs starts
    on the loop's own thread: no trip)."""
    trips = 0
    real = asyncio.base_events.BaseEventLoop.run_in_executor

    def counted(self, executor, func, *args):
        nonlocal trips
        trips += 1
        return real(self, executor, func, *args)

    with monkeypatch.context() as patched:
        patched.setattr(asyncio.base_events.BaseEventLoop, "run_in_executor", counted)
        result = project.cli("eval", "--runs", str(runs), "-j", "1", "-q", "--no-judge-cache")
    assert result.exit_code in (0, 1), result.output
    return trips


def test_a_run_goes_off_the_event_loop_twice(project, monkeypatch) -> None:
    _project(project)
    few, more = _trips(project, monkeypatch, 2), _trips(project, monkeypatch, 6)
    assert (more - few) / 4 == 2  # seeding, then all the rest once the agent is done (4 before)


def test_a_run_records_its_checks_as_before(project) -> None:
    _project(project)
    result = project.cli("eval", "--runs", "4", "-j", "2", "-q", "--json", str(project.root / "r.json"))
    assert result.exit_code == 0, result.output
    runs = sorted(json.loads((project.root / "r.json").read_text())["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["fail", "pass", "fail", "pass"]
    passed, failed = runs[1], runs[0]
    assert [(c["type"], c["status"], c["detail"]) for c in passed["checks"]] == [
        ("contains", "pass", "out.txt contains 'tiny-agent'"),
        ("output_contains", "pass", "output contains 'copied'"),
        ("file_exists", "pass", "README.md exists (13 bytes)")]
    assert [(c["type"], c["status"], c["detail"]) for c in failed["checks"]] == [
        ("contains", "fail", "out.txt does not exist"),
        ("output_contains", "skipped", "not run: check 1 (contains) did not pass"),
        ("file_exists", "skipped", "not run: check 1 (contains) did not pass")]
    assert (failed["reason"], passed["reason"]) == ("check 1 (contains): out.txt does not exist", "all checks passed")
    assert passed["diff"] == {"created": ["out.txt"], "modified": [], "deleted": []}


def _paths_made_on_the_loop(project: ProjectDir, monkeypatch: pytest.MonkeyPatch, runs: int) -> int:
    """Path objects made on the event loop's thread by a -j1 session of `runs` runs."""
    made = 0
    real = pathlib.Path.__new__

    def counted(cls, *args, **kwargs):
        nonlocal made
        if threading.current_thread() is threading.main_thread():
            made += 1
        return real(cls, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(pathlib.Path, "__new__", counted)
        result = project.cli("eval", "--runs", str(runs), "-j", "1", "-q", "--no-judge-cache")
    assert result.exit_code in (0, 1), result.output
    return made


def test_a_run_makes_no_path_of_its_case_folder_or_for_the_janitor_on_the_loop(project, monkeypatch) -> None:
    """<session>/<case> is made once per case, and a passing run's workspace goes to the janitor as the
    record's string (each Path() was ~2% of the loop's time per run at -j16)."""
    _project(project)
    few, more = _paths_made_on_the_loop(project, monkeypatch, 2), _paths_made_on_the_loop(project, monkeypatch, 6)
    assert (more - few) / 4 == 0
