"""proc/bridge.py on its own (it runs inside the sandbox, between the agent and the recorder's socket)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import scarbook.proc.bridge as bridge_module

BRIDGE = Path(bridge_module.__file__)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets")
def test_a_connection_still_open_when_the_program_ends_prints_nothing_to_its_stderr(tmp_path) -> None:
    # The upstream (the recorder's socket) takes the request and never answers; the program sends and
    # exits. Before: asyncio.run cancelled the open connection and Python 3.11 printed "Exception in
    # callback ... CancelledError" into the program's stderr — the run's stderr (tests/record/test_recorder saw it).
    sock_path = str(tmp_path / "s")
    upstream = socket.socket(socket.AF_UNIX)
    upstream.bind(sock_path)
    upstream.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(upstream.accept()[0]), daemon=True).start()
    port = free_port()
    program = ("import socket, time\n"
               f"for _ in range(200):\n"
               f"    try:\n        s = socket.create_connection(('127.0.0.1', {port})); break\n"
               f"    except OSError: time.sleep(0.01)\n"
               "s.sendall(b'GET / HTTP/1.1\\r\\n\\r\\n'); time.sleep(0.3); print('done')\n")
    out = subprocess.run([sys.executable, "-I", str(BRIDGE), sock_path, str(port), "--", sys.executable, "-c", program],
                         capture_output=True, text=True, timeout=60)
    upstream.close()
    assert (out.returncode, out.stdout, out.stderr) == (0, "done\n", "")
