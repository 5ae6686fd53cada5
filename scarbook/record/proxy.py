"""The recorder's HTTP proxy: one aiohttp client per session, and a door per run (door.py: its own
port on 127.0.0.1 and its own Unix socket, open while the run runs).

Each run's agent gets base URLs with a per-run token in the path (`/<token>/anthropic/…`,
`/<token>/openai/…`) and a dummy in every credential variable it is passed (proc/credentials.py); the proxy
forwards only the API endpoints it knows (endpoints.py), swaps in the real credentials from
scarbook's own environment, never follows a redirect (the agent gets it as is), refuses a request
body over record.max_body_bytes before it is read whole, and passes the response through chunk by
chunk as it arrives (SSE too). When the response has ended, the call is appended to the run's
transcript (recording.py). Under replay the answer comes from the recorded session instead
(replay.py), until the fork.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from scarbook.proc import credentials
from scarbook.record import apis
from scarbook.record.door import Budget, Door, accept_trouble, fd_budget
from scarbook.record.endpoints import SHOWN, known, split_target
from scarbook.record.recording import SECRET_HEADERS, Body, RunRecording, RunSummary, safe_headers
from scarbook.record.replay import ReplaySource, difference, recorded_request, replay_body
from scarbook.record.settings import RecordSettings

DUMMY_KEY = "scarbook-recorder-no-real-key"  # what the agent gets: the proxy adds the real one
ALWAYS_DUMMY = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")  # an SDK refuses to start without one
HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
                 "trailer", "proxy-connection", "accept-encoding"})
UPSTREAM_FAILURE = (429, 529)  # and every 5xx: the model's side failed, not the agent
FETCH_CHUNK = 8 << 20  # bytes of a run's recording a relay gets per request
# How long a call the agent left goes on being read: after the agent has ended (Recorder.settle: its answer's end,
# and the usage that comes last, are then recorded and counted), or after it dropped the connection. Past it, the
# call is recorded as it stands, its tokens not counted.
SETTLE_S = 10.0


class Recorder:
    def __init__(self, settings: RecordSettings, replay: ReplaySource | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.settings, self.replay = settings, replay
        self.env = credentials.environ() if env is None else env  # (a session withholds them from os.environ)
        self.runs: dict[str, RunRecording] = {}
        self.doors: dict[str, Door] = {}
        self.hosts: tuple[str, ...] = ("127.0.0.1",)
        self._socket_dir = ""
        self._sockets = 0
        self._budget = Budget(cap=0)
        self._client: aiohttp.ClientSession | None = None
        self._closing: set[asyncio.Task] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handler_before: Any = None

    # -- the session's side ----------------------------------------------------------------------
    async def start(self, hosts: tuple[str, ...] = ("127.0.0.1",)) -> None:
        """Ready to open runs; each run's door listens on `hosts` (127.0.0.1, and the address Ray's
        nodes reach this machine at when runs go to a cluster)."""
        self.hosts = hosts
        self._budget = fd_budget()
        if sys.platform != "win32":  # (the sandbox is Linux's; Windows' asyncio has no Unix sockets)
            # each door on a Unix socket too: a sandbox without network reaches it only so (proc/bridge.py)
            self._socket_dir = tempfile.mkdtemp(prefix="scarbook-rec-")
        self._client = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30), auto_decompress=False,
            connector=aiohttp.TCPConnector(limit=0), skip_auto_headers=("User-Agent",))
        self._loop = asyncio.get_running_loop()
        self._handler_before = self._loop.get_exception_handler()
        self._loop.set_exception_handler(accept_trouble(self._trouble_of))

    async def stop(self) -> None:
        for token in list(self.doors):
            self.close_run(token)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        if self._client is not None:
            await self._client.close()
        if self._loop is not None:
            self._loop.set_exception_handler(self._handler_before)
            self._loop = None
        if self._socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    async def open_run(self, case_id: str, k: int, transcript: Path | str) -> str:
        """A new run's token, its door open."""
        token = secrets.token_urlsafe(16)
        run = RunRecording(case_id, k, Path(transcript), self.settings.max_body_bytes, secrets=self._secrets())
        door = Door(partial(self._handle, token), run.note_trouble, self._budget)
        self._sockets += 1
        await door.open(self.hosts, os.path.join(self._socket_dir, f"{self._sockets}.s") if self._socket_dir else "")
        self.runs[token], self.doors[token] = run, door
        return token

    async def settle(self, token: str) -> None:
        """The run's agent has ended: wait for its calls still going to end (at most SETTLE_S), so that its
        trajectory checks, its budget and --max-cost count them whole. (The proxy reads each to its end though
        the agent is gone: _forward.)"""
        run = self.runs.get(token)
        deadline = time.monotonic() + SETTLE_S
        while run is not None and run.open_calls and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def close_run(self, token: str) -> RunSummary:
        """The run's summary; its door closes (its token and port stop working now)."""
        run, door = self.runs.pop(token, None), self.doors.pop(token, None)
        if door is not None:
            task = asyncio.ensure_future(door.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        if run is None:
            return RunSummary()
        run.summary.warnings.extend(run.trouble_lines())
        run.unmeasured_left()
        if self.replay is not None and not run.summary.diverged:
            self._stopped_early(run)
        return run.summary

    def _stopped_early(self, run: RunRecording) -> None:
        """A replayed run whose agent made fewer calls than were recorded (before the fork, with --fork-at) did not
        behave as recorded: it diverged, as a call that differs does."""
        assert self.replay is not None
        recorded, made, fork = len(self.replay.calls_for(run.case_id, run.k)), run.summary.calls, self.replay.fork_at
        if recorded and made < (recorded if fork is None else min(fork, recorded)):
            run.summary.diverged = (f"replay diverged after call {made}: the agent stopped there, but the recorded run "
                                    f"made {recorded} model calls")

    def base_url(self, token: str) -> str:
        return f"http://127.0.0.1:{self.doors[token].port}/{token}"

    def relay_to(self, token: str) -> tuple[str, str]:
        """(http://HOST:PORT, token): where a relay on a Ray node (relay.py) reaches the run's door — the
        last of the hosts the recorder listens on (this machine's address on the cluster, when it has one)."""
        host = self.hosts[-1]
        return f"http://{host}:{self.doors[token].ports[host]}", token

    def env_for(self, token: str, passed: Sequence[str] = ()) -> dict[str, str]:
        """The run's variables: base URLs with its token, and the dummy in every credential variable the
        agent is passed (`passed`: its allow-list; ANTHROPIC_API_KEY and OPENAI_API_KEY always, for the SDKs)."""
        door, base = self.doors[token], self.base_url(token)
        dummies = {n: DUMMY_KEY for n in credentials.CREDENTIALS if n in passed or n in ALWAYS_DUMMY}
        return {"ANTHROPIC_BASE_URL": f"{base}/anthropic", "OPENAI_BASE_URL": f"{base}/openai", **dummies,
                # for a sandbox without network: the port its bridge opens inside, the socket it leads to
                "SCARBOOK_RECORDER_PORT": str(door.port), "SCARBOOK_RECORDER_SOCKET": door.socket}

    def _trouble_of(self, fd: int):
        for token, door in self.doors.items():
            if fd in door.listening:
                return self.runs[token].note_trouble
        return None

    def _secrets(self) -> tuple[str, ...]:
        return tuple(v for vendor in ("anthropic", "openai") for h in self._credentials(vendor).values()
                     for v in (h, h.removeprefix("Bearer ")))

    # -- one call ------------------------------------------------------------------------------------
    async def _handle(self, token: str, request: web.BaseRequest) -> web.StreamResponse:
        start = time.perf_counter()
        run = self.runs.get(token)
        target = split_target(request.raw_path, token) if run is not None else None
        if run is None or target is None:
            return error_response(404, "not_found_error", "scarbook recorder: this run has ended or the token is wrong")
        vendor, tail, query = target
        if vendor == "_scarbook" and tail == "transcript" and request.method == "GET":  # a Ray node's relay
            at = query.removeprefix("start=")
            since = run.written_since(int(at), FETCH_CHUNK) if at.isdigit() else b""
            return web.Response(body=since, content_type="application/octet-stream")
        if not known(vendor, tail):
            asked = request.raw_path.partition("?")[0][len(token) + 1:]
            run.note_trouble("path", asked[:200])
            return error_response(404, "not_found_error", f"scarbook recorder: {asked[:200]} is not an API endpoint the "
                                                  f"recorder forwards ({SHOWN})")
        api = apis.api_of(vendor, tail)
        data, size = await _read_capped(request, run.cap)
        if data is None:
            return self._too_big(run, request, api, tail, size, start)
        body = apis.parse_json(data) if data else None
        sent = body if body is not None else data.decode("utf-8", "replace")
        norm = apis.normalized(request.method, api, tail, sent)
        n = run.next_call()
        req: dict[str, Any] = {"method": request.method, "path": tail, "headers": safe_headers(request.headers)}
        if body is not None:
            req["body"] = run.compact(body, req)
        elif data:
            req["raw"] = data.decode("utf-8", "replace")
        call: dict[str, Any] = {"type": "model_call", "n": n, "api": api,
                                "model": str(body.get("model") or "") if isinstance(body, dict) else "",
                                "stream": bool(isinstance(body, dict) and body.get("stream")),
                                "request": req, "digest": apis.digest(norm)}
        if self.replay is not None:
            answered = await self._replayed(request, run, call, apis.normalized(request.method, api, tail, sent,
                                                                                pretty=True), start, body)
            if answered is not None:
                return answered
        return await self._forward(request, run, call, vendor, tail + (f"?{query}" if query else ""), data, body, start)

    def _too_big(self, run: RunRecording, request: web.BaseRequest, api: str, tail: str, size: int,
                 start: float) -> web.StreamResponse:
        """A request over record.max_body_bytes: refused before it was read whole, never forwarded."""
        n, cap = run.next_call(), run.cap
        why = f"the request body is over record.max_body_bytes ({cap} bytes)"
        run.warn(f"recorder: call {n}: a request of more than {cap} bytes was refused (record.max_body_bytes; "
                 "raise it in scarbook.yaml to let such requests through)")
        run.add({"type": "model_call", "n": n, "api": api, "model": "", "stream": False,
                 "request": {"method": request.method, "path": tail, "headers": safe_headers(request.headers),
                             "truncated": True, "bytes": size},
                 "response": {"status": 413}, "error": why, "latency_ms": _ms(start)}, api, None, None)
        return error_response(413, "request_too_large", f"scarbook recorder: {why}: not sent to the model API — raise "
                                                "record.max_body_bytes in scarbook.yaml")

    async def _replayed(self, request: web.BaseRequest, run: RunRecording, call: dict[str, Any], norm: str,
                        start: float, body: Any) -> web.StreamResponse | None:
        """The recorded answer to call n, a divergence error, or None (past the fork: go live)."""
        assert self.replay is not None
        n, fork = call["n"], self.replay.fork_at
        if fork is not None and n > fork and not run.summary.diverged:
            return None
        recorded = self.replay.calls_for(run.case_id, run.k)
        why = ""
        answer: tuple[int, str, bytes] | str = ""
        if run.summary.diverged:
            why = run.summary.diverged
        elif not recorded:
            why = (f"replay diverged at call {n}: session {self.replay.session_id} recorded no model calls for "
                   f"run {run.k} of {run.case_id}")
        elif n > len(recorded):
            why = f"replay diverged at call {n}: the recorded run made only {len(recorded)} model calls"
        elif recorded[n - 1].get("digest") != call["digest"]:
            why = (f"replay diverged at call {n} (recorded -, now +): "
                   f"{difference(recorded_request(recorded[n - 1]), norm)}")
        else:
            answer = replay_body(recorded[n - 1])
            if isinstance(answer, str):
                why = f"replay cannot answer call {n}: {answer}"
        damage = self.replay.damage(run.case_id, run.k)
        if why and damage and not run.summary.diverged:  # not the agent's doing: its recording is damaged
            why = f"replay cannot answer call {n}: {damage}"
        if why or isinstance(answer, str):
            why = why or "replay has no answer"
            run.summary.diverged = run.summary.diverged or why
            call["error"] = why
            call["response"] = {"status": 409}
            call["latency_ms"] = _ms(start)
            run.add(call, call["api"], body, None)
            return error_response(409, "invalid_request_error", f"scarbook: {why}")
        status, ctype, payload = answer
        resp = web.StreamResponse(status=status, headers={"content-type": ctype})
        await resp.prepare(request)
        await resp.write(payload)
        src = recorded[n - 1]
        call.update(response=src["response"], replayed=True, latency_ms=_ms(start), first_byte_ms=_ms(start),
                    usage=src.get("usage") or {})
        self._record(run, call, src["response"], body)  # before the end, as a live call's
        await resp.write_eof()
        return resp

    async def _forward(self, request: web.BaseRequest, run: RunRecording, call: dict[str, Any], vendor: str,
                       target: str, data: bytes, body: Any, start: float) -> web.StreamResponse:
        assert self._client is not None
        upstream = self.settings.anthropic if vendor == "anthropic" else self.settings.openai
        # as matched (endpoints.py): nothing to decode or normalise, and yarl must not do either
        url = URL(f"{upstream}/{target}", encoded=True)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP and k.lower() not in SECRET_HEADERS}
        credentials = self._credentials(vendor)
        if not credentials and not run.keyless_said:
            run.keyless_said = True
            names = "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN" if vendor == "anthropic" else "OPENAI_API_KEY"
            run.warn(f"recorder: call {call['n']} went to {upstream} with no key: scarbook's own environment has no "
                     f"{names} (the agent's key is never passed on; set it where scarbook runs)")
        headers.update(credentials)
        headers["accept-encoding"] = "identity"
        kept = Body(run.cap)
        first: float | None = None
        resp: web.StreamResponse | None = None
        head: dict[str, str] = {}
        n = call["n"]

        def as_it_stands(why: str = "the call was still going when the agent ended") -> None:
            call["error"] = why
            self._done(run, call, {"status": resp.status if resp is not None else None, "headers": head}, kept, body,
                       start, first, counted=False)

        run.summary.live += 1
        run.open_calls[n] = as_it_stands
        done = False
        try:
            # a redirect is the agent's to follow or not: followed here, it would take the real key along
            async with self._client.request(request.method, url, data=data, headers=headers,
                                            allow_redirects=False) as up:
                resp = web.StreamResponse(status=up.status, reason=up.reason)
                for key, value in up.headers.items():
                    if key.lower() not in HOP and key.lower() not in ("content-encoding",) and \
                            key.lower() not in SECRET_HEADERS and not any(s in value for s in run.secret_texts):
                        resp.headers.add(key, value)
                if up.headers.get("content-encoding"):
                    resp.headers["content-encoding"] = up.headers["content-encoding"]
                head.update(safe_headers(up.headers))
                await resp.prepare(request)
                gone, first = await self._relay(up, resp, kept, run, n)
                if n not in run.open_calls:  # recorded as it stood when the run ended
                    return resp
                # recorded before the response ends: an agent that exits on its last answer finds its
                # run's recording whole (the run is closed when the agent is done)
                done = True
                if gone == "cut":
                    run.summary.unmeasured.append(f"call {n}'s stream broke off after {kept.size:,} bytes, before its "
                                                  "end")
                    as_it_stands(f"the stream broke off after {kept.size} bytes (the agent dropped it)")
                    return resp
                self._done(run, call, {"status": up.status, "headers": head}, kept, body, start, first)
                if gone is None:
                    await resp.write_eof()
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            what = f"{type(exc).__name__}: {exc}".strip()
            if n not in run.open_calls:  # recorded as it stood when the run ended
                return resp if resp is not None else error_response(502, "api_error", "scarbook recorder: run ended")
            if resp is None:  # nothing sent yet: the agent gets a gateway error, as from any proxy
                why = f"the model API at {upstream} could not be reached ({what})"
                run.summary.failed_upstream(f"recorder: call {call['n']}: {why}")
                call.update(response={"status": 502}, error=why, latency_ms=_ms(start))
                run.add(call, call["api"], body, None)
                return error_response(502, "api_error", f"scarbook recorder: {why}")
            if not done:
                run.summary.unmeasured.append(f"call {n}'s stream broke off after {kept.size:,} bytes, before its end")
                as_it_stands(f"the stream broke off after {kept.size} bytes ({what})")
        return resp

    @staticmethod
    async def _relay(up: aiohttp.ClientResponse, resp: web.StreamResponse, kept: Body, run: RunRecording,
                     n: int) -> tuple[str | None, float | None]:
        """Pass the answer on chunk by chunk, each kept. An agent that drops it (or ends) gets no more, but the
        answer is read on, at most SETTLE_S, to its end, where its usage comes: None when the agent got it all,
        "gone" when the rest was read without it, "cut" when SETTLE_S ran out first; and when its first byte came. It
        stops at once when the run ended meanwhile (the call is then recorded as it stood)."""
        chunks = up.content.iter_any().__aiter__()
        gone_at: float | None = None
        first: float | None = None
        while n in run.open_calls:
            try:
                if gone_at is None:
                    chunk = await chunks.__anext__()
                else:
                    chunk = await asyncio.wait_for(chunks.__anext__(), max(0.0, gone_at + SETTLE_S - time.monotonic()))
            except StopAsyncIteration:
                break
            except TimeoutError:
                return "cut", first
            if first is None:
                first = time.perf_counter()
            kept.add(chunk)
            if gone_at is None:
                try:
                    await resp.write(chunk)
                except ConnectionError:  # the agent dropped the call, or ended
                    gone_at = time.monotonic()
        return (None if gone_at is None else "gone"), first

    def _done(self, run: RunRecording, call: dict[str, Any], response: dict[str, Any], kept: Body, body: Any,
              start: float, first: float | None, *, counted: bool = True) -> None:
        """Record the call; a recording that fails never breaks the agent's answer (said on the run). `counted=False`:
        recorded before its end, its usage so far no count of it."""
        try:
            self._finish(run, call, response, kept, body, start, first, counted)
        except Exception as exc:  # noqa: BLE001 — a response of a shape nobody foresaw
            run.warn(f"recorder: call {call['n']} could not be recorded ({type(exc).__name__}: {exc}); "
                     "the agent got the response")
        finally:
            run.open_calls.pop(call["n"], None)  # (recorded, or said it could not be: no longer open)

    def _finish(self, run: RunRecording, call: dict[str, Any], response: dict[str, Any], kept: Body, body: Any,
                start: float, first: float | None, counted: bool = True) -> None:
        call.update(latency_ms=_ms(start), first_byte_ms=_ms(start, first) if first is not None else None)
        status = response["status"]
        if status >= 500 or status in UPSTREAM_FAILURE:
            run.summary.failed_upstream(f"recorder: the model API answered call {call['n']} with HTTP {status}")
        elif 200 <= status < 300:
            run.summary.succeeded(call["n"])
        self._fill(response, kept, call, run)
        self._record(run, call, response, body, counted)

    def _fill(self, response: dict[str, Any], kept: Body, call: dict[str, Any], run: RunRecording) -> None:
        """The response as recorded: JSON `body`, SSE text `sse`, else `raw`; capped and marked."""
        raw = kept.bytes()
        ctype = str(response.get("headers", {}).get("content-type", ""))
        if kept.truncated:
            response.update(truncated=True, bytes=kept.size)
            run.warn(f"recorder: call {call['n']}: response of {kept.size} bytes recorded only to "
                     f"{run.cap} bytes (record.max_body_bytes); the agent got all of it")
        if "text/event-stream" in ctype:
            response["sse"] = raw.decode("utf-8", "replace")
            return
        parsed = None if kept.truncated else apis.parse_json(raw)
        if parsed is not None:
            response["body"] = parsed
        else:
            response["raw"] = raw.decode("utf-8", "replace")

    def _record(self, run: RunRecording, call: dict[str, Any], response: dict[str, Any], body: Any = None,
                counted: bool = True) -> None:
        api = call["api"]
        if body is None:
            body = call["request"].get("body")
        reply = None
        if not response.get("truncated"):
            events = apis.sse_events(response["sse"]) if "sse" in response else None
            reply = apis.fold(api, response.get("body"), events)
        ok = 200 <= int(response.get("status") or 0) < 300
        if reply is None and ok and api != "other" and not response.get("truncated") and "error" not in call:
            call["warning"] = f"the response is not {api} JSON or a stream of it: passed through, recorded raw"
            run.warn(f"recorder: call {call['n']}: {call['warning']}")
        if reply is not None and "usage" not in call and counted:
            call["usage"] = reply.usage
            if reply.model:
                call["model"] = reply.model
        call["response"] = response
        run.add(call, api, body, reply, counted=counted)

    def _credentials(self, vendor: str) -> dict[str, str]:
        if vendor == "anthropic":
            if self.env.get("ANTHROPIC_API_KEY"):
                return {"x-api-key": self.env["ANTHROPIC_API_KEY"]}
            if self.env.get("ANTHROPIC_AUTH_TOKEN"):
                return {"authorization": f"Bearer {self.env['ANTHROPIC_AUTH_TOKEN']}"}
            return {}
        return {"authorization": f"Bearer {self.env['OPENAI_API_KEY']}"} if self.env.get("OPENAI_API_KEY") else {}


async def _read_capped(request: web.BaseRequest, cap: int) -> tuple[bytes | None, int]:
    """The request's body and its size, or (None, the size seen) as soon as it is over `cap`: a body
    over the cap is never held whole, streamed (chunked) or not."""
    if request.content_length is not None and request.content_length > cap:
        return None, request.content_length
    chunks, size = [], 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        if size > cap:
            return None, size
        chunks.append(chunk)
    return b"".join(chunks), size


def _ms(start: float, end: float | None = None) -> float:
    return round(((time.perf_counter() if end is None else end) - start) * 1000, 3)


def error_response(status: int, kind: str, message: str) -> web.Response:
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)
