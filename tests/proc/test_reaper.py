"""Issue 38.1/38.2 and 37.7: every child reaped, a sweep that costs nothing per run, a stale sweep that
touches only its own project's processes. Real processes throughout: `scarbook eval` in a subprocess
that counts its own zombie children while it runs, real daemons (double fork + setsid)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scarbook.agents.sandbox import find_bwrap, require_sandbox
from scarbook.errors import ScarbookError
from scarbook.proc import leftovers, reaper
from scarbook.proc.spawn import run_program
from tests.helpers.proc_helpers import DAEMON, alive, tagged

pytestmark = [pytest.mark.needs_proc]
LINUX = sys.platform.startswith("linux")


def _sandbox_works() -> bool:
    try:
        require_sandbox(Path.cwd())
    except ScarbookError:
        return False
    return True


needs_sandbox = pytest.mark.skipif(not LINUX or find_bwrap() is None or not _sandbox_works(),
                                   reason="bubblewrap cannot start here")

# `scarbook eval` in this process, with a thread counting its zombie children every 10 ms; prints the
# exit code, the most zombies seen at once and how many are left at the end.
COUNTING_EVAL = textwrap.dedent("""
    import json, os, sys, threading, time
    from scarbook.cli import main

    def zombies():
        n = 0
        for tid in os.listdir("/proc/self/task"):
            try:
                kids = open(f"/proc/self/task/{tid}/children").read().split()
            except OSError:
                continue
            for kid in kids:
                try:
                    n += open(f"/proc/{kid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
                except OSError:
                    pass
        return n

    most, done = [0], threading.Event()
    def sample():
        while not done.wait(0.01):
            most[0] = max(most[0], zombies())
    threading.Thread(target=sample, daemon=True).start()
    try:
        main(sys.argv[1:])
        code = 0
    except SystemExit as exc:
        code = exc.code
    done.set()
    print(json.dumps({"code": code, "most": most[0], "end": zombies()}), file=sys.__stderr__)
""")


def _counting_eval(project, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SCARBOOK_PORTABLE_SPAWN"}
    done = subprocess.run([sys.executable, "-c", COUNTING_EVAL, "-C", str(project.root), "eval", *args],
                          capture_output=True, text=True, timeout=600, env=env)
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("isolation", [pytest.param("sandbox", marks=needs_sandbox), "none"])
def test_200_runs_leave_no_zombie_behind_nor_pile_them_up_while_they_run(project, isolation) -> None:
    """Before: one zombie bwrap per sandboxed run (bwrap's namespace init, orphaned to the subreaper
    and never reaped): 200 after 200 runs."""
    project.config(f'agent: {{type: command, argv: ["sh", "-c", "echo x > out.txt"]}}\nisolation: {isolation}\n')
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: out.txt}]\n")
    seen = _counting_eval(project, "--runs", "200", "-j", "4", "-q")
    assert seen["code"] == 0, seen
    assert seen["end"] == 0, f"{seen['end']} zombie children after 200 {isolation} runs"
    # a program is a zombie from its exit until its pidfd is read: at most one a running program
    assert seen["most"] <= 8, f"{seen['most']} zombies at once during the session"


# The agent starts a daemon (double fork + setsid, tag kept), notes its pid beside the workspace, writes out.txt.
DAEMON_AGENT = ("import os, sys, time\n"
                "RUN = os.environ['SCARBOOK_RUN']\n"
                "def note(pid):\n    open(os.path.join(os.environ['NOTES'], f'pid-{pid}-run{RUN}'), 'w').close()\n"
                + textwrap.dedent(DAEMON)
                + "for _ in range(1000):  # until this run's daemon has noted itself (then it only sleeps)\n"
                  "    if any(f.endswith(f'-run{RUN}') for f in os.listdir(os.environ['NOTES'])):\n        break\n"
                  "    time.sleep(0.01)\n"
                + "open('out.txt', 'w').write('x')\n")


def _daemon_project(project, tmp_path: Path, isolation: str) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    agent = project.root / "agent.py"
    agent.write_text(DAEMON_AGENT)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}], env: [NOTES]}}\n"
                   f"isolation: {isolation}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: out.txt}]\n")
    return notes


def test_a_daemon_an_unconfined_run_leaves_is_gone_when_its_run_ends(project, tmp_path, monkeypatch) -> None:
    notes = _daemon_project(project, tmp_path, "none")
    monkeypatch.setenv("NOTES", str(notes))
    seen = _counting_eval(project, "--runs", "3", "-q")
    assert seen == {"code": 0, "most": seen["most"], "end": 0}
    pids = [int(p.name.split("-")[1]) for p in notes.glob("pid-*")]
    assert len(pids) == 3 and not [p for p in pids if alive(p)]


@needs_sandbox
def test_a_sandboxed_run_has_no_subreaper_and_its_setsid_grandchild_is_gone_after_it(project, tmp_path,
                                                                                   monkeypatch) -> None:
    """The PID namespace ends the daemon (its pid inside the sandbox means nothing here: found by its tag)."""
    _daemon_project(project, tmp_path, "sandbox")
    monkeypatch.setenv("NOTES", ".")  # the workspace: the daemon notes itself there
    before = reaper._epoch
    result = project.cli("eval", "--runs", "2", "-q", "--keep-all")
    assert result.exit_code == 0, result.output
    session = project.load().history.sessions()[0].id
    assert len(list((project.workspaces / session / "c").glob("*/pid-*"))) == 2  # both daemons started
    assert reaper._epoch == before and not reaper.subreaper_on()  # never a subreaper: nothing to sweep
    assert tagged(f"{leftovers.project_tag(project.root)}:{os.getpid()}.") == []


# -- 37.7: the stale sweep is the project's, not the machine's --------------------------------------------

def _stale_process(project_tag: str) -> subprocess.Popen:
    """A process carrying the tag of a scarbook that is gone (a reaped child's pid) and `project_tag`."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    env = {**os.environ, leftovers.TAG_VAR: f"{project_tag}:{gone.pid}.1.1"}
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    for _ in range(1000):  # until it has exec'd (before, /proc shows this process's environment)
        if f"{leftovers.TAG_VAR}={project_tag}:".encode() in Path(f"/proc/{proc.pid}/environ").read_bytes():
            return proc
        time.sleep(0.01)
    raise AssertionError("the stale process never started")


def test_a_session_kills_what_a_killed_scarbook_left_in_its_project_and_spares_another_projects(project,
                                                                                                  tmp_path) -> None:
    if not LINUX:
        pytest.skip("/proc is Linux's")
    other, mine = _stale_process(leftovers.project_tag(tmp_path / "elsewhere")), _stale_process(
        leftovers.project_tag(project.root))
    try:
        project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: x}]\n")
        project.config('agent: {type: command, argv: ["true"]}\nisolation: none\n')
        result = project.cli("eval", "--runs", "1", "-q")
        assert f"pid {mine.pid} (python" in result.stderr, result.stderr
        assert mine.wait(10) == -9
        assert other.poll() is None, "another project's leftover was killed"
        assert f"pid {other.pid}" not in result.stderr
    finally:
        for p in (other, mine):
            p.kill()
            p.wait()


