"""What the recorder's hostile-agent tests share: a loopback "model API" that records every request
that reaches it (method, raw path, headers, body size), a hostile agent script, and a project whose
command agent is that script, recorded.

    up = Upstream().start()        # answers /v1/messages and /chat/completions; anything else: 200 "reached"
    up.redirect_to = other.url     # answer the Messages call with a 307 there instead
    up.statuses.append(529)        # answer the next call with this status
    up.requests                    # [{"method", "path", "headers", "bytes", "text"}] in arrival order
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SECRET = "sk-real-secret-never-leaves-scarbook"

# A raw-HTTP agent's first two model calls: call 1 read whole, call 2 streamed and open (`r` its response) for the
# rest of the agent's code to read as much of as it wants.
TWO_CALLS = r'''
import http.client, json, os, sys, time, urllib.parse
u = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])

def call(stream):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    body = {"model": "claude-test", "max_tokens": 60000, "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    c.request("POST", u.path + "/v1/messages", json.dumps(body), {"content-type": "application/json"})
    return c, c.getresponse()

c, r = call(False)
r.read()
c.close()
c, r = call(True)
'''

MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "end_turn",
           "content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 11, "output_tokens": 2}}


class Upstream:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.redirect_to = ""
        self.statuses: deque[int] = deque()
        self.echo_headers = False  # answer with the request's headers in the body (what a thief sends back)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Upstream:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        up = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(size) if size else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                up.requests.append({"method": self.command, "path": self.path, "headers": headers, "bytes": len(body),
                                    "text": body[:2000].decode("utf-8", "replace")})
                if up.echo_headers:
                    return self._send(200, json.dumps({"stolen": headers}).encode())
                if up.redirect_to and self.path.startswith("/v1/messages"):
                    return self._send(307, b"", {"location": up.redirect_to + "/steal"})
                if up.statuses:
                    status = up.statuses.popleft()
                    return self._send(status, json.dumps({"type": "error", "error": {
                        "type": "overloaded_error" if status == 529 else "api_error", "message": "scripted"}}).encode())
                if self.path.split("?")[0] == "/v1/messages":
                    return self._send(200, json.dumps(MESSAGE).encode())
                if self.path.split("?")[0].endswith("/chat/completions"):
                    return self._send(200, json.dumps({"object": "chat.completion", "model": "gpt-test", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 1}}).encode())
                self._send(200, json.dumps({"reached": self.path}).encode())

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler


# The hostile agent: argv[1] names the attack; it prints one line per request it made (`PATH -> STATUS`)
# and writes out.txt at the end, so its run passes when the proxy held (the case checks out.txt only).
ATTACKER = r'''
import http.client, json, os, sys, urllib.parse
base = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
KEY = os.environ.get("ANTHROPIC_API_KEY", "")

def send(path, body=b"", method="POST", chunks=None):
    c = http.client.HTTPConnection(base.hostname, base.port, timeout=30)
    try:
        c.putrequest(method, base.path + path, skip_accept_encoding=True)
        c.putheader("x-api-key", KEY)
        c.putheader("content-type", "application/json")
        if chunks is None:
            c.putheader("content-length", str(len(body)))
        else:
            c.putheader("transfer-encoding", "chunked")
        c.endheaders()
        if chunks is None:
            c.send(body)
        else:
            for ch in chunks:
                c.send(b"%x\r\n%s\r\n" % (len(ch), ch))
            c.send(b"0\r\n\r\n")
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except OSError as exc:  # a proxy that refuses may close the connection while it is sent
        return 0, {}, repr(exc).encode()
    finally:
        c.close()

def call(text="write hello"):
    return json.dumps({"model": "claude-test", "max_tokens": 10,
                       "messages": [{"role": "user", "content": text}]}).encode()

def say(path, status, headers, data):
    print(f"{path} -> {status} {headers.get('location', '')} {data[:300]!r}")

attack = sys.argv[1]
if attack == "traversal":
    for path in ("/v1/../../admin/secret", "/v1/%2e%2e/%2e%2e/admin/secret", "/v1/..%2f..%2fadmin/secret",
                 "/v1/messages/../../../admin/secret", "/v1//messages", "/v1/models"):
        say(path, *send(path, call(), method="GET" if path == "/v1/models" else "POST"))
elif attack == "redirect":
    say("/v1/messages", *send("/v1/messages", call()))
elif attack == "big":
    size = int(sys.argv[2])
    big = call("x" * size)
    say("big", *send("/v1/messages", big))
    say("big-chunked", *send("/v1/messages", chunks=[big[i:i + 65536] for i in range(0, len(big), 65536)]))
    say("under", *send("/v1/messages", call("y" * int(sys.argv[3]))))
elif attack == "hardlink":
    os.link(sys.argv[2], os.environ["SCARBOOK_TRANSCRIPT"])
    say("/v1/messages", *send("/v1/messages", call()))
say("/v1/messages", *send("/v1/messages", call()))
open("out.txt", "w").write("hello")
'''

CASE = """\
id: c
task: write hello to out.txt
checks:
  - {type: contains, path: out.txt, text: hello}
"""


# A model call as a hostile agent script makes it: `call(url, text)` POSTs one Messages request to the base
# URL `url` (any run's), reads the whole answer, and gives its status (or the name of the error).
CALL = r'''
import http.client, json, urllib.parse
def call(url, text):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        body = json.dumps({"model": "claude-test", "max_tokens": 5, "messages": [{"role": "user", "content": text}]})
        c.request("POST", u.path + "/v1/messages", body, {"content-type": "application/json"})
        r = c.getresponse()
        r.read()  # the whole answer, as a client does: its recording is in before its end
        return r.status
    except OSError as exc:
        return type(exc).__name__
    finally:
        c.close()
'''


def hostile_project(project, upstream: Upstream, attack: list[str], *, isolation: str = "none",
                    record: str = "", extra: str = "", script: str = ATTACKER, runs: int = 1,
                    concurrency: int | None = None, retry_infra: int = 0) -> Path:
    """The project's agent: `script` (ATTACKER; in the project folder, which the sandbox shows) with
    `attack` as its arguments; `runs` runs (all at once unless `concurrency`); recorded, upstream
    `upstream`; the real key in scarbook's environment (the caller's monkeypatch)."""
    path = project.root / "agent.py"
    path.write_text(script)
    argv = json.dumps([sys.executable, str(path), *attack])
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: {argv}}}
        runs: {runs}
        concurrency: {concurrency or runs}
        timeout_s: 60
        retry_infra: {retry_infra}
        isolation: {isolation}
        record: {{anthropic: {upstream.url}, openai: {upstream.url}/v1{record}}}
        """) + extra)
    project.case("c", CASE)
    return path


def sandbox_or_skip(root: Path) -> None:
    import pytest

    from scarbook.agents.sandbox import SandboxUnavailable, require_sandbox

    try:
        require_sandbox(root)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
