"""isolation: sandbox — hostile agents (real processes, real files) under bubblewrap: writing outside
the workspace, reading ~/.ssh, opening a socket, forging the session's history. Each attack is shown
to work with isolation: none first, so the test proves the sandbox is what stops it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from scarbook.agents.sandbox import find_bwrap, require_sandbox
from scarbook.errors import ScarbookError
from scarbook.models import CauseKind
from scarbook.proc.leftovers import project_tag
from tests.helpers.proc_helpers import DAEMON, oom_killer_kills_meanwhile, tagged

SANDBOXED = "[in the sandbox: only the workspace is writable; no network]"


def sandbox_works() -> bool:
    try:
        require_sandbox(Path.cwd())
    except ScarbookError:
        return False
    return True


needs_sandbox = pytest.mark.skipif(sys.platform != "linux" or find_bwrap() is None or not sandbox_works(),
                                   reason="bubblewrap cannot start here (pip install '.[sandbox]')")


def eval_agent(project, code: str, *, isolation: str, checks: str = "  - {type: file_exists, path: tmp.txt}\n",
               extra_config: str = "", extra_case: str = ""):
    """Run the agent `code` once on one case; returns (cli result, the run record)."""
    agent = project.root / "agent.py"
    agent.write_text(textwrap.dedent(code))
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}]}}\ntimeout_s: 20\n"
                   f"isolation: {isolation}\n{extra_config}")
    project.case("c", f"id: c\ntask: t\n{extra_case}checks:\n{checks}", {"README.md": "# tiny-agent\n"})
    result = project.cli("eval", "--runs", "1", "-q")
    history = project.load().history
    sessions = history.sessions()
    runs = history.runs(sessions[0].id) if sessions else []
    return result, (runs[0] if runs else None)


ESCAPE = """
    open("../../ESCAPED.txt", "w").write("out")
    open("tmp.txt", "w").write("ok")
"""


@needs_sandbox
def test_writing_outside_the_workspace_is_stopped(project) -> None:
    result, run = eval_agent(project, ESCAPE, isolation="none")
    assert run.status == "pass" and (project.workspaces / run.session_id / "ESCAPED.txt").exists()  # the attack

    result, run = eval_agent(project, ESCAPE, isolation="sandbox")
    assert result.exit_code == 1, result.output
    assert run.status == "fail"
    assert run.reason == ("agent exited with code 1: OSError: [Errno 30] Read-only file system: "
                          f"'../../ESCAPED.txt' {SANDBOXED}")
    assert not (project.workspaces / run.session_id / "ESCAPED.txt").exists()


READ_SSH = """
    import os
    print(open(os.path.expanduser("~/.ssh/id_ed25519")).read())
    open("tmp.txt", "w").write("ok")
"""


@needs_sandbox
def test_reading_the_home_directory_is_stopped(project, tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    monkeypatch.setenv("HOME", str(home))
    leak = "  - {type: output_contains, text: PRIVATE KEY}\n"
    result, run = eval_agent(project, READ_SSH, isolation="none", checks=leak)
    assert run.status == "pass"  # the attack: the key is in the agent's output

    result, run = eval_agent(project, READ_SSH, isolation="sandbox", checks=leak)
    assert run.status == "fail" and "PRIVATE" not in run.output_excerpt
    assert run.reason == ("agent exited with code 1: FileNotFoundError: [Errno 2] No such file or directory: "
                          f"'{home}/.ssh/id_ed25519' {SANDBOXED}")


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1 that records what connects to it."""
    srv = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                got.append(conn.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1], got
    srv.close()


def _arrived(got: list[bytes]) -> list[bytes]:
    """What the listener got, once it got something (at most 5 s): the agent's run can end before the
    listener's thread has read and kept what it sent."""
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    return got


CONNECT = """
    import socket
    with socket.create_connection(("127.0.0.1", {port}), timeout=5) as s:
        s.sendall(b"LEAK")
    open("tmp.txt", "w").write("ok")
"""


@needs_sandbox
def test_opening_a_socket_is_stopped_unless_network_is_allowed(project, listener) -> None:
    port, got = listener
    code = CONNECT.replace("{port}", str(port))
    result, run = eval_agent(project, code, isolation="sandbox")
    assert run.status == "fail" and got == []
    # The sandbox has a network of its own (loopback only): the listener outside is not on it.
    assert run.reason == f"agent exited with code 1: ConnectionRefusedError: [Errno 111] Connection refused {SANDBOXED}"

    result, run = eval_agent(project, code, isolation="sandbox", extra_config="network: true\n")
    assert run.status == "pass", run.reason
    assert _arrived(got) == [b"LEAK"]


