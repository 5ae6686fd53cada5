"""proc/trips.py: blocking calls off the event loop for less than asyncio.to_thread costs (issue 38.3).
Each result reaches the future it belongs to, on the loop that asked; an exception as it was raised; a
call whose awaiting was cancelled runs to its end without error; results that arrive together wake the
loop once; a closed loop does not stop the threads serving the next one; a forked child gets threads of
its own."""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
import threading
import time

import pytest

from scarbook.proc.trips import Trips, off_loop


async def test_each_result_and_each_exception_reach_their_own_future() -> None:
    def work(i: int) -> tuple[int, str]:
        if i % 5 == 0:
            raise ValueError(f"no {i}")
        return i * i, threading.current_thread().name

    futures = [off_loop(work, i) for i in range(60)]
    got = await asyncio.gather(*futures, return_exceptions=True)
    for i, result in enumerate(got):
        if i % 5 == 0:
            assert isinstance(result, ValueError) and str(result) == f"no {i}"
        else:
            square, thread = result
            assert square == i * i
            assert thread.startswith("scarbook-trip") and thread != threading.current_thread().name


async def test_results_that_arrive_together_wake_the_loop_once() -> None:
    trips = Trips(threads=3, name="test-trip")
    gate = threading.Barrier(4)  # the three threads and this test
    woken: list[int] = []
    loop = asyncio.get_running_loop()
    real = loop.call_soon_threadsafe

    def counted(callback, *args, **kwargs):
        woken.append(1)
        return real(callback, *args, **kwargs)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
    try:
        futures = [trips.call(gate.wait, 30) for _ in range(3)]
        gate.wait(30)
        landing = trips._landings[loop]
        end = time.monotonic() + 30
        while len(landing.results) < 3:  # the loop does not run meanwhile: the results wait for it together
            assert time.monotonic() < end, "the three calls never finished"
            time.sleep(0.001)
        await asyncio.gather(*futures)
    finally:
        del loop.call_soon_threadsafe
    assert woken == [1]
    assert landing.results == [] and not landing.waking


async def test_a_call_whose_awaiting_was_cancelled_runs_to_its_end_and_the_threads_go_on() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow() -> str:
        release.wait(30)
        finished.set()
        return "late"

    errors: list[dict] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
    fut = off_loop(slow)
    fut.cancel()
    release.set()
    assert await asyncio.to_thread(finished.wait, 30)
    assert await off_loop(str.upper, "next") == "NEXT"  # the thread took the next call
    assert fut.cancelled() and errors == []


def test_a_closed_loop_does_not_stop_the_threads_serving_the_next_one() -> None:
    trips = Trips(threads=1, name="test-trip")
    release = threading.Event()

    async def leave_one_running() -> None:
        trips.call(release.wait, 30)  # never awaited: its loop closes first

    asyncio.run(leave_one_running())
    release.set()

    async def next_loop() -> str:
        return await trips.call(str.lower, "SERVED")

    assert asyncio.run(next_loop()) == "served"


def _in_child(out) -> None:
    async def ask() -> str:
        return await off_loop(lambda: threading.current_thread().name)

    out.send(asyncio.run(ask()))


@pytest.mark.skipif(sys.platform != "linux", reason="fork")
async def test_a_forked_child_gets_threads_of_its_own() -> None:
    assert (await off_loop(threading.current_thread)).name.startswith("scarbook-trip")  # the parent's threads run
    mine, theirs = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=_in_child, args=(theirs,))
    child.start()
    assert mine.poll(30), "the forked child's trip never came back"
    assert mine.recv().startswith("scarbook-trip")
    child.join(30)
    assert child.exitcode == 0