# -- the fallbacks, forced -----------------------------------------------------------------------------

async def test_without_a_children_list_a_run_ends_and_nothing_is_swept(tmp_path, monkeypatch) -> None:
    """A kernel without /proc/PID/task/TID/children (or a platform without /proc): the run ends as
    usual; nothing is read, nothing swept."""
    from scarbook.proc.spawn import run_program

    real_open = os.open

    def no_children(path, *a, **kw):
        if str(path).endswith("/children"):
            raise FileNotFoundError(path)
        return real_open(path, *a, **kw)

    monkeypatch.setattr(reaper.os, "open", no_children)
    out: list[bytes] = []
    done = await run_program(["sh", "-c", "echo ok"], cwd=tmp_path, env=None, stdin_data=None,
                             on_stdout=out.append, on_stderr=None, timeout_s=20)
    assert (done.returncode, b"".join(out)) == (0, b"ok\n")
    assert reaper._main_children() == set()


def test_where_no_subreaper_can_be_had_nothing_is_swept_and_runs_go_on(monkeypatch, tmp_path) -> None:
    """macOS and Windows: prctl is Linux's. The count goes up and down, the subreaper never turns on,
    and a sweep finds nothing to do."""
    import asyncio
    import types

    from scarbook.proc.spawn import run_program

    monkeypatch.setattr(reaper, "sys", types.SimpleNamespace(platform="darwin"))
    monkeypatch.setattr(reaper, "_on", False)
    epoch = reaper._epoch

    async def go():
        return await run_program(["sh", "-c", "true"], cwd=tmp_path, env=None, stdin_data=None,
                                 on_stdout=lambda b: None, on_stderr=None, timeout_s=20)

    assert asyncio.run(go()).returncode == 0
    assert not reaper.subreaper_on() and reaper._epoch == epoch and reaper._unconfined == 0


def test_the_subreaper_is_on_only_while_an_unconfined_program_runs(tmp_path) -> None:
    if not LINUX:
        pytest.skip("prctl is Linux's")
    import asyncio

    from scarbook.proc.spawn import run_program

    seen: list[tuple[bool, int]] = []

    def look(_chunk: bytes) -> None:
        seen.append((reaper.subreaper_on(), reaper._unconfined))

    async def go(confined: bool):
        return await run_program(["sh", "-c", "echo x; sleep 0.3"], cwd=tmp_path, env=None, stdin_data=None,
                                 on_stdout=look, on_stderr=None, timeout_s=20, confined=confined)

    asyncio.run(go(False))
    assert seen == [(True, 1)] and not reaper.subreaper_on()
    asyncio.run(go(True))  # (a plain program said to be confined: the flag is what counts)
    assert seen[1] == (False, 0)


