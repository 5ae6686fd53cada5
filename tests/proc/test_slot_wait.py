"""A sandbox slot's run waited for on the event loop (proc/slot_wait.py), driven through the real command agent in
real slots (bwrap, the launcher as PID 1): the output caps, a task larger than the pipe on stdin, a cancel mid-run,
and no thread of scarbook's busy while a run waits."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import textwrap
import threading
import time
import traceback
import uuid
from pathlib import Path

import pytest

from scarbook.agents import make_agent
from scarbook.agents.command import MAX_STDERR
from tests.agents.test_slot import pytestmark as slot_marks

pytestmark = slot_marks


def py(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


@pytest.fixture
def in_slots(tmp_path: Path):
    """A factory of command agents whose runs go through sandbox slots kept in tmp_path/workspaces, and a new run
    folder (its logs beside it) per call of `run_dir`; every agent's slots are closed at the end."""
    workspaces = tmp_path / "workspaces"
    made = []

    def agent(argv: list[str], **spec):
        one = make_agent({"type": "command", "argv": argv, **spec}, tmp_path, isolation="sandbox",
                         private=(str(workspaces),), slots=True)
        made.append(one)
        return one

    def run_dir(k: int) -> tuple[Path, Path]:
        ws, logs = workspaces / "S" / "c" / str(k), workspaces / "S" / "c" / "logs"
        ws.mkdir(parents=True)
        logs.mkdir(exist_ok=True)
        return ws, logs

    yield agent, run_dir
    for one in made:
        one.slots.close_now()


async def test_fifty_megabytes_of_stdout_and_of_stderr_from_a_slot_run_are_capped(in_slots) -> None:
    agent, run_dir = in_slots
    flood = agent(py("""
        import sys
        for _ in range(50):
            sys.stdout.buffer.write(b'x' * (1 << 20))
            sys.stderr.buffer.write(b'e' * (1 << 20))
        """), max_output_bytes=1_000_000)
    ws, logs = run_dir(1)
    result = await flood.run("t", ws, {}, 60, logs, "1")
    assert (result.exit_code, result.crashed) == (0, None)
    assert result.output_truncated is True and result.output == "x" * 1_000_000
    assert Path(result.stderr_path).read_bytes() == b"e" * MAX_STDERR + b"\n[scarbook: stderr truncated]\n"
    assert len(slot_bwraps()) == 1 and ws.is_dir()  # it ran in a slot; its folder is where it belongs


async def test_a_task_larger_than_the_pipe_reaches_a_slot_run_s_stdin_whole(in_slots) -> None:
    agent, run_dir = in_slots
    task = "line of the task\n" * 40_000  # 680 KB: ten times what a pipe holds before it blocks
    reader = agent(py("import sys, hashlib; d = sys.stdin.buffer.read(); print(len(d), hashlib.sha1(d).hexdigest())"))
    ws, logs = run_dir(1)
    result = await reader.run(task, ws, {}, 60, logs, "1")
    assert result.output.split() == [str(len(task)), hashlib.sha1(task.encode()).hexdigest()]
    ignorer = agent(py("print('not reading')"))  # exits with 680 KB unread in its stdin pipe
    ws, logs = run_dir(2)
    result = await ignorer.run(task, ws, {}, 60, logs, "2")
    assert (result.exit_code, result.crashed, result.output) == (0, None, "not reading\n")


def slot_bwraps() -> list[int]:
    """This process's bwrap children: one per sandbox slot."""
    me, found = str(os.getpid()), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                name, rest = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)
            except OSError:
                continue
            if rest.split()[1] == me and name.endswith("(bwrap"):
                found.append(int(entry))
    return found


def started(ws: Path) -> bool:
    """The run in `ws` (workspaces/S/c/k) has started: its `started` file is in its folder (a slot's run sees its
    folder where it is)."""
    return (ws / "started").exists()


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


async def wait_for(predicate, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "waited too long"
        await asyncio.sleep(0.02)


async def test_a_cancelled_slot_run_kills_its_agent_gives_its_folder_back_and_its_slot_serves_on(in_slots) -> None:
    agent, run_dir = in_slots
    marker = f"scar-wait-{uuid.uuid4().hex[:8]}"
    waits = agent(py(f"""
        import os, time
        if os.path.exists("wait"):
            open("kept.txt", "w").write("kept")
            open("started", "w").close()
            time.sleep(60)  # {marker}
        print(os.getcwd())
        """))
    ws, logs = run_dir(1)
    (ws / "wait").touch()
    run = asyncio.create_task(waits.run("t", ws, {}, 60, logs, "1"))
    await wait_for(lambda: started(ws))
    assert processes_with(marker)
    (slot,) = slot_bwraps()
    start = time.monotonic()
    run.cancel()
    await asyncio.sleep(0)
    run.cancel()  # a second cancel while the kill's answer is awaited changes nothing
    with pytest.raises(asyncio.CancelledError):
        await run
    assert time.monotonic() - start < 5  # killed through its pidfd at once, not at its timeout
    assert processes_with(marker) == []
    assert sorted(p.name for p in ws.iterdir()) == ["kept.txt", "started", "wait"]  # its folder holds all it wrote
    ws, logs = run_dir(2)
    result = await waits.run("t", ws, {}, 60, logs, "2")
    assert (result.exit_code, result.crashed) == (0, None)
    assert slot_bwraps() == [slot]  # the same slot served it


async def test_a_slot_run_is_waited_for_on_the_loop_with_no_thread_of_scarbook_busy(in_slots) -> None:
    agent, run_dir = in_slots
    sleeper = agent(py("open('started', 'w').close(); import time; time.sleep(1)"))
    ws, logs = run_dir(1)
    first = await sleeper.run("t", ws, {}, 60, logs, "1")  # the slot started (on its own thread)
    assert first.exit_code == 0
    ws, logs = run_dir(2)
    run = asyncio.create_task(sleeper.run("t", ws, {}, 60, logs, "2"))
    await wait_for(lambda: started(ws))
    frames = sys._current_frames()
    stacks = {t.name: "".join(traceback.format_stack(frames[t.ident])) for t in threading.enumerate()
              if t.name == "scarbook-slot" and t.ident in frames}
    ticks = 0
    while not run.done():
        ticks += 1
        await asyncio.sleep(0.01)
    assert (await run).exit_code == 0
    assert ticks > 20  # the loop served meanwhile
    assert stacks and all("self.calls.get()" in stack for stack in stacks.values()), stacks  # the slot's thread idle
