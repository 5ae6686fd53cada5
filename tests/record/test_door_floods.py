"""Issue 33 (8): an agent floods its recorder door — malformed requests, then 1,100 idle connections
against a scarbook whose file-descriptor limit is 1,024 — and scarbook's stderr gets none of it: one
warning line per kind, in the run's notes, and the run itself still reaches its verdict. scarbook is
a real process here (its stderr and its descriptor limit are the point)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.recorder_upstream import SECRET, Upstream, hostile_project

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_NOFILE and the flood are Linux's")

FLOODER = r'''
import json, os, resource, socket, sys, time, urllib.parse
base = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
where = (base.hostname, base.port)
for raw in (b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
            b"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"):
    s = socket.create_connection(where, timeout=10)
    s.sendall(raw)
    print("malformed ->", s.recv(100)[:12])
    s.close()
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held, failed = [], 0
for _ in range(int(sys.argv[1])):
    try:
        held.append(socket.create_connection(where, timeout=2))
    except OSError:
        failed += 1
print(f"opened {len(held)}, failed {failed}")
time.sleep(1)  # the attack: hold them idle (the old proxy said so on stderr every second)
for s in held:
    s.close()
body = json.dumps({"model": "claude-test", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}).encode()
import http.client
for attempt in range(200):  # until the door has seen the idle ones go (a client retries a closed connection)
    c = http.client.HTTPConnection(*where, timeout=10)
    try:
        c.request("POST", base.path + "/v1/messages", body, {"content-type": "application/json"})
        r = c.getresponse()
        r.read()  # the whole answer, as a client does: its recording is in before its end
        status = r.status
        break
    except OSError:
        time.sleep(0.05)
    finally:
        c.close()
print("call ->", status)
open("out.txt", "w").write("hello")
'''


def scarbook(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`scarbook -C root ARGS` as its own process, with at most 1,024 open files."""
    import resource

    def limit() -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    code = "import sys; sys.argv[0] = 'scarbook'; from scarbook.entry import main; main()"
    return subprocess.run([sys.executable, "-c", code, "-C", str(root), *args], capture_output=True, text=True,
                          env=env, preexec_fn=limit, timeout=120)


def test_a_flood_of_idle_connections_and_malformed_requests_is_one_line_each_on_the_run(project, monkeypatch):
    import os

    up = Upstream().start()
    try:
        hostile_project(project, up, ["1100"], script=FLOODER)
        out = project.root / "report.json"
        done = scarbook(project.root, "eval", "-q", "--json", str(out),
                        env={**os.environ, "ANTHROPIC_API_KEY": SECRET, "SCARBOOK_DEMO_DELAY": "0"})
    finally:
        up.stop()
    assert "Traceback" not in done.stderr and "accept" not in done.stderr and "Error handling" not in done.stderr, \
        done.stderr[-3000:]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    assert run["status"] == "pass" and "call -> 200" in run["output_excerpt"], run
    notes = run["notes"]
    assert len(notes) == 2, notes
    refused = re.fullmatch(r"recorder: ([\d,]+) connections refused: this run's agent held more than 64 open to "
                           r"the recorder at once", notes[1])
    assert refused and int(refused[1].replace(",", "")) >= 1000, notes
    assert notes[0].startswith("recorder: 3 malformed requests answered 400 (the first: BadHttpMethod: "), notes
    assert [r["path"] for r in up.requests] == ["/v1/messages"]


# scarbook out of descriptors for another reason than the door's connections: what asyncio could not
# accept is the run's one line too (the cap above keeps a flood from getting here).
OUT_OF_FDS = r'''
import asyncio, os, resource, socket, subprocess, sys, tempfile
from scarbook.record import Recorder, RecordSettings

async def main():
    recorder = Recorder(RecordSettings(), env={})
    await recorder.start()
    token = await recorder.open_run("c", 1, os.path.join(tempfile.mkdtemp(), "t.jsonl"))
    port = recorder.doors[token].port
    client = subprocess.Popen([sys.executable, "-c", f"import socket, time; s = [socket.create_connection(('127.0.0.1', {port})) for _ in range(5)]; time.sleep(60)"])
    spare = []
    try:
        while True:
            spare.append(socket.socket())
    except OSError:
        pass
    run = recorder.runs[token]
    for _ in range(400):  # until asyncio has tried to accept one
        if run.trouble:
            break
        await asyncio.sleep(0.05)
    for s in spare:
        s.close()
    client.kill()
    print(recorder.close_run(token).warnings)
    await recorder.stop()

resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
asyncio.run(main())
'''


def test_a_connection_scarbook_cannot_accept_is_one_line_on_its_run():
    done = subprocess.run([sys.executable, "-c", OUT_OF_FDS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    (warnings,) = done.stdout.splitlines()
    assert re.fullmatch(r"\['recorder: [\d,]+ connections? could not be accepted: scarbook ran out of file descriptors "
                        r"\(OSError: \[Errno 24\] Too many open files\)'\]", warnings), warnings
