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
- A backstop for what that timer cannot stop: pytest-timeout's timer is a Python thread, so a test that
  holds the GIL (a regex backtracking on a long input, a C loop) or blocks the timer's own writes is never
  stopped — a CI run hung that way for 60 minutes with no "node down". faulthandler's watchdog is a C
  thread that needs no GIL: armed beside the timer, a little later (`_backstop`), it writes every thread's
  stack to the worker's `.hung.txt` and calls _exit(1); the controller reports those stacks as above.
"""

from __future__ import annotations

import faulthandler
import os
import re
import sys
import threading
import traceback
from pathlib import Path

import pytest
from xdist.scheduler import LoadGroupScheduling

_DUMPS = "worker-timeouts"
_HUNG = "held the GIL (or blocked pytest-timeout's timer) past"
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
    _arm_watchdog(item, settings.timeout)

    def cancel() -> None:
        faulthandler.cancel_dump_traceback_later()
        timer.cancel()
        timer.join()

    item.cancel_timeout = cancel
    timer.start()
    return True


def _backstop(timeout: float) -> float:
    """When the C watchdog fires: after pytest-timeout's own timer had its chance (3 s → 8 s, 120 s → 180 s)."""
    return timeout + min(60.0, max(5.0, timeout / 2))


def _arm_watchdog(item, timeout: float) -> None:
    """faulthandler's watchdog for this test: its stacks go to this worker's `.hung.txt`, then _exit(1)."""
    dump = getattr(item.config, "_scarbook_watchdog_file", None)
    if dump is None:
        folder = _dump_folder(item.config)
        folder.mkdir(exist_ok=True)
        dump = open(folder / f"{os.environ['PYTEST_XDIST_WORKER']}.hung.txt", "w", encoding="utf-8")  # noqa: SIM115
        item.config._scarbook_watchdog_file = dump  # (open for the worker's life: the watchdog writes to its fd)
    backstop = _backstop(timeout)
    dump.seek(0)
    dump.truncate()
    dump.write(f"{item.nodeid}\n{item.nodeid} {_HUNG} {backstop:g} s (its limit: {timeout:g} s); every thread, "
               "innermost call first:\n")
    dump.flush()
    faulthandler.dump_traceback_later(backstop, exit=True, file=dump)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched) -> None:
    """On the controller: a worker that timed out left its stacks; the crashed test's report shows them."""
    worker = getattr(getattr(report, "node", None), "gateway", None)
    if worker is None:
        return
    folder = _dump_folder(sched.config)
    try:
        nodeid, _, stacks = _read_dump(folder, worker.id)
    except OSError:
        report.longrepr = (f"{report.longrepr}\nThe worker left no timeout stacks: it was killed (a signal, the "
                           "OOM killer), crashed in C, or called os._exit")
        return
    if nodeid == crashitem:
        report.longrepr = f"{report.longrepr}\n{stacks}"


def _read_dump(folder: Path, worker: str) -> tuple[str, str, str]:
    """The crashed worker's stacks: pytest-timeout's (`.txt`), else the C watchdog's (`.hung.txt`, only when it
    fired: the file is rewritten, stacks-free, at every test's start)."""
    try:
        return (folder / f"{worker}.txt").read_text(encoding="utf-8").partition("\n")
    except FileNotFoundError:
        nodeid, sep, stacks = (folder / f"{worker}.hung.txt").read_text(encoding="utf-8", errors="replace").partition("\n")
        if "File " not in stacks:  # armed, never fired
            raise FileNotFoundError(worker) from None
        return nodeid, sep, stacks