@needs_sandbox
def test_a_case_says_whether_its_agent_gets_the_network(project, listener) -> None:
    port, got = listener
    code = CONNECT.replace("{port}", str(port))
    result, run = eval_agent(project, code, isolation="sandbox", extra_case="network: true\n")
    assert run.status == "pass", run.reason
    assert _arrived(got) == [b"LEAK"]
    result, run = eval_agent(project, code, isolation="sandbox", extra_config="network: true\n",
                             extra_case="network: false\n")
    assert run.status == "fail" and got == [b"LEAK"]
    assert run.reason == f"agent exited with code 1: ConnectionRefusedError: [Errno 111] Connection refused {SANDBOXED}"


FORGE = """
    import glob, json, os
    hist = os.path.join(os.environ["SCARBOOK_WORKSPACE"], "..", "..", "..", "history", os.environ["SCARBOOK_SESSION"])
    with open(os.path.join(hist, "runs-c.jsonl"), "a") as fh:
        fh.write(json.dumps({"case_id": "c", "k": 99, "status": "pass"}) + "\\n")
"""


@needs_sandbox
def test_an_agent_cannot_forge_its_history(project) -> None:
    result, run = eval_agent(project, FORGE, isolation="sandbox")
    assert result.exit_code == 1, result.output
    history = project.load().history
    (only,) = history.runs(history.sessions()[0].id)
    assert only.status == "fail" and only.k == 1
    sid = only.session_id
    target = f"{project.workspaces}/{sid}/c/1/../../../history/{sid}/runs-c.jsonl"
    # the history is not even there inside (issue 33.3: workspaces/ shows only the run's own folder)
    last_line = f"FileNotFoundError: [Errno 2] No such file or directory: '{target}'"[:200]  # a reason keeps 200 chars
    assert only.reason == f"agent exited with code 1: {last_line} {SANDBOXED}"


@needs_sandbox
def test_the_transcript_and_usage_files_stay_writable(project) -> None:
    code = """
        import json, os
        open(os.environ["SCARBOOK_TRANSCRIPT"], "a").write(json.dumps({"role": "assistant", "content": "hi"}) + "\\n")
        open(os.environ["SCARBOOK_USAGE"], "a").write(json.dumps({"input_tokens": 10, "output_tokens": 5}) + "\\n")
        open("tmp.txt", "w").write("ok")
    """
    result, run = eval_agent(project, code, isolation="sandbox")
    assert run.status == "pass", run.reason
    assert run.transcript_path and Path(run.transcript_path).read_text().startswith('{"role": "assistant"')
    assert run.agent_usage.input_tokens == 10
    result, run = eval_agent(project, 'open("tmp.txt", "w").write("ok")', isolation="sandbox")
    assert run.status == "pass" and run.transcript_path is None  # wrote nothing: no file is left


@needs_sandbox
def test_a_command_check_runs_in_the_sandbox_too(project) -> None:
    checks = '  - {type: command, run: "echo forged > ../../ESCAPED.txt"}\n'
    result, run = eval_agent(project, 'open("tmp.txt", "w").write("ok")', isolation="sandbox", checks=checks)
    assert run.status == "fail"
    assert run.reason == ("check 1 (command): command 'echo forged > ../../ESCAPED.txt' exited 2: "
                          "/bin/sh: 1: cannot create ../../ESCAPED.txt: Read-only file system")
    assert not (project.workspaces / run.session_id / "ESCAPED.txt").exists()


@pytest.mark.parametrize("setup, message", [
    ({"SCARBOOK_BWRAP": "/nonexistent/bwrap"},
     "isolation: sandbox cannot start: SCARBOOK_BWRAP=/nonexistent/bwrap is not an executable file"),
    ({"SCARBOOK_BWRAP": "/bin/false"},
     "isolation: sandbox cannot start: /bin/false failed to start a test sandbox (exit code 1) — unprivileged "
     "user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces)"),
    ({"platform": "darwin"},
     "isolation: sandbox cannot start: it needs Linux (bubblewrap), this is darwin — set isolation: none "
     "(or --isolation none); agents then run unconfined"),
], ids=["no-bwrap", "bwrap-cannot-start", "not-linux"])
@pytest.mark.parametrize("isolation", ["sandbox", "slot"])
def test_a_sandbox_that_cannot_start_is_a_preflight_error(project, monkeypatch, setup, message, isolation) -> None:
    if "platform" in setup:
        monkeypatch.setattr(sys, "platform", setup["platform"])
    else:
        monkeypatch.setenv("SCARBOOK_BWRAP", setup["SCARBOOK_BWRAP"])
    project.config(f"agent: {{type: command, argv: [{sys.executable}, -c, 'print(1)']}}\nisolation: {isolation}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: '1'}]\n")
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"scarbook: {message}".replace("isolation: sandbox", f"isolation: {isolation}")
    assert project.load().history.sessions() == []  # nothing ran unconfined instead
    assert project.cli("eval", "--runs", "1", "-q", "--isolation", "none").exit_code == 0


