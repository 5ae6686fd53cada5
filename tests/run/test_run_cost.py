"""Issue 38.3: what the main process pays per run on a trivial agent. Each trip off the event loop is
two thread wake-ups; at -j16 on two cores they were most of what the main process spent per run. A run
goes off the loop to seed its workspace and once more when its agent is done (the transcript's tail,
the output's file, the diff, the usage and the leading plain rule checks together), and records the
same as when each of those was a trip of its own. Its trips go through proc/trips.py, not asyncio's
executor (a concurrent.futures.Future, a Condition and two chained callbacks each). Real sessions, real
programs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import pathlib
import sys
import threading
from collections.abc import Callable

import pytest

from scarbook.proc import spawn
from scarbook.proc.trips import Trips
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


def _per_run(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, owner, name: str,
             counts: Callable[..., bool] | None = None) -> float:
    """How many more calls of `owner.name` (those for which `counts(*args, **kwargs)` is true) a -j1
    session of 6 runs makes than one of 2 runs, per run; each session in a fresh project (a project's
    first session makes its folders)."""
    made: dict[int, int] = {}
    for runs in (2, 6):
        project = ProjectDir(tmp_path / f"runs-{runs}")
        (project.root / "cases").mkdir(parents=True)
        _project(project)
        real = getattr(owner, name)
        made[runs] = 0

        def counted(*args, _runs=runs, _real=real, **kwargs):
            if counts is None or counts(*args, **kwargs):
                made[_runs] += 1
            return _real(*args, **kwargs)

        with monkeypatch.context() as patched:
            patched.setattr(owner, name, counted)
            result = project.cli("eval", "--runs", str(runs), "-j", "1", "-q", "--no-judge-cache")
        assert result.exit_code in (0, 1), result.output
    return (made[6] - made[2]) / 4


def test_a_run_goes_off_the_event_loop_twice(tmp_path, monkeypatch) -> None:
    """(a program started while none runs starts on the loop's own thread: no trip)"""
    trips = _per_run(tmp_path, monkeypatch, Trips, "call") + \
        _per_run(tmp_path / "executor", monkeypatch, asyncio.base_events.BaseEventLoop, "run_in_executor")
    assert trips == 2  # seeding, then all the rest once the agent is done (4 before)


def test_a_run_makes_no_trip_through_asyncio_s_executor(tmp_path, monkeypatch) -> None:
    """Its two trips are proc/trips.py's: no concurrent.futures.Future per run (2 before, each with a
    threading.Condition, chained to an asyncio Future by callbacks on both sides)."""
    assert _per_run(tmp_path, monkeypatch, concurrent.futures.Future, "__init__") == 0


def test_a_finished_run_costs_the_executor_no_wait_over_the_others(tmp_path, monkeypatch) -> None:
    """The local executor learns a run is done from that run's own task: asyncio.wait added a callback to
    every running task and took them off again at each run's end (O(concurrency) per run)."""
    assert _per_run(tmp_path, monkeypatch, asyncio, "wait") == 0  # 1 before


def test_a_run_asks_the_file_system_nothing_it_was_just_told(tmp_path, monkeypatch) -> None:
    """Seeding writes a file at the workspace's top through the workspace's own fd (no dup) and sets its
    bits only when the umask took some (the seed's 0644 under 022: none); whether the run left a transcript
    is what opening it for its tail said (no access F_OK); the diff asks whether the workspace is still
    there only when its stat failed (no lexists). Before: one of each per run."""
    old = os.umask(0o022)
    try:
        for owner, name, counts in ((os, "dup", None), (os, "fchmod", None), (os.path, "lexists", None),
                                    (os, "access", lambda *a, **kw: a[1:2] == (os.F_OK,))):
            assert _per_run(tmp_path / name, monkeypatch, owner, name, counts=counts) == 0, name
    finally:
        os.umask(old)


def test_a_run_does_not_ask_again_how_programs_start(tmp_path, monkeypatch) -> None:
    """The way programs start (epoll and pidfds, or asyncio's transports: SCARBOOK_PORTABLE_SPAWN) is
    asked once per event loop, not at every start: os.environ.get of a name that is not set raises and
    catches a KeyError inside (1 per run before)."""
    assert _per_run(tmp_path, monkeypatch, spawn, "fast_path_available") == 0


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


def test_a_run_makes_no_path_of_its_case_folder_or_for_the_janitor_on_the_loop(tmp_path, monkeypatch) -> None:
    """<session>/<case> is made once per case, and a passing run's workspace goes to the janitor as the
    record's string (each Path() was ~2% of the loop's time per run at -j16)."""
    on_the_loop = _per_run(tmp_path, monkeypatch, pathlib.Path, "__new__",
                           lambda *_a, **_kw: threading.current_thread() is threading.main_thread())
    assert on_the_loop == 0  # 2.5 before


def test_a_run_makes_its_own_folder_and_asks_for_no_other(tmp_path, monkeypatch) -> None:
    """The session's folder and the case's are there after the first run: a mkdir of a folder that exists
    still takes its parent's lock in the kernel, and two per run were a tenth of a run's CPU at -j16."""
    assert _per_run(tmp_path, monkeypatch, os, "mkdir") == 1  # its workspace (3 before: the session's and the case's too)
