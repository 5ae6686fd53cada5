"""A loopback port that leads out of a sandbox through one Unix socket, then the program.

    python -I scarbook/proc/bridge.py SOCKET PORT -- PROGRAM ARGS...

Inside a sandbox without network (its own network namespace: only `lo`), this listens on
127.0.0.1:PORT, pipes every connection to the Unix socket SOCKET (bound into the sandbox from
outside: the model-call recorder's), runs PROGRAM with the same stdin, stdout and stderr, and ends
as it ended (its exit code, or the same signal). So the agent reaches exactly one thing outside —
the recorder, at the base URL it was given — and nothing else. Standard library only.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

CHUNK = 1 << 16


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(CHUNK):
            dst.write(data)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()
    except (ConnectionError, OSError):
        dst.close()


async def _connect(sock: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_unix_connection(sock)
    except OSError:
        writer.close()
        return
    except asyncio.CancelledError:  # the program ended first: see below
        writer.close()
        return
    try:
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer), return_exceptions=True)
    except asyncio.CancelledError:
        # The program ended with this connection still open (a keep-alive): asyncio.run cancels it.
        # Ended here as a plain return, not as cancelled: Python 3.11's stream callback reads a
        # cancelled task's exception and prints "Exception in callback ... CancelledError" to the
        # agent's stderr, which is the run's.
        pass
    for w in (writer, up_writer):
        w.close()


async def bridge(sock: str, port: int, argv: list[str]) -> int:
    server = await asyncio.start_server(lambda r, w: _connect(sock, r, w), "127.0.0.1", port)
    try:
        proc = await asyncio.create_subprocess_exec(*argv)
        return await proc.wait()
    finally:
        server.close()


def main(args: list[str]) -> int:
    if len(args) < 4 or args[2] != "--":
        print("usage: bridge.py SOCKET PORT -- PROGRAM ARGS...", file=sys.stderr)
        return 2
    try:
        code = asyncio.run(bridge(args[0], int(args[1]), args[3:]))
    except OSError as exc:  # the port or the program: said as the program's own failure would be
        print(f"scarbook bridge: {exc}", file=sys.stderr)
        return 127
    if code < 0:  # killed by a signal: end by the same one, so the run says so
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