@pytest.mark.parametrize("isolation", ["sandbox", "slot"])
def test_a_python_agent_cannot_be_sandboxed(project, isolation) -> None:
    (project.root / "my_agent.py").write_text("def run(task, cwd):\n    return 'x'\n")
    project.config(f"agent: {{type: python, function: my_agent:run}}\nisolation: {isolation}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"scarbook: isolation: {isolation} cannot hold a python agent: it runs inside scarbook's own process — run it "
        "as a command agent (agent: {type: command, argv: [python, -m, my_agent]}) or set isolation: none")


def test_isolation_is_validated_in_scarbook_yaml(project) -> None:
    project.config("isolation: docker\n")
    result = project.cli("list")
    assert result.exit_code == 2
    assert "isolation must be 'none', 'sandbox', 'slot' or 'auto', got 'docker'" in result.stderr  # auto: issue 25


ESCAPE_DAEMON = "import os, time\nnote = print\n" + DAEMON + "open('tmp.txt', 'w').write('ok')\n"


@needs_sandbox
@pytest.mark.needs_proc
def test_a_daemon_started_in_the_sandbox_ends_with_its_run(project) -> None:
    result, run = eval_agent(project, ESCAPE_DAEMON, isolation="sandbox")
    assert run.status == "pass", run.reason
    assert tagged(f"{project_tag(project.root)}:{os.getpid()}.") == []


def test_a_program_in_a_hidden_folder_is_shown_by_the_path_it_runs_by_never_the_whole_home(tmp_path,
                                                                                           monkeypatch) -> None:
    """A `python` on PATH that links to the real one (a venv's bin/python) runs by its link's path:
    that folder is shown read-only; a program in ~/bin shows ~/bin, not the home it would hide."""
    from scarbook.agents.sandbox import Sandbox

    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "venv" / "bin").mkdir(parents=True)
    (home / "venv" / "bin" / "python").symlink_to(sys.executable)
    (home / "bin" / "agent").write_text("#!/bin/sh\n")
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"

    def shown(program: Path) -> list[str]:
        args = Sandbox("bwrap", tmp_path / "proj").wrap([str(program)], ws)
        return [args[i + 1] for i, a in enumerate(args) if a == "--ro-bind" and args[i + 1] != "/"]

    assert str(home / "venv") in shown(home / "venv" / "bin" / "python")
    assert str(home / "bin") in shown(home / "bin" / "agent")
    assert str(home) not in shown(home / "bin" / "agent")


def test_the_folders_a_program_needs_are_worked_out_once_per_sandbox(tmp_path, monkeypatch) -> None:
    """Issue 38.3: each run looked its program's folders up again (0.8 ms of the event loop a run);
    the second run's bwrap line is the same, from what the first found."""
    from scarbook.agents.sandbox import Sandbox

    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "agent").write_text("#!/bin/sh\n")
    monkeypatch.setenv("HOME", str(home))
    box = Sandbox("bwrap", tmp_path / "proj")
    looked: list[str] = []
    find = Sandbox._find_visible_again
    monkeypatch.setattr(Sandbox, "_find_visible_again", lambda self, p: looked.append(p) or find(self, p))
    first = box.wrap([str(home / "bin" / "agent")], tmp_path / "ws1")
    second = box.wrap([str(home / "bin" / "agent")], tmp_path / "ws2")
    assert looked == [str(home / "bin" / "agent")]
    assert second == [a.replace("ws1", "ws2") for a in first] and str(home / "bin") in second


@needs_sandbox
def test_an_agent_killed_by_a_signal_in_the_sandbox_reads_as_killed_not_as_exit_137(project, monkeypatch) -> None:
    """bwrap exits 128+N when its program dies of signal N: the run says the signal, so an agent the
    OOM killer took is an infra failure (retried) as it is unconfined, not the agent's exit 137."""
    oom_killer_kills_meanwhile(monkeypatch)
    result, run = eval_agent(project, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
                             isolation="sandbox", extra_config="retry_infra: 0\n")
    assert result.exit_code == 3, result.output  # infra, no retry left: no verdict
    assert run.reason == f"agent was killed by signal 9 {SANDBOXED}"
    assert run.cause.kind == CauseKind.INFRA and run.cause.rule == "killed-by-signal"


