"""A dead xdist worker ends the run with a failure that says why, never a hang (issue 37.1;
tests/helpers/dead_workers.py). A real pytest with pytest-xdist, in a subprocess, on a few tests of which
one outlives its timeout (pytest-timeout's thread method ends its worker) and one kills its worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.paths import REPO

TESTS = """\
import os, time
import pytest

def test_a(): pass
def test_b(): pass
def test_c(): pass

@pytest.mark.xdist_group("g")
def test_g1(): pass

@pytest.mark.xdist_group("g")
@pytest.mark.timeout(1)
def test_g2_hangs(): time.sleep(60)

@pytest.mark.xdist_group("g")
def test_g3(): pass

def test_z_kills_its_worker(): os._exit(1)
"""

# A C call that keeps the GIL: libc's sleep() through ctypes.PyDLL (which, unlike CDLL, does not release it). A
# regex backtracking on a long input holds it the same way, and burns a CPU for the 6 s the test waits.
HOLDS_THE_GIL = """\
import ctypes
import pytest

def test_a(): pass

@pytest.mark.timeout(1)
def test_b_holds_the_gil(): ctypes.PyDLL(None).sleep(60)  # never gives the GIL back

def test_c(): pass
def test_d(): pass
"""

HOOKS = """\
from tests.helpers.dead_workers import pytest_handlecrashitem, pytest_timeout_set_timer, pytest_xdist_make_scheduler
"""


def _run(tmp_path: Path, tests: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 60\ntimeout_method = thread\n")
    (tmp_path / "conftest.py").write_text(HOOKS)
    (tmp_path / "test_dying.py").write_text(tests)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # (this run's own xdist worker's)
    env["PYTHONPATH"] = str(REPO)
    # only the plugins the hooks work with: each of the run's processes (the controller, a worker and each
    # replacement) would import every installed plugin (~0.5 s of CPU each)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "xdist", "-p", "timeout", *args, "-p", "no:cacheprovider",
                             "--basetemp", str(tmp_path / "tmp"), "-rf", "test_dying.py"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(f"the run never ended:\n{out}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out)


def test_a_run_whose_workers_die_ends_and_says_which_tests_and_why(tmp_path: Path) -> None:
    """Before: after the first dead worker the controller waited forever (loadgroup handed its replacement a
    unit the dead worker had already finished), and a timeout's stacks were lost ('node down: Not properly
    terminated' alone)."""
    proc = _run(tmp_path, TESTS, "-n", "1", "--dist", "loadgroup")
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "2 failed, 5 passed" in out, out
    hung = out[out.index("worker 'gw0' crashed while running 'test_dying.py::test_g2_hangs@g'"):]
    assert "\ntest_dying.py::test_g2_hangs@g outlived its 1 s limit; its threads:\n" in hung, out
    assert "def test_g2_hangs(): time.sleep(60)" in hung.partition("worker 'gw1' crashed")[0], out  # its stack
    assert textwrap.dedent("""\
        worker 'gw1' crashed while running 'test_dying.py::test_z_kills_its_worker'
        The worker left no timeout stacks: it was killed (a signal, the OOM killer), crashed in C, or called os._exit
        """) in out, out


def test_a_test_that_holds_the_gil_is_stopped_and_its_stacks_shown(tmp_path: Path) -> None:
    """The CI run that hung for 60 minutes: pytest-timeout's timer is a Python thread, so a test that never
    gives the GIL back (a regex backtracking on 2^64 paths; here a C call that sleeps holding it) was never
    stopped, and its worker never reported. Before: this run never ended. Now faulthandler's C watchdog ends
    the worker at 1 + 5 s with every thread's stack, and the other tests run on a replacement worker."""
    proc = _run(tmp_path, HOLDS_THE_GIL, "-n", "1", "--dist", "loadgroup")
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "1 failed, 3 passed" in out, out
    crash = out[out.index("worker 'gw0' crashed while running 'test_dying.py::test_b_holds_the_gil'"):]
    assert ("\ntest_dying.py::test_b_holds_the_gil held the GIL (or blocked pytest-timeout's timer) past 6 s "
            "(its limit: 1 s); every thread, innermost call first:\n") in crash, out
    assert 'test_dying.py", line 7 in test_b_holds_the_gil' in crash, out  # the hung line, from C
