"""Agent adapters driving real subprocesses and real Python modules: placeholders, stdin, the env
allow-list, timeouts that kill the whole process group, the output cap, and crashing agents."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scarbook.agents import CommandAgent, PythonAgent, make_agent
from scarbook.errors import ScarbookError
from scarbook.proc.leftovers import project_tag
from tests.helpers.proc_helpers import alive as _alive

PY = sys.executable

# Every agent test runs twice: on Linux's epoll + pidfd path and on the portable asyncio path.
pytestmark = pytest.mark.usefixtures("spawn_mode")


def py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


@pytest.fixture
def run_dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    logs.mkdir()
    return ws, logs


async def test_task_in_argv_placeholder(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("import sys, os; print('task=' + sys.argv[1]); print('cwd=' + os.getcwd())")
                         + ["{task}"])
    assert agent.stdin is False
    result = await agent.run("Write it; don't 'quote' $HOME", ws, {}, 10, logs, "1")
    assert result.exit_code == 0 and result.crashed is None
    assert result.output == f"task=Write it; don't 'quote' $HOME\ncwd={ws}\n"


async def test_task_on_stdin_and_stderr_kept_as_log(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("import sys; t = sys.stdin.read(); print(t.upper()); print('thinking', file=sys.stderr)"))
    assert agent.stdin is True
    result = await agent.run("extract the first line", ws, {}, 10, logs, "3")
    assert result.output == "EXTRACT THE FIRST LINE\n"
    assert result.stderr_path == str(logs / "3.stderr.log")
    assert (logs / "3.stderr.log").read_text() == "thinking\n"


async def test_env_allow_list(run_dirs, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, logs = run_dirs
    monkeypatch.setenv("SB_TEST_ALLOWED", "yes")
    monkeypatch.setenv("SB_TEST_SECRET", "leak")
    agent = CommandAgent(py("import os, json; print(json.dumps(dict(os.environ)))"), env_allow=["SB_TEST_ALLOWED"])
    result = await agent.run("t", ws, {"SCARBOOK_CASE": "c1", "SCARBOOK_TRANSCRIPT": "/x/1.jsonl"}, 10, logs, "1")
    env = json.loads(result.output)
    assert env["SB_TEST_ALLOWED"] == "yes"
    assert "SB_TEST_SECRET" not in env
    assert env["SCARBOOK_CASE"] == "c1" and env["SCARBOOK_TRANSCRIPT"] == "/x/1.jsonl"
    assert env["PATH"] == os.environ["PATH"]


def test_agent_command_not_found_preflight(tmp_path: Path) -> None:
    agent = make_agent({"type": "command", "argv": ["no-such-agent-xyz", "{task}"]}, tmp_path)
    with pytest.raises(ScarbookError) as info:
        agent.preflight()
    assert str(info.value) == ("agent command not found: 'no-such-agent-xyz' (agent.argv in scarbook.yaml) — "
                               "install it, fix the path, or make the file executable")
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")  # exists, but not executable
    with pytest.raises(ScarbookError) as info:
        make_agent({"type": "command", "argv": ["./agent.sh"]}, tmp_path).preflight()
    assert str(info.value).startswith("agent command not found: './agent.sh' (agent.argv in scarbook.yaml)")
    script.chmod(0o755)
    make_agent({"type": "command", "argv": ["./agent.sh"]}, tmp_path).preflight()  # relative to the project


def test_agent_command_not_found_in_eval(project) -> None:
    project.config("agent: {type: command, argv: [no-such-agent-xyz, '{task}']}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "--runs", "1")
    assert result.exit_code == 2
    assert result.stderr == ("scarbook: agent command not found: 'no-such-agent-xyz' (agent.argv in scarbook.yaml) — "
                             "install it, fix the path, or make the file executable\n")
    assert not (project.workspaces / "history").exists() or not any((project.workspaces / "history").iterdir())


@pytest.mark.needs_proc
async def test_hang_past_timeout_kills_the_process_group(run_dirs) -> None:
    ws, logs = run_dirs
    # The agent starts a grandchild that ignores SIGTERM and holds stdout open, then hangs itself.
    grandchild = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                  "open('gc.pid', 'w').write(str(os.getpid())); time.sleep(300)")
    agent = CommandAgent(py(f"""
        import subprocess, sys, time, os
        subprocess.Popen([sys.executable, "-c", {grandchild!r}])
        while not os.path.exists("gc.pid") or not open("gc.pid").read():
            time.sleep(0.01)
        print("started", flush=True)
        time.sleep(300)
        """))
    start = time.monotonic()
    result = await agent.run("t", ws, {}, 1, logs, "1")
    elapsed = time.monotonic() - start
    assert result.timed_out and result.crashed == "timed out after 1s"
    assert result.output == "started\n"  # what it printed before the kill is kept
    assert elapsed < 6
    gc_pid = int((ws / "gc.pid").read_text())
    deadline = time.monotonic() + 3
    while _alive(gc_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(gc_pid), "the grandchild outlived the timeout"


async def test_exit_code_and_signal_are_failures_with_the_last_stderr_line(run_dirs) -> None:
    ws, logs = run_dirs
    r = await CommandAgent(py("import sys; print('Traceback...', file=sys.stderr); "
                              "print('KeyError: tmp', file=sys.stderr); sys.exit(3)")).run("t", ws, {}, 10, logs, "1")
    assert (r.exit_code, r.crashed) == (3, "agent exited with code 3: KeyError: tmp")
    r = await CommandAgent(py("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")).run("t", ws, {}, 10, logs, "2")
    assert r.crashed == "agent was killed by signal 9"


async def test_fifty_megabytes_of_stdout_is_capped(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("import sys\nfor _ in range(50): sys.stdout.buffer.write(b'x' * (1 << 20))"),
                         max_output_bytes=1_000_000)
    result = await agent.run("t", ws, {}, 30, logs, "1")
    assert result.exit_code == 0 and result.crashed is None
    assert result.output_truncated is True
    assert len(result.output) == 1_000_000


async def test_a_task_larger_than_the_pipe_reaches_stdin_whole(run_dirs) -> None:
    ws, logs = run_dirs
    task = "line of the task\n" * 40_000  # 680 KB: ten times what a pipe holds before it blocks
    agent = CommandAgent(py("import sys, hashlib; d = sys.stdin.buffer.read(); print(len(d), hashlib.sha1(d).hexdigest())"))
    result = await agent.run(task, ws, {}, 30, logs, "1")
    assert result.output.split() == [str(len(task)), hashlib.sha1(task.encode()).hexdigest()]


async def test_an_agent_that_never_reads_its_stdin_still_finishes(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("print('not reading')"))  # exits with 680 KB unread in its stdin pipe
    result = await agent.run("x" * 680_000, ws, {}, 10, logs, "1")
    assert (result.exit_code, result.crashed, result.output) == (0, None, "not reading\n")


async def _fds_after_a_first_run(ws: Path, logs: Path) -> int:
    """Open descriptors once a run has made the loop's epoll set (one per loop, kept for its life)."""
    await CommandAgent(["true"]).run("t", ws, {}, 10, logs, "warm")
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.needs_proc
async def test_runs_leave_no_descriptor_behind(run_dirs) -> None:
    ws, logs = run_dirs
    before = await _fds_after_a_first_run(ws, logs)
    for k in range(5):
        r = await CommandAgent(py("import sys; print('out'); print('err', file=sys.stderr)")).run("t", ws, {}, 10, logs, str(k))
        assert (r.exit_code, r.output) == (0, "out\n")
    assert len(os.listdir("/proc/self/fd")) == before


