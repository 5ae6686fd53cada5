"""The per-loop epoll set that watches agents' pipes: level-triggered like add_reader, one set per
loop, and a callback that raises is reported without silencing the others."""

from __future__ import annotations

import asyncio
import os

from scarbook.proc.fdwatch import EpollReaders, readers_for


async def test_ready_pipes_reach_their_callbacks_and_an_error_is_reported() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    loop.set_exception_handler(lambda _loop, ctx: reported.append(ctx))
    readers = readers_for(loop)
    assert isinstance(readers, EpollReaders) and readers_for(loop) is readers
    (r1, w1), (r2, w2) = os.pipe(), os.pipe()
    got: list[bytes] = []
    done = loop.create_future()

    def bad() -> None:
        os.read(r1, 10)
        raise RuntimeError("boom")

    def good() -> None:
        got.append(os.read(r2, 1))  # one byte per call: the rest must be reported again
        if len(got) == 3:
            done.set_result(None)

    readers.add(r1, bad)
    readers.add(r2, good)
    os.write(w1, b"x")
    os.write(w2, b"abc")
    await asyncio.wait_for(done, 5)
    readers.remove(r1)
    readers.remove(r2)
    readers.remove(r2)  # removing twice is harmless
    assert got == [b"a", b"b", b"c"]
    assert [str(c["exception"]) for c in reported] == ["boom"]
    assert reported[0]["message"] == f"exception in the reader of fd {r1}"
    for fd in (r1, w1, r2, w2):
        os.close(fd)


def test_each_loop_has_its_own_set() -> None:
    async def which() -> EpollReaders:
        return readers_for(asyncio.get_running_loop())

    a, b = asyncio.run(which()), asyncio.run(which())
    assert a is not b