@needs_sandbox
def test_a_script_whose_interpreter_is_missing_is_a_run_error_in_the_sandbox_too(project) -> None:
    """Unconfined the spawn fails (a run error naming the #! line); in the sandbox bwrap would start and
    then fail to exec it (a failed run): scarbook says it the same way in both."""
    script = project.root / "agent.sh"
    script.write_text("#!/no/such/interpreter\necho hi\n")
    script.chmod(0o755)
    project.config(f"agent: {{type: command, argv: [{script}]}}\nisolation: sandbox\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: hi}]\n")
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 3, result.output  # every run an error: no verdict
    (run,) = project.load().history.runs(project.load().history.sessions()[0].id)
    assert (run.status, run.reason) == ("error", f"could not start the agent (command: {script}): No such file or "
                                                 "directory — the agent program exists, so check the interpreter on "
                                                 "its #! line")


UNHIDE = """
    import ctypes, errno, os
    libc = ctypes.CDLL(None, use_errno=True)
    hidden = os.path.dirname(os.path.dirname(os.path.dirname(os.environ["SCARBOOK_WORKSPACE"])))  # workspaces/
    got = libc.umount2(hidden.encode(), 2)  # MNT_DETACH: the run's own folder is mounted inside it
    print("umount", got, errno.errorcode.get(ctypes.get_errno(), 0) if got else "")
    print("sees", sorted(os.listdir(hidden)))
    open("tmp.txt", "w").write("ok")
"""


@needs_sandbox
def test_an_agent_holds_no_capability_to_unmount_what_hides_other_runs(project) -> None:
    """Run as root (a CI container), bwrap keeps every capability in the sandbox unless told to drop
    them: the agent could unmount the tmpfs over workspaces/ and read (or write) every other run and
    the history — and remount / writable as the real root. The sandbox drops them all."""
    result, run = eval_agent(project, UNHIDE, isolation="sandbox",
                             checks="  - {type: output_contains, text: umount -1 EPERM}\n")
    assert run.status == "pass", (run.reason, run.output_excerpt)
    assert "history" not in run.output_excerpt and "sees ['" + run.session_id + "']" in run.output_excerpt


DEVICES = """
    import os, subprocess
    done = subprocess.run("chmod 666 /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty; "
                          "echo x > /dev/null && head -c 3 /dev/zero | wc -c", shell=True, capture_output=True,
                          text=True)
    print("chmod:", done.stderr.count("Operation not permitted"), "refused;", "wrote, read", done.stdout.split())
    seen = os.stat("/dev/null")
    print("inode:", "the host's" if (seen.st_dev, seen.st_ino) == HOST_NULL else "own")
    open("tmp.txt", "w").write("ok")
"""


@needs_sandbox
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root owns the host's /dev nodes")
def test_an_agent_run_by_root_cannot_change_the_host_s_device_nodes(project) -> None:
    """bwrap's --dev binds the host's /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom and /dev/tty; run by
    root, the agent owned them, and an owner needs no capability: `chmod 0 /dev/null` in a run changed the host's,
    for every process, after the run. (Shown here by a chmod to the mode each already has: the host keeps it.)
    Each is now a node scarbook made, owned by nobody: opened, written and read as before, never changed."""
    null = os.stat("/dev/null")
    result, run = eval_agent(project, DEVICES.replace("HOST_NULL", repr((null.st_dev, null.st_ino))), isolation="sandbox",
                             checks="  - {type: output_contains, text: 'chmod: 6 refused; wrote, read [''3'']'}\n"
                                    "  - {type: output_contains, text: 'inode: own'}\n")
    assert run.status == "pass", (run.reason, run.output_excerpt)
    after = os.stat("/dev/null")
    assert (after.st_mode, after.st_uid, after.st_mtime_ns) == (null.st_mode, null.st_uid, null.st_mtime_ns)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or sys.platform != "linux", reason="root, Linux")
def test_the_private_device_nodes_are_made_again_when_their_folder_is_gone(monkeypatch) -> None:
    from scarbook.agents import sandbox

    monkeypatch.setattr(sandbox, "_devices", None)
    first = sandbox.private_devices()
    assert [dev for _, dev in first] == [f"/dev/{n}" for n in sandbox.DEVICE_NODES]
    node = os.stat(first[0][0])
    assert (node.st_uid, node.st_mode & 0o7777, node.st_rdev) == (sandbox.NOBODY, 0o666, os.stat("/dev/null").st_rdev)
    shutil.rmtree(os.path.dirname(first[0][0]))
    again = sandbox.private_devices()
    assert os.path.exists(again[0][0]) and again[0][0] != first[0][0]