async def test_an_agent_that_closes_its_pipes_and_runs_on_is_waited_for(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("""
        import os, sys, time
        print("bye", flush=True)
        os.close(1); os.close(2)
        time.sleep(0.5)
        sys.exit(4)
        """))
    start = time.monotonic()
    result = await agent.run("t", ws, {}, 10, logs, "1")
    assert time.monotonic() - start >= 0.5  # its exit, not the end of its output, ends the run
    assert (result.output, result.exit_code, result.crashed) == ("bye\n", 4, "agent exited with code 4")


@pytest.mark.needs_proc
async def test_an_agent_that_closes_its_pipes_then_hangs_is_killed_at_the_timeout(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("import os, time; open('pid', 'w').write(str(os.getpid())); "
                            "os.close(1); os.close(2); time.sleep(300)"))
    before = await _fds_after_a_first_run(ws, logs)
    result = await agent.run("t", ws, {}, 1, logs, "1")
    assert (result.timed_out, result.crashed) == (True, "timed out after 1s")
    assert not _alive(int((ws / "pid").read_text()))
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.needs_proc
async def test_a_cancelled_run_kills_the_agent_and_leaks_no_descriptors(run_dirs) -> None:
    ws, logs = run_dirs
    agent = CommandAgent(py("import os, time; open('pid', 'w').write(str(os.getpid())); time.sleep(300)"))
    before = await _fds_after_a_first_run(ws, logs)
    task = asyncio.ensure_future(agent.run("t", ws, {}, 60, logs, "1"))
    while not (ws / "pid").exists() or not (ws / "pid").read_text():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(int((ws / "pid").read_text()))
    assert len(os.listdir("/proc/self/fd")) == before


