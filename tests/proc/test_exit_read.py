"""Issue 38.3: at a program's exit, what it wrote that is still in its pipes is read there and then, so
its run ends without a grace timer and without one more wake-up of the loop for each end of file; only a
pipe something else still holds (a leftover) waits out LEFTOVER_GRACE_S. A real program, watched as
run_program watches it, its exit handled before the loop has read a byte of its pipe."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from scarbook.proc import leftovers, reaper, spawn

pytestmark = [pytest.mark.needs_proc]


async def test_what_an_exited_program_left_in_its_pipes_is_read_at_its_exit(tmp_path) -> None:
    if not spawn.fast_path_available():
        pytest.skip("no epoll/pidfd")
    code = "import sys; sys.stdout.write('x' * 50000); sys.stderr.write('err')"  # (less than a pipe holds)
    run = reaper.Run(leftovers.new_tag(""), confined=False)
    spawned = spawn._spawn([sys.executable, "-c", code], tmp_path, dict(os.environ), None, True, run, None)
    os.waitid(os.P_PID, spawned.proc.pid, os.WEXITED | os.WNOWAIT)  # it has exited (not reaped): all it wrote waits
    out: list[bytes] = []
    err: list[bytes] = []
    watch = spawn._Watch(asyncio.get_running_loop(), spawned, out.append, err.append, run, None)
    try:
        watch._on_exit()  # as the loop does when the pidfd is ready: before it has read either pipe
        assert watch._grace is None  # no grace timer: both pipes were read to their end right there
        assert watch.done.done()
        assert (b"".join(out), b"".join(err)) == (b"x" * 50000, b"err")
        assert spawned.proc.returncode == 0
    finally:
        watch.close()
        await watch.swept()
    assert spawned.proc.pid not in reaper.leaders
