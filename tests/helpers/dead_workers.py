"""Under pytest-xdist, a worker that dies ends the run with a failure that says why — never a hang.

Why a worker dies: pytest-timeout's `thread` method (pyproject.toml) stops a test that outlives its limit by
dumping every thread's stack and calling os._exit(1) — the controller sees `node down: Not properly
terminated`. Under xdist that dump is lost (the worker's terminal is not the user's), and so would be a
segfault's or an OOM kill's reason. Two hooks here, loaded by tests/conftest.py:

- `pytest_xdist_make_scheduler`: `--dist loadgroup` (pyproject.toml) is xdist's LoadScopeScheduling, which
  hangs when a worker dies (issue 37.1: 34 minutes). Its `remove_node` puts back into the queue EVERY unit
  the dead worker ever ran, finished ones included, and the test that was running too; its replacement is
  handed one unit when it starts — and an xdist worker runs a test only once it holds the next one (or is
  told to stop), so one unit of one test (or of none: a finished one) is never run, never asked past, and
  the controller waits forever. Here only the unfinished tests go back, the one that was running is
  reported failed (xdist's crash report) rather than run again — as `--dist load` does — and a worker is
  topped up to two tests, or told to stop when the queue is empty.
- `pytest_timeout_set_timer` / `pytest_handlecrashitem`: a worker's timeout writes the stacks to a file
  in the run's shared temporary folder before pytest-timeout ends the worker, and the controller puts them
  in the crashed test's report.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import traceback
from pathlib import Path

import pytest
from xdist.scheduler import LoadGroupScheduling

_DUMPS = "worker-timeouts"
_HARNESS = re.compile(r"[/\\](_pytest|pluggy|xdist|execnet)[/\\]")  # frames of pytest's own machinery


class CrashSafeLoadGroupScheduling(LoadGroupScheduling):
    """`--dist loadgroup` whose dead worker's unfinished tests, and only those, are handed on."""

    def remove_node(self, node) -> str | None:
        workload = self.assigned_work.pop(node)
        unfinished = {scope: dict(unit) for scope, unit in workload.items() if not all(unit.values())}
        if not unfinished:
            return None
        crashitem = next(nodeid for unit in unfinished.values() for nodeid, done in unit.items() if not done)
        for scope, unit in unfinished.items():
            if crashitem in unit:
                unit[crashitem] = True  # reported failed by the controller, not run again
            if not all(unit.values()):
                self.workqueue[scope] = unit
        for other in self.assigned_work:
            self._reschedule(other)
        return crashitem

    def _reschedule(self, node) -> None:
        super()._reschedule(node)  # one more unit when the worker runs low, or stop when none is left
        while self.workqueue and not node.shutting_down and self._pending_of(self.assigned_work[node]) < 2:
            self._assign_work_unit(node)
        if not self.workqueue and not node.shutting_down:
            node.shutdown()  # (runs what it holds, then ends)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadgroup":
        return CrashSafeLoadGroupScheduling(config, log)
    return None


def _dump_folder(config) -> Path:
    """The folder every worker of this run and its controller share (a worker's basetemp is inside it)."""
    base = config._tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / _DUMPS


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item, settings):
    """On an xdist worker, pytest-timeout's thread method with the stacks kept for the controller."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or settings.method != "thread":
        return None  # pytest-timeout's own
    import pytest_timeout

    def time_out() -> None:
        stacks = [f"{item.nodeid} outlived its {settings.timeout:g} s limit; its threads:"]
        for ident, frame in sys._current_frames().items():
            if ident != threading.get_ident():
                frames = [f for f in traceback.extract_stack(frame) if not _HARNESS.search(f.filename)]
                if frames:  # (not a thread of pytest's own)
                    stacks.append(f"--- thread {ident}\n" + "".join(traceback.format_list(frames)))
        try:
            folder = _dump_folder(item.config)
            folder.mkdir(exist_ok=True)
            (folder / f"{worker}.txt").write_text(f"{item.nodeid}\n" + "\n".join(stacks), encoding="utf-8")
        finally:
            pytest_timeout.timeout_timer(item, settings)  # prints what nobody sees, then os._exit(1)

    timer = threading.Timer(settings.timeout, time_out)
    timer.name = f"timeout {item.nodeid}"
    timer.daemon = True
    item.cancel_timeout = lambda: (timer.cancel(), timer.join())
    timer.start()
    return True


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched) -> None:
    """On the controller: a worker that timed out left its stacks; the crashed test's report shows them."""
    worker = getattr(getattr(report, "node", None), "gateway", None)
    if worker is None:
        return
    dump = _dump_folder(sched.config) / f"{worker.id}.txt"
    try:
        nodeid, _, stacks = dump.read_text(encoding="utf-8").partition("\n")
    except OSError:
        report.longrepr = (f"{report.longrepr}\nThe worker left no timeout stacks: it was killed (a signal, the "
                           "OOM killer), crashed in C, or called os._exit")
        return
    if nodeid == crashitem:
        report.longrepr = f"{report.longrepr}\n{stacks}"
