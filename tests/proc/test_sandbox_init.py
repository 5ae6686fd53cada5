"""SandboxInit waits only for the sandbox's own PID 1: a pid bwrap named that some other process holds by
now (the PID 1 died, the pid was reused) is never waited for, and what bwrap wrote when it failed before
making the sandbox means nothing is left to wait for. (The wait itself, with real bwrap and daemons:
tests/proc/test_reaper.py::test_when_a_sandboxed_run_is_done_nothing_of_it_is_alive.)"""

from __future__ import annotations

import json
import os
import sys

import pytest

from scarbook.proc.sandbox_init import _open_init

pytestmark = [pytest.mark.needs_proc,
              pytest.mark.skipif(not hasattr(os, "pidfd_open") or not sys.platform.startswith("linux"),
                                 reason="pidfds are Linux's")]


def _info(pid: int, pid_ns: int) -> bytes:
    return json.dumps({"child-pid": pid, "pid-namespace": pid_ns, "net-namespace": 1}).encode()


def test_the_pid_bwrap_named_is_waited_for_only_while_it_is_in_the_namespace_bwrap_named() -> None:
    own_ns = os.stat(f"/proc/{os.getpid()}/ns/pid").st_ino
    pidfd = _open_init(_info(os.getpid(), own_ns))
    assert pidfd is not None
    os.close(pidfd)
    assert _open_init(_info(os.getpid(), own_ns + 1)) is None  # the same pid, another process's by now


@pytest.mark.parametrize("info", [b"", b"bwrap: Can't mount proc on /newroot/proc", b'{\n    "child-pid": 12',
                                  json.dumps({"exit-code": 1}).encode()])
def test_nothing_is_waited_for_when_bwrap_made_no_sandbox(info: bytes) -> None:
    assert _open_init(info) is None