def test_fifty_megabytes_do_not_grow_the_harness_memory(tmp_path: Path) -> None:
    # Measured in a fresh interpreter: ru_maxrss is a high-water mark, so growth = peak after - peak before.
    script = textwrap.dedent(f"""
        import asyncio, resource, sys
        from pathlib import Path
        from scarbook.agents import CommandAgent
        agent = CommandAgent([sys.executable, "-c",
            "import sys\\nfor _ in range(50): sys.stdout.buffer.write(b'y' * (1 << 20))"])
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        r = asyncio.run(agent.run("t", Path({str(tmp_path)!r}), {{}}, 60, Path({str(tmp_path)!r}), "1"))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(after - before, len(r.output), r.output_truncated)
        """)
    out = subprocess.run([PY, "-c", script], capture_output=True, text=True, timeout=120, check=True).stdout.split()
    growth_kb, kept, truncated = int(out[0]), int(out[1]), out[2]
    assert (kept, truncated) == (1_000_000, "True")
    assert growth_kb < 15 * 1024, f"harness grew by {growth_kb} KB while reading 50 MB"


def _write_module(root: Path, name: str, code: str) -> str:
    (root / f"{name}.py").write_text(textwrap.dedent(code))
    return name


async def test_python_adapter_sync(tmp_path: Path, run_dirs) -> None:
    ws, logs = run_dirs
    mod = _write_module(tmp_path, "sb_sync_agent", """
        from pathlib import Path
        def run(task, cwd):
            Path(cwd, "out.txt").write_text(task)
            return "wrote out.txt"
        """)
    agent = PythonAgent(f"{mod}:run", tmp_path)
    agent.preflight()
    result = await agent.run("hello", ws, {}, 10, logs, "1")
    assert (result.output, result.exit_code, result.crashed) == ("wrote out.txt", 0, None)
    assert (ws / "out.txt").read_text() == "hello"


