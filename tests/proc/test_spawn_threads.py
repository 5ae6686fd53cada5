"""Issue 38.3: while programs run, the next one is started on a trip thread (proc/trips.py), so the event loop serves
the running ones meanwhile (a start waits for the child's exec: -j16 gained nothing over -j1). Real
processes: many at once, and a run cancelled while its program is being started on that thread."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from scarbook.proc import reaper, spawn
from scarbook.proc.spawn import run_program
from tests.helpers.proc_helpers import alive

pytestmark = [pytest.mark.needs_proc]


async def _run(cwd: Path, code: str, **kw):
    out: list[bytes] = []
    done = await run_program([sys.executable, "-c", code], cwd=cwd, env=None, stdin_data=kw.pop("stdin", None),
                             on_stdout=out.append, on_stderr=None, timeout_s=kw.pop("timeout_s", 60))
    return done, b"".join(out)


async def test_programs_started_while_others_run_go_through_the_spawner_and_keep_their_output(tmp_path,
                                                                                           monkeypatch) -> None:
    if not spawn.fast_path_available():
        pytest.skip("no epoll/pidfd")
    on_threads: list[str] = []
    real = spawn._spawn

    def noted(*a, **kw):
        import threading

        on_threads.append(threading.current_thread().name)
        return real(*a, **kw)

    monkeypatch.setattr(spawn, "_spawn", noted)
    task = "x" * 200_000  # more than a pipe holds: the rest is written as the program reads
    code = "import sys, time; data = sys.stdin.read(); time.sleep(0.2); print(len(data), sys.argv[0])"
    results = await asyncio.gather(*(_run(tmp_path, code, stdin=task.encode()) for _ in range(8)))
    assert [(d.returncode, out) for d, out in results] == [(0, b"200000 -c\n")] * 8
    assert on_threads[0] == "MainThread"  # nothing ran yet: started inline
    assert any(name.startswith("scarbook-trip") for name in on_threads[1:])  # proc/trips.py
    assert not reaper.leaders


async def test_a_run_cancelled_while_its_program_starts_on_the_spawner_leaves_nothing_running(tmp_path) -> None:
    if not spawn.fast_path_available():
        pytest.skip("no epoll/pidfd")
    pidfile = tmp_path / "pid"
    other = asyncio.ensure_future(_run(tmp_path, "import time; time.sleep(30)"))
    while not reaper.leaders:
        await asyncio.sleep(0.01)
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    cancelled = asyncio.ensure_future(_run(tmp_path, code))
    await asyncio.sleep(0)  # its start is on the spawner now
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    other.cancel()
    with pytest.raises(asyncio.CancelledError):
        await other
    assert not reaper.leaders
    if pidfile.exists() and pidfile.read_text():  # it got as far as running: it is gone now
        pid = int(pidfile.read_text())
        end = time.monotonic() + 5
        while alive(pid):
            assert time.monotonic() < end, f"process {pid} outlived its cancelled run"
            await asyncio.sleep(0.02)
