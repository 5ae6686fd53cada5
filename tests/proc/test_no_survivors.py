"""Issue 25 (4/5): scarbook SIGKILLed mid-run. Its agent dies with it (PR_SET_PDEATHSIG on Linux); the
agent's setsid grandchildren, which nothing can tie to scarbook's death, are killed by the next
session's start and reported. Real processes: `scarbook eval` in a subprocess, killed for real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from scarbook.proc import leftovers
from tests.helpers.proc_helpers import DAEMON, alive

pytestmark = [pytest.mark.needs_proc]
SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]

# The agent notes its own pid, starts a daemon (double fork + setsid: it leaves the agent's process
# group and session, keeping the run tag) that notes its pid, then sleeps past any test.
AGENT = textwrap.dedent("""
    import os, sys, time
    def note(pid):
        open(os.path.join(sys.argv[1], f"pid-{pid}"), "w").close()
    open(os.path.join(sys.argv[1], f"agent-{os.getpid()}"), "w").close()
""") + textwrap.dedent(DAEMON) + "time.sleep(120)\n"


def _wait_for(folder: Path) -> tuple[int, int]:
    """The agent's pid and its daemon's, once both are noted."""
    for _ in range(2000):
        agent, daemon = list(folder.glob("agent-*")), list(folder.glob("pid-*"))
        if agent and daemon:
            return int(agent[0].name.split("-")[1]), int(daemon[0].name.split("-")[1])
        time.sleep(0.01)
    raise AssertionError(f"the agent noted {sorted(p.name for p in folder.iterdir())}")


def _gone(pid: int, within: float = 10) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("portable, pdeathsig", [(False, "watchdog"), (True, "watchdog"), (False, "setpriv"),
                                               (False, "preexec")],
                         ids=["epoll-pidfd", "portable", "setpriv", "preexec-hook"])
def test_a_killed_scarbook_takes_its_agent_along_and_the_next_session_kills_the_rest(project, tmp_path, portable,
                                                                                     pdeathsig, alone):
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG and /proc are Linux's")
    notes = tmp_path / "pids"
    notes.mkdir()
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', AGENT, str(notes)])}}}\n"
                   "isolation: none\ntimeout_s: 100\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: x}]\n")
    env = {**os.environ, "SCARBOOK_PORTABLE_SPAWN": "1"} if portable else \
        {k: v for k, v in os.environ.items() if k != "SCARBOOK_PORTABLE_SPAWN"}
    env["SCARBOOK_PDEATHSIG"] = pdeathsig  # the watchdog (the default), setpriv --pdeathsig or the preexec_fn
    eval_ = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "--runs", "1", "-q"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    survivors: list[int] = []
    try:
        agent_pid, daemon_pid = _wait_for(notes)
        survivors = [agent_pid, daemon_pid]
        project.case("d", "id: d\ntask: t\nchecks: [{type: file_exists, path: x}]\n")
        project.config("agent: {type: command, argv: [\"true\"]}\nisolation: none\n")
        # once its scarbook is killed, the daemon is anybody's to sweep: any session starting meanwhile (another
        # xdist worker's) would kill it before this test's session could
        with alone():
            eval_.send_signal(signal.SIGKILL)
            eval_.wait(10)
            assert _gone(agent_pid), "the agent outlived the scarbook that ran it"
            assert alive(daemon_pid)  # left the group and the session: only a sweep finds it
            result = project.cli("eval", "d", "--runs", "1", "-q")
        assert _gone(daemon_pid, 5), result.output
        assert (f"warning: killed 1 process an earlier scarbook left running when it was killed: pid {daemon_pid} "
                f"(python") in result.stderr, result.stderr
    finally:
        if eval_.poll() is None:
            eval_.kill()
        for pid in survivors:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_process_whose_scarbook_still_runs_is_not_stale() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("/proc is Linux's")
    tagged = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                              env={**os.environ, leftovers.TAG_VAR: leftovers.new_tag("p")})
    try:
        time.sleep(0.2)
        assert f"pid {tagged.pid} (python" not in " ".join(leftovers.kill_stale("p"))
        assert tagged.poll() is None
    finally:
        tagged.kill()
        tagged.wait()


def test_without_pdeathsig_the_fallback_starts_programs_and_finds_nothing(monkeypatch) -> None:
    """macOS and Windows: no prctl and no /proc. Forced here by making the module see another
    platform: no hook (the program starts plainly), no sweep, and a run still works."""
    import asyncio

    from scarbook.agents import CommandAgent

    monkeypatch.setattr(leftovers, "sys", types.SimpleNamespace(platform="darwin"))
    assert leftovers.die_with_parent() is None
    assert leftovers.kill_stale("p") == []
    agent = CommandAgent([sys.executable, "-c", "print('ran')"], stdin=False)

    async def go():
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            return await agent.run("t", Path(d), {}, 20, Path(d), "1")

    assert asyncio.run(go()).output.strip() == "ran"


def test_programs_start_through_setpriv_unless_they_cannot_start(tmp_path, monkeypatch) -> None:
    """PR_SET_PDEATHSIG through `setpriv` (no preexec_fn, so Python can vfork: ~2 ms a start, not ~18);
    a program that cannot start keeps the preexec_fn path, so Popen raises its own error for it."""
    if not sys.platform.startswith("linux") or leftovers.shutil.which("setpriv") is None:
        pytest.skip("setpriv is util-linux's")
    monkeypatch.setenv("SCARBOOK_PDEATHSIG", "setpriv")  # (the default is the watchdog: no wrapper at all)
    env = {"PATH": os.environ["PATH"]}
    argv, hook = leftovers.dying_with_parent(["sh", "-c", "true"], cwd=tmp_path, env=env)
    assert argv[1:] == ["--pdeathsig", "KILL", "--", "sh", "-c", "true"] and hook is None
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    assert leftovers.dying_with_parent(["./agent.sh"], cwd=tmp_path, env=env)[1] is not None  # not executable
    script.chmod(0o755)
    assert leftovers.dying_with_parent(["./agent.sh"], cwd=tmp_path, env=env)[1] is None  # from the run's cwd
    script.write_text("#!/no/such/interpreter\n")  # execve's ENOENT: Popen says it, not setpriv's status
    assert leftovers.dying_with_parent(["./agent.sh"], cwd=tmp_path, env=env)[1] is not None
    bwrap = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "sh"]  # agents/sandbox.py's line
    assert leftovers.dying_with_parent(bwrap, cwd=tmp_path, env=env) == (bwrap, None)  # bwrap does it itself
    argv, hook = leftovers.dying_with_parent(["no-such-program-x"], cwd=tmp_path, env=env)
    assert argv == ["no-such-program-x"] and hook is not None
    with pytest.raises(FileNotFoundError):
        subprocess.Popen(argv, preexec_fn=hook)
    monkeypatch.setenv("SCARBOOK_PDEATHSIG", "preexec")
    argv, hook = leftovers.dying_with_parent(["sh"], cwd=tmp_path, env=env)
    assert argv == ["sh"] and hook is not None


def test_the_watchdog_kills_a_watched_group_when_its_scarbook_dies_and_spares_an_unwatched_one(tmp_path) -> None:
    """The default on Linux: no wrapper, no hook; one watchdog process per scarbook kills the process
    groups still listed when its pipe from scarbook closes (here: the process dies with os._exit)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the watchdog is Linux's here")
    pids = tmp_path / "pids"
    code = textwrap.dedent(f"""
        import os, subprocess, sys
        from scarbook.proc import leftovers, reaper, watchdog
        assert leftovers.dying_with_parent(["sleep", "60"], cwd=".", env=dict(os.environ)) == (["sleep", "60"], None)
        kept = subprocess.Popen(["sleep", "60"], start_new_session=True)
        gone = subprocess.Popen(["sleep", "60"], start_new_session=True)
        runs = [reaper.Run(leftovers.new_tag(), confined=True) for _ in range(2)]
        runs[0].started(kept.pid); runs[1].started(gone.pid)
        runs[0].ended()  # its run is over: no longer the watchdog's
        open({str(pids)!r}, "w").write(f"{{kept.pid}} {{gone.pid}}")
        os._exit(0)  # no cleanup: as if killed
    """)
    env = {k: v for k, v in os.environ.items() if k != "SCARBOOK_PDEATHSIG"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    kept, gone = map(int, pids.read_text().split())
    try:
        assert _gone(gone), "the watched group outlived its scarbook"
        assert alive(kept), "a group whose run was over was killed too"
    finally:
        for pid in (kept, gone):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_watchdog_that_cannot_start_falls_back_to_pdeathsig_not_to_nothing(monkeypatch) -> None:
    """No watchdog (its interpreter could not be started): the program gets PR_SET_PDEATHSIG (through
    setpriv, or the hook) instead of starting with no way to die with scarbook."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the watchdog is Linux's here")
    from scarbook.proc import watchdog

    def no_start(*args, **kw):
        raise OSError("no interpreter")

    monkeypatch.delenv("SCARBOOK_PDEATHSIG", raising=False)
    monkeypatch.setattr(watchdog, "_pipe", None)
    monkeypatch.setattr(watchdog.subprocess, "Popen", no_start)
    argv, hook = leftovers.dying_with_parent(["sh", "-c", "true"], cwd=".", env={"PATH": os.environ["PATH"]})
    assert argv[-3:] == ["sh", "-c", "true"]
    assert hook is not None or argv[1:4] == ["--pdeathsig", "KILL", "--"]