async def test_python_adapter_async_with_env_and_timeout(tmp_path: Path, run_dirs) -> None:
    ws, logs = run_dirs
    mod = _write_module(tmp_path, "sb_async_agent", """
        import asyncio
        async def run(task, cwd, env):
            if task == "hang":
                await asyncio.sleep(60)
            await asyncio.sleep(0.01)
            return f"{task} in {cwd.name} for {env['SCARBOOK_CASE']}"
        """)
    agent = PythonAgent(f"{mod}:run", tmp_path)
    result = await agent.run("hello", ws, {"SCARBOOK_CASE": "c1"}, 10, logs, "1")
    assert result.output == "hello in ws for c1"
    start = time.monotonic()
    hung = await agent.run("hang", ws, {"SCARBOOK_CASE": "c1"}, 0.5, logs, "2")
    assert (hung.timed_out, hung.crashed) == (True, "timed out after 0.5s")
    assert time.monotonic() - start < 3


async def test_python_agent_that_raises(tmp_path: Path, run_dirs) -> None:
    ws, logs = run_dirs
    mod = _write_module(tmp_path, "sb_raising_agent", """
        def run(task, cwd):
            raise ValueError("model returned no tool call")
        """)
    result = await PythonAgent(f"{mod}:run", tmp_path).run("t", ws, {}, 10, logs, "1")
    assert result.crashed == "agent raised ValueError: model returned no tool call"
    log = (logs / "1.stderr.log").read_text()
    assert "Traceback" in log and 'raise ValueError("model returned no tool call")' in log


def test_python_adapter_import_errors(tmp_path: Path) -> None:
    with pytest.raises(ScarbookError) as info:
        PythonAgent("sb_missing_mod_xyz:run", tmp_path).preflight()
    assert str(info.value) == ("agent.function 'sb_missing_mod_xyz:run': cannot import 'sb_missing_mod_xyz' "
                               "(No module named 'sb_missing_mod_xyz') — check the module name and that it is "
                               "importable from the project root")
    _write_module(tmp_path, "sb_nofn_agent", "x = 1\n")
    with pytest.raises(ScarbookError) as info:
        PythonAgent("sb_nofn_agent:run", tmp_path).preflight()
    where = sys.modules["sb_nofn_agent"].__file__  # (the first parametrization's folder: imported once per process)
    assert str(info.value) == (f"agent.function 'sb_nofn_agent:run': sb_nofn_agent ({where}) "
                               "has no function 'run' — name a function it defines, as module:function")


# -- through the runner: what a run records --------------------------------------------------------

def _eval_one(project, argv: list[str], checks: str, *extra: str):
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\ntimeout_s: 20\n")
    project.case("c", f"id: c\ntask: Write tmp.txt\nchecks:\n{checks}", {"README.md": "# tiny-agent\n"})
    result = project.cli("eval", "--runs", "1", "-q", *extra)
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    return result, runs


def test_agent_that_deletes_its_own_workspace(project) -> None:
    result, runs = _eval_one(project, ["sh", "-c", 'rm -rf "$PWD"; echo done'],
                             "  - {type: file_exists, path: tmp.txt}\n  - {type: only_changed, paths: [tmp.txt]}\n")
    assert result.exit_code == 1, result.output
    (run,) = runs
    assert run.status == "fail"
    assert run.reason == "check 1 (file_exists): tmp.txt does not exist"
    assert run.diff.deleted == ["README.md"]
    assert [c.status for c in run.checks] == ["fail", "skipped"]


def test_runner_passes_scarbook_variables_and_keeps_output(project) -> None:
    argv = [PY, "-c", "import os, json; open('tmp.txt', 'w').write('x\\n'); "
                      "print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('SCARBOOK_')}))"]
    result, runs = _eval_one(project, argv, "  - {type: file_exists, path: tmp.txt}\n", "--keep-all")
    assert result.exit_code == 0, result.output
    (run,) = runs
    env = json.loads(run.output_excerpt)
    sid = run.session_id
    case_dir = project.workspaces / sid / "c"
    tag = project_tag(project.root)  # whose leftovers they are
    assert env.pop("SCARBOOK_RUN_TAG").startswith(f"{tag}:{os.getpid()}.")  # how leftovers are recognised
    assert env.pop("SCARBOOK_PROJECT") == tag
    assert env == {"SCARBOOK_TRANSCRIPT": str(case_dir / "1.transcript.jsonl"),
                   "SCARBOOK_USAGE": str(case_dir / "1.usage.jsonl"), "SCARBOOK_WORKSPACE": str(case_dir / "1"),
                   "SCARBOOK_CASE": "c", "SCARBOOK_RUN": "1", "SCARBOOK_SESSION": sid}
    assert run.diff.created == ["tmp.txt"] and run.workspace_kept
    assert not (case_dir / "1.output.txt").exists()  # short: history's excerpt holds all of it
    assert not (case_dir / "1.stderr.log").exists() and run.stderr_path is None  # nothing on stderr


