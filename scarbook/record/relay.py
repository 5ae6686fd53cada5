"""The recorder on a Ray node: a small forwarding proxy in each Ray worker process, so an agent on any
node reaches the driver's recorder — and the real key never leaves the driver.

    relay = Relay()                                        # one per worker process, on its event loop
    env = await relay.open_run(driver, token, transcript, record_env)   # this run's door on this node
    ...                                                    # the agent's calls go on to the driver's door
    relayed, notes = await relay.close_run(token)          # bytes of the driver's recording copied here

Each run gets a door on the node (door.py: 127.0.0.1, and a Unix socket for a sandbox's bridge). A
call to it is passed on as sent — raw path, the agent's dummy key, the body streamed — to the run's
door on the driver, which checks the path, adds the key and records the call; the answer streams back.
Once it has ended (before the agent sees its end), the lines the driver's recorder appended to the
run's transcript since the last call are fetched (`GET /<token>/_scarbook/transcript?from=N`) and
appended to the run's transcript here: the trajectory checks on the node read them, and the
transcript comes back to the driver with the run's folder.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from scarbook.fs import safefs
from scarbook.record.door import Door, fd_budget, one_line
from scarbook.record.proxy import FETCH_CHUNK, HOP, error_response


@dataclass
class RelayedRun:
    driver: str  # http://HOST:PORT of the run's door on the driver
    token: str
    transcript: Path
    relayed: int = 0  # bytes of the driver's recording appended to the transcript here
    notes: list[str] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    trouble: dict[str, list[Any]] = field(default_factory=dict)

    def note_trouble(self, kind: str, detail: str) -> None:
        self.trouble.setdefault(kind, [0, detail])[0] += 1


class Relay:
    def __init__(self) -> None:
        self.runs: dict[str, RelayedRun] = {}
        self.doors: dict[str, Door] = {}
        self._budget = fd_budget()
        self._socket_dir = tempfile.mkdtemp(prefix="scarbook-relay-")
        self._client = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
                                             auto_decompress=False, connector=aiohttp.TCPConnector(limit=0),
                                             skip_auto_headers=("User-Agent",))

    async def open_run(self, driver: str, token: str, transcript: Path | str,
                       record_env: dict[str, str]) -> dict[str, str]:
        """The run's variables on this node: `record_env` (the driver's: dummies) with the base URLs,
        port and socket of the run's door here."""
        run = RelayedRun(driver.rstrip("/"), token, Path(transcript))
        door = Door(partial(self._handle, token), run.note_trouble, self._budget)
        await door.open(("127.0.0.1",), os.path.join(self._socket_dir, f"{len(self.doors)}-{time.monotonic_ns()}.s"))
        self.runs[token], self.doors[token] = run, door
        base = f"http://127.0.0.1:{door.port}/{token}"
        return {**record_env, "ANTHROPIC_BASE_URL": f"{base}/anthropic", "OPENAI_BASE_URL": f"{base}/openai",
                "SCARBOOK_RECORDER_PORT": str(door.port), "SCARBOOK_RECORDER_SOCKET": door.socket}

    async def close_run(self, token: str) -> tuple[int, list[str]]:
        """(bytes of the driver's recording copied into the run's transcript here, notes for the run)."""
        run, door = self.runs.pop(token), self.doors.pop(token)
        await door.close()
        notes = run.notes + [f"relay: {n} {kind} connection{'' if n == 1 else 's'} to this node's relay ({first})"
                             for kind, (n, first) in run.trouble.items()]
        return run.relayed, notes

    async def _handle(self, token: str, request: web.BaseRequest) -> web.StreamResponse:
        run = self.runs.get(token)
        if run is None or not request.raw_path.startswith(f"/{token}/"):
            return error_response(404, "not_found_error", "scarbook relay: this run has ended or the token is wrong")
        # as sent: the driver's door checks the path (endpoints.py) and says so on the run
        url = URL(run.driver + request.raw_path, encoded=True)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        resp: web.StreamResponse | None = None
        try:
            async with self._client.request(request.method, url, headers=headers, allow_redirects=False,
                                            data=request.content if request.body_exists else None) as up:
                resp = web.StreamResponse(status=up.status, reason=up.reason)
                for key, value in up.headers.items():
                    if key.lower() not in HOP:
                        resp.headers.add(key, value)
                await resp.prepare(request)
                async for chunk in up.content.iter_any():
                    await resp.write(chunk)
                await self._copy_recording(run)  # before the agent sees the end: its run may end with it
                await resp.write_eof()
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            if resp is None:
                why = f"the driver's recorder at {run.driver} could not be reached ({one_line(exc)})"
                if why not in run.notes:
                    run.notes.append(f"relay: {why}")
                return error_response(502, "api_error", f"scarbook relay: {why}")
        return resp

    async def _copy_recording(self, run: RelayedRun) -> None:
        """Append what the driver recorded for the run since the last copy to its transcript here."""
        async with run.lock:
            while True:
                url = URL(f"{run.driver}/{run.token}/_scarbook/transcript", encoded=True).with_query(start=run.relayed)
                async with self._client.get(url) as got:
                    data = await got.read() if got.status == 200 else b""
                if not data:
                    return
                folder, name = os.path.split(run.transcript)
                try:
                    fd = safefs.open_append(folder, name)
                    try:
                        os.write(fd, data)
                    finally:
                        os.close(fd)
                except (OSError, safefs.Refused) as exc:
                    note = f"relay: could not append the recorder's lines to {run.transcript}: {exc}"
                    if note not in run.notes:
                        run.notes.append(note)
                    return
                run.relayed += len(data)
                if len(data) < FETCH_CHUNK:
                    return

    async def stop(self) -> None:
        for token in list(self.runs):
            await self.close_run(token)
        await self._client.close()
