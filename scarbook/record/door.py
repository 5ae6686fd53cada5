"""Each run's own door into the recorder: an HTTP server on its own port (and Unix socket), open
while the run's agent runs, closed with the run — so a run's base URL stops working when its run
ends, and whatever arrives at a door is that run's doing.

What an agent does to its door is said on its run, one line per kind, never printed on scarbook's
stderr: connections over the cap (MAX_CONNECTIONS open at once for a run, and half of scarbook's file
descriptors for all runs together — the rest are closed as they arrive, so a flood of idle
connections cannot use up scarbook's descriptors), malformed requests (aiohttp answers 400; its log
line comes here), a connection the kernel could not accept (out of descriptors: asyncio's
exception handler is taken over for the recorder's sockets while it runs).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

MAX_CONNECTIONS = 64  # open at once to one run's door; an agent's client pool needs a handful
KEEPALIVE_S = 75.0  # an idle connection (before its first request too) is closed after this
SHUTDOWN_S = 1.0  # a request still going when the run ends gets this long

Trouble = Callable[[str, str], None]  # (kind, detail): said once per kind on the run


@dataclass
class Budget:
    """Connections open to every door of one recorder, against a cap that leaves scarbook the rest of
    its file descriptors."""

    cap: int
    live: int = 0


def fd_budget() -> Budget:
    """Half the file descriptors this process may open (its soft limit)."""
    try:
        import resource  # (not on Windows)

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        limit = 1 << 16 if soft == resource.RLIM_INFINITY else soft
    except ImportError:
        limit = 512
    return Budget(cap=max(MAX_CONNECTIONS, limit // 2))


class _Closed(asyncio.Protocol):
    """A connection over the cap: closed as soon as it is made."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.Transport):
            transport.abort()
        else:
            transport.close()


class _CappedServer(web.Server):
    def __init__(self, handler: Any, *, cap: int, budget: Budget, trouble: Trouble, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.cap, self.budget, self.trouble, self.live = cap, budget, trouble, 0

    def __call__(self) -> Any:  # the protocol factory: one call per accepted connection
        if self.live >= self.cap or self.budget.live >= self.budget.cap:
            why = (f"this run's agent held more than {self.cap} open to the recorder at once" if self.live >= self.cap
                   else f"the recorder's connections reached {self.budget.cap} (half of scarbook's file descriptors)")
            self.trouble("refused", why)
            return _Closed()
        self.live += 1
        self.budget.live += 1
        return super().__call__()

    def connection_lost(self, handler: Any, exc: BaseException | None = None) -> None:
        self.live -= 1
        self.budget.live -= 1
        super().connection_lost(handler, exc)


class _ToRun(logging.Handler):
    """aiohttp's server log for one door: each record becomes the run's trouble, not a traceback."""

    def __init__(self, trouble: Trouble) -> None:
        super().__init__(logging.DEBUG)
        self.trouble = trouble

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None and record.levelno < logging.WARNING:
            return
        if isinstance(exc, HttpProcessingError):
            self.trouble("malformed", one_line(exc))
        else:
            self.trouble("failed", one_line(exc) if exc is not None else record.getMessage())


def one_line(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class Door:
    """One run's listeners. `open` starts them, `close` ends them and the connections still open."""

    handler: Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]
    trouble: Trouble
    budget: Budget
    port: int = 0  # on the first host (127.0.0.1: the agent's base URLs)
    ports: dict[str, int] = field(default_factory=dict)  # host -> its port
    socket: str = ""
    listening: set[int] = field(default_factory=set)  # the listening sockets' fds (asyncio names them so)
    _server: _CappedServer | None = None
    _listeners: list[asyncio.Server] = field(default_factory=list)

    async def open(self, hosts: tuple[str, ...], socket_path: str = "") -> int:
        log = logging.Logger("scarbook.recorder.door")  # not registered: nothing else sees its records
        log.propagate = False
        log.addHandler(_ToRun(self.trouble))
        self._server = _CappedServer(self.handler, cap=MAX_CONNECTIONS, budget=self.budget, trouble=self.trouble,
                                     logger=log, access_log=None, keepalive_timeout=KEEPALIVE_S)
        loop = asyncio.get_running_loop()
        for host in hosts:
            listener = await loop.create_server(self._server, host, 0)
            self._listeners.append(listener)
            self.ports[host] = listener.sockets[0].getsockname()[1]
        self.port = self.ports[hosts[0]]
        if socket_path:
            try:
                self._listeners.append(await loop.create_unix_server(self._server, socket_path))
                self.socket = socket_path
            except OSError:  # no socket: a sandboxed agent then cannot reach the recorder (said as no calls)
                pass
        self.listening = {s.fileno() for listener in self._listeners for s in listener.sockets}
        return self.port

    async def close(self) -> None:
        for listener in self._listeners:
            listener.close()
        if self._server is not None:
            self._server.pre_shutdown()
            await self._server.shutdown(SHUTDOWN_S)
        if self.socket:
            try:
                os.unlink(self.socket)
            except OSError:
                pass


def accept_trouble(doors: Callable[[int], Trouble | None]) -> Callable[[asyncio.AbstractEventLoop, dict], None]:
    """An exception handler for the loop the recorder runs on: a connection one of its doors could not
    accept (out of file descriptors: asyncio retries a second later, and says so each time) is that
    run's trouble; anything else goes to the handler that was there before."""
    loop = asyncio.get_running_loop()
    before = loop.get_exception_handler()

    def handle(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        sock = context.get("socket")
        trouble = doors(sock.fileno()) if sock is not None and "accept" in str(context.get("message", "")) else None
        if trouble is not None:
            exc = context.get("exception")
            trouble("accept", one_line(exc) if isinstance(exc, BaseException) else str(context.get("message")))
        elif before is not None:
            before(loop, context)
        else:
            loop.default_exception_handler(context)

    return handle