def test_runner_keeps_a_long_output_whole(project) -> None:
    argv = [PY, "-c", "print('x' * 9000); print('tail')"]
    result, runs = _eval_one(project, argv, "  - {type: output_contains, text: tail}\n")
    assert result.exit_code == 0, result.output
    (run,) = runs
    assert run.output_excerpt == "x" * 4000
    assert (project.workspaces / run.session_id / "c" / "1.output.txt").read_text() == "x" * 9000 + "\ntail\n"


def test_runner_records_a_timeout_as_fail(project) -> None:
    project.config("agent: {type: command, argv: [sleep, '30']}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "--runs", "1", "-q", "--timeout", "1")
    assert result.exit_code == 1
    history = project.load().history
    (run,) = history.runs(history.sessions()[0].id)
    assert (run.status, run.reason) == ("fail", "timed out after 1s")
    assert [(c.status, c.detail) for c in run.checks] == [("skipped", "not run: the agent did not finish")]


def test_agents_run_in_event_loops_of_two_threads_at_once(tmp_path: Path) -> None:
    # The child watcher is process-wide; each loop must still get its own children's exits.
    import asyncio
    import threading

    results: dict[str, list] = {}

    def worker(name: str) -> None:
        ws = tmp_path / name
        ws.mkdir()
        agent = CommandAgent(py("import sys, time; time.sleep(0.05); print(sys.argv[1])") + ["{task}"])

        async def many():
            return [await agent.run(f"{name}-{i}", ws, {}, 20, ws, str(i)) for i in range(5)]

        results[name] = asyncio.run(many())

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    worker("main")
    for t in threads:
        t.join(30)
    for name in ("left", "right", "main"):
        assert [(r.exit_code, r.output) for r in results[name]] == [(0, f"{name}-{i}\n") for i in range(5)]


def test_script_with_a_missing_interpreter_is_an_error_that_says_so(tmp_path, monkeypatch):
    """The harness could not run the agent at all: an error (no verdict), naming the likely cause."""
    import asyncio
    import os

    from scarbook.project import Project
    from scarbook.run.runner import run_session
    from scarbook.run.session import SessionPlan, SessionSite, ready_session

    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")
    script = tmp_path / "agent.sh"
    script.write_text("#!/no/such/interpreter\necho hi\n")
    os.chmod(script, 0o755)
    (tmp_path / "scarbook.yaml").write_text(f"agent: {{type: command, argv: [{script}]}}\n")
    (tmp_path / "cases" / "c").mkdir(parents=True)
    (tmp_path / "cases" / "c" / "case.yaml").write_text("id: c\ntask: t\nchecks:\n  - {type: output_contains, text: hi}\n")
    project = Project.at(tmp_path)

    async def go():
        async for ev in run_session(ready_session(SessionSite.of(project), SessionPlan(project.load_cases().cases, runs=1))):
            if type(ev).__name__ == "SessionFinished":
                return ev.runs

    (run,) = asyncio.run(go())
    assert run.status == "error"
    assert run.reason == (f"could not start the agent (command: {script}): No such file or directory — the agent "
                          "program exists, so check the interpreter on its #! line")