@needs_sandbox
async def test_a_sandboxed_run_that_ends_while_an_unconfined_one_runs_leaves_no_zombie(tmp_path) -> None:
    """The subreaper is on for the unconfined program, so bwrap's namespace init is handed to scarbook
    when the sandboxed program ends: that run is swept too, and the init reaped — also when the sweep
    finds it exiting (its memory gone, its tag unreadable, not yet a zombie: it waits for the
    namespace's last processes). Before: the sweep passed it over and it stayed a zombie, in about one
    sandboxed run of ten on a loaded machine (CI: "zombie children [24203] after 5 sandboxed runs").
    Each run is looked at as it returns; children this process had before (another test's) are not
    counted."""
    import asyncio

    from scarbook.proc.spawn import run_program

    box = require_sandbox(tmp_path)
    (tmp_path / "ws").mkdir()
    before = reaper._main_children()

    async def run(argv, confined):
        return await run_program(argv, cwd=tmp_path / "ws", env=None, stdin_data=None, on_stdout=lambda b: None,
                                 on_stderr=None, timeout_s=60, confined=confined)

    unconfined = asyncio.ensure_future(run(["sh", "-c", "sleep 30"], False))
    while not reaper.subreaper_on():
        await asyncio.sleep(0.01)
    left: list[list[int]] = []
    for _ in range(20):
        done = await run(box.wrap(["/bin/sh", "-c", "true"], tmp_path / "ws"), True)
        assert done.returncode == 0
        left.append([pid for pid in reaper._main_children() - before if (reaper._stat(pid) or "?")[0] == "Z"])
    assert not any(left), f"zombie children after each of 20 sandboxed runs beside an unconfined one: {left}"
    unconfined.cancel()
    with pytest.raises(asyncio.CancelledError):
        await unconfined
    assert not reaper.subreaper_on()


# Issue 38: a sandboxed run is done only once nothing of it is alive. bwrap's outer process exits as soon
# as the program it runs has (its PID 1 tells it through an eventfd) while that PID 1 still waits for what
# the program left; the kernel empties the PID namespace only when PID 1 dies, after the outer bwrap.
# Leaves daemons that each hold memory, so that the kernel takes a moment to end them: a run reported
# done before its PID namespace is empty shows them alive.
LEAVES_DAEMONS = "import os, time\nnote = lambda pid: None\nblob = bytearray(24 << 20)\n" + DAEMON * 6


@needs_sandbox
@pytest.mark.usefixtures("spawn_mode")
def test_when_a_sandboxed_run_is_done_nothing_of_it_is_alive(tmp_path) -> None:
    project = tmp_path / "proj"
    workspace = project / "ws"
    workspace.mkdir(parents=True)
    box = require_sandbox(project)
    prefix = f"{leftovers.project_tag(project)}:"
    env = {"PATH": os.environ.get("PATH", ""), leftovers.PROJECT_VAR: leftovers.project_tag(project)}
    seen_alive = []
    for _ in range(8):
        out: list[bytes] = []
        done = asyncio.run(run_program(box.wrap([sys.executable, "-c", LEAVES_DAEMONS], workspace), cwd=workspace,
                                       env=env, stdin_data=None, on_stdout=out.append, on_stderr=out.append,
                                       timeout_s=30, confined=True))
        seen_alive.append(tagged(prefix))
        assert done.returncode == 0, b"".join(out)
    assert seen_alive == [[]] * 8


def _zombie_children() -> dict[int, str]:
    """This process's zombie children and their names."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            kids = Path(f"/proc/self/task/{tid}/children").read_text().split()
        except OSError:
            continue
        for kid in kids:
            try:
                name, rest = Path(f"/proc/{kid}/stat").read_text().rsplit(")", 1)
            except OSError:
                continue
            if rest.split()[0] == "Z":
                found[int(kid)] = name.split("(", 1)[1]
    return found


@needs_sandbox
@pytest.mark.usefixtures("spawn_mode")
def test_a_sandbox_s_pid_1_handed_to_scarbook_is_reaped(tmp_path) -> None:
    """bwrap exits without reaping its PID 1, which the kernel hands to the nearest subreaper: scarbook while
    unconfined runs go (reaper.py), or as a container's PID 1 (`docker run … scarbook eval`). Each one it is
    handed is reaped when its run ends, not left a zombie per sandboxed run."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    box = require_sandbox(tmp_path)
    prctl = reaper.libc_prctl()
    assert prctl is not None and prctl(reaper.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    try:
        for _ in range(3):
            done = asyncio.run(run_program(box.wrap(["true"], workspace), cwd=workspace, env=None, stdin_data=None,
                                           on_stdout=lambda _: None, on_stderr=None, timeout_s=30, confined=True))
            assert done.returncode == 0
        left = _zombie_children()
    finally:
        prctl(reaper.PR_SET_CHILD_SUBREAPER, int(reaper.subreaper_on()), 0, 0, 0)
        for pid, name in _zombie_children().items():
            if name == "bwrap":
                os.waitpid(pid, 0)
    assert [name for name in left.values() if name == "bwrap"] == []
