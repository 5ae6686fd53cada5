"""A hostile agent attacks what the harness does after it exits: the command check, the reads the checks
and the judge make, the workspace diff. Real agent processes, real files, whole sessions. The agents run
with isolation: none, where they can do the most (they reach outside their workspace to plant links):
what is tested is scarbook's own reads and writes, which must hold without the sandbox."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scarbook.checks import CheckContext, run_check
from scarbook.fs import safefs
from scarbook.judge.artifact import ArtifactRefused, read_artifact
from scarbook.models import Case, Check

PY = sys.executable  # the agents below use the standard library only: `PY -S` skips site's start-up (~20 ms of CPU each)


def _session(project, argv: list[str], checks: str, seed: dict[str, str] | None = None, *extra: str):
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\nisolation: none\ntimeout_s: 20\n")
    project.case("c", f"id: c\ntask: Write tmp.txt\nchecks:\n{checks}", seed or {"README.md": "# tiny-agent\n"})
    result = project.cli("eval", "--runs", "1", "-q", *extra)
    history = project.load().history
    return result, history.runs(history.sessions()[0].id)


# -- 2. the command check runs agent-written code: it gets the agent's allow-listed environment ----------

REWRITE_CHECK = ("import os; open('check.sh', 'w').write("
                 "'echo \"leaked: ${ANTHROPIC_API_KEY:-none} ${CASE_TOKEN:-none}\"; exit 1\\n')")


def test_a_rewritten_check_script_cannot_print_a_secret_from_scarbooks_environment(project, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET")
    result, (run,) = _session(project, [PY, "-S", "-c", REWRITE_CHECK], "  - {type: command, run: sh check.sh}\n",
                              {"check.sh": "exit 0\n"})
    assert result.exit_code == 1, result.output
    assert "SECRET" not in result.output
    assert run.reason == "check 1 (command): command 'sh check.sh' exited 1: leaked: none none"


def test_a_command_check_gets_the_variables_the_case_names(project, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET")
    monkeypatch.setenv("CASE_TOKEN", "t0k")
    result, (run,) = _session(project, [PY, "-S", "-c", REWRITE_CHECK],
                              "  - {type: command, run: sh check.sh, env: [CASE_TOKEN]}\n", {"check.sh": "exit 0\n"})
    assert run.reason == "check 1 (command): command 'sh check.sh' exited 1: leaked: none t0k"


def test_a_command_check_gets_what_the_agent_is_allowed(project, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-AGENTS")
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', REWRITE_CHECK])}, env: [ANTHROPIC_API_KEY]}}\nisolation: none\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: command, run: sh check.sh}\n", {"check.sh": "exit 0\n"})
    project.cli("eval", "--runs", "1", "-q")
    history = project.load().history
    (run,) = history.runs(history.sessions()[0].id)
    assert run.reason == "check 1 (command): command 'sh check.sh' exited 1: leaked: sk-ant-AGENTS none"


@pytest.mark.parametrize("env,message", [
    ("[1BAD]", "command.env: '1BAD' is not an environment variable name"),
    ("[A=B]", "command.env: 'A=B' is not an environment variable name"),
    ("CASE_TOKEN", "command.env must be a list of strings, got str"),
])
def test_command_env_names_are_validated(project, env: str, message: str) -> None:
    path = project.case("c", f"id: c\ntask: t\nchecks:\n  - {{type: command, run: 'true', env: {env}}}\n")
    result = project.cli("list")
    assert f"{path}:4: {message}" in result.output, result.output


# -- 1. a process the agent left behind swaps a checked file for a symlink (TOCTOU) -------------------

SWAPPER = """\
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
end = time.monotonic() + float(sys.argv[2])
libc.renameat2(-100, b"tmp.txt", -100, b"tmp.lnk", 2)
print("swapping", flush=True)
while time.monotonic() < end:  # RENAME_EXCHANGE: tmp.txt is the file, then the link, then the file...
    libc.renameat2(-100, b"tmp.txt", -100, b"tmp.lnk", 2)
"""
# The agent writes a harmless tmp.txt and a link to the secret, and leaves a swapper behind (setsid,
# its own session, without the run tag) that outlives it; its pid goes to a folder the test kills from.
SWAP_AGENT = """\
import os, subprocess, sys, time
open("tmp.txt", "w").write("nothing to see\\n")
os.symlink(sys.argv[1], "tmp.lnk")
untagged = {k: v for k, v in os.environ.items() if k != "SCARBOOK_RUN_TAG"}  # so scarbook cannot find it
p = subprocess.Popen([sys.executable, "-S", "-c", sys.argv[2], os.getcwd(), "3"], start_new_session=True, env=untagged,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open(os.path.join(sys.argv[3], f"swapper-{os.getpid()}"), "w").write(str(p.pid))
while not os.path.islink("tmp.txt"):  # it swaps: leave
    time.sleep(0.001)
print("wrote tmp.txt")
"""
SWAP_DETAILS = {"tmp.txt is a symlink", "tmp.txt does not contain 'TOPSECRET' (starts: 'nothing to see\\n')"}

needs_renameat2 = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "renameat2"),
    reason="renameat2(RENAME_EXCHANGE) is Linux-only")


def _kill_swappers(folder: Path) -> None:
    for f in folder.glob("swapper-*"):
        try:
            os.kill(int(f.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def _swapping_workspace(tmp_path: Path) -> tuple[Path, subprocess.Popen]:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tmp.txt").write_text("nothing to see\n")
    os.symlink(secret, ws / "tmp.lnk")
    swapper = subprocess.Popen([PY, "-S", "-c", SWAPPER, str(ws), "20"], stdout=subprocess.PIPE, text=True)
    assert swapper.stdout.readline() == "swapping\n"
    return ws, swapper


@needs_renameat2
@pytest.mark.parametrize("mode", ["dirfd", "portable"])
async def test_checks_never_read_outside_while_a_leftover_process_swaps_in_a_symlink(
        tmp_path: Path, monkeypatch, mode: str) -> None:
    monkeypatch.setattr(safefs, "MODE", mode)  # "portable": the path Windows takes, forced here
    ws, swapper = _swapping_workspace(tmp_path)
    details: list[str] = []
    try:
        ctx = CheckContext(case=Case(id="c", task="t"), workspace=ws, output="")
        check = Check("contains", {"path": "tmp.txt", "text": "TOPSECRET"})
        deadline, read = time.monotonic() + 8, set()
        # 3000 checks, and on (within 8 s) until each state was read once (as the judge's test below)
        while (len(details) < 3000 or not read >= SWAP_DETAILS) and time.monotonic() < deadline:
            details.append((await run_check(check, ctx)).detail)
            read.add(details[-1])
    finally:
        swapper.kill()
        swapper.wait()
    seen = set(details)
    allowed = SWAP_DETAILS | ({"tmp.txt was replaced while it was being opened"} if mode == "portable" else set())
    assert seen <= allowed, seen - allowed  # never "tmp.txt contains 'TOPSECRET'"
    assert "tmp.txt is a symlink" in seen and SWAP_DETAILS - {"tmp.txt is a symlink"} <= seen  # the race ran


@needs_renameat2
async def test_the_judge_never_gets_a_file_from_outside_while_it_is_swapped(tmp_path: Path) -> None:
    ws, swapper = _swapping_workspace(tmp_path)
    texts, refusals = set(), set()
    try:
        deadline, reads = time.monotonic() + 5, 0
        # 3000 reads, as the checks' test, and on (within 5 s) until the file and the link were each read once:
        # a swapper the busy machine left unscheduled for a while (tmp.txt the file) must not end the race unseen
        while (reads < 3000 or len(texts) + len(refusals) < 2) and time.monotonic() < deadline:
            reads += 1
            try:
                texts.add(read_artifact("tmp.txt", ws, "", 1000).text)
            except ArtifactRefused as exc:
                refusals.add(exc.detail)
    finally:
        swapper.kill()
        swapper.wait()
    assert texts <= {"nothing to see\n"}
    assert refusals == {"artifact 'tmp.txt' not read, nothing sent to the judge: tmp.txt is a symlink"}


@needs_renameat2
def test_a_session_with_a_swapping_leftover_never_passes_by_reading_outside(project, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET\n")
    pids = tmp_path / "pids"
    pids.mkdir()
    argv = [PY, "-S", "-c", SWAP_AGENT, str(secret), SWAPPER, str(pids)]
    project.config(f"agent: {{type: command, argv: {json.dumps(argv)}}}\nisolation: none\ntimeout_s: 20\nconcurrency: 4\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: contains, path: tmp.txt, text: TOPSECRET}\n")
    try:
        result = project.cli("eval", "--runs", "25", "-q")
    finally:
        _kill_swappers(pids)
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    assert result.exit_code == 1, result.output
    assert len(runs) == 25 and {r.status for r in runs} == {"fail"}
    reasons = {r.reason.split(": ", 1)[1] for r in runs}
    assert reasons <= SWAP_DETAILS and "tmp.txt is a symlink" in reasons  # the leftover was still swapping


# -- 5. one hostile file must not hang or crash the session -----------------------------------------

def _eval_in_subprocess(project, timeout_s: float = 30, runs: int = 2) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, in its own process: a hang is a failed test, not a hung suite."""
    return subprocess.run([PY, "-c", "from scarbook.cli import main; main()", "-C", str(project.root),
                           "eval", "--runs", str(runs), "-q"], capture_output=True, text=True, timeout=timeout_s)


def test_a_seeded_file_replaced_with_a_fifo_is_modified_and_nothing_hangs(project) -> None:
    agent = "import os; os.remove('empty.txt'); os.mkfifo('empty.txt'); os.mkfifo('new.fifo'); print('done')"
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', agent])}}}\nisolation: none\ntimeout_s: 20\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: only_changed, paths: [other.txt]}\n"
                      "  - {type: contains, path: empty.txt, text: x}\n", {"empty.txt": ""})
    start = time.monotonic()
    done = _eval_in_subprocess(project)
    assert time.monotonic() - start < 30
    assert done.returncode == 1, done.stderr
    runs = project.load().history.runs(project.load().history.sessions()[0].id)
    assert [r.reason for r in runs] == ["check 1 (only_changed): changed outside the allowed list: "
                                        "created new.fifo; modified empty.txt"] * 2
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: contains, path: empty.txt, text: x}\n", {"empty.txt": ""})
    done = _eval_in_subprocess(project)
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    assert [r.reason for r in runs] == ["check 1 (contains): empty.txt is not a regular file"] * 2


def test_a_1200_deep_folder_tree_is_a_change_the_check_fails_not_a_run_error(project) -> None:
    """The folder past the walk's 100 levels is the diff's entry. It was the run's infra error (retried, then
    out of the rate's denominator, exit 3): an agent that knew it failed could leave such a tree to take the
    run out of its rate (tests/checks/test_agent_made_errors.py has the other ways that were closed)."""
    agent = "import os\nfor _ in range(1200):\n    os.mkdir('d'); os.chdir('d')\nprint('done')"
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', agent])}}}\nisolation: none\ntimeout_s: 20\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: only_changed, paths: [tmp.txt]}\n")
    try:
        # one run: the tree is 1,200 folders to write and to delete, which takes seconds on a busy disk
        done = _eval_in_subprocess(project, runs=1)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        history = project.load().history
        runs = history.runs(history.sessions()[0].id)
        deep = "/".join(["d"] * 101)
        assert [(r.status, r.reason, r.cause.kind) for r in runs] == [(
            "fail", f"check 1 (only_changed): changed outside the allowed list: created {deep}", "agent")]
    finally:
        # shutil.rmtree (and pytest's tmp cleanup) recurses: 1,200 levels is too deep for it. The runs' folders
        # are <session>/c/<k>/ and, retried after an infra cause, <session>/c/<k>/attempt-N/: remove them all.
        subprocess.run(["rm", "-rf", str(project.workspaces)], check=False)


# An agent knows where scarbook writes its logs (beside its workspace, named by $SCARBOOK_RUN) and can
# plant a named pipe or a link there before scarbook creates them: for this run and for the next.
PLANT = """\
import os, sys
k = int(os.environ["SCARBOOK_RUN"])
for n in (k, k + 1):
    for name in (f"../{n}.output.txt", f"../{n}.stderr.log"):
        if not os.path.lexists(name):
            os.mkfifo(name)
os.symlink(sys.argv[1], f"../{k}.usage.jsonl.tmp"); os.rename(f"../{k}.usage.jsonl.tmp", f"../{k}.usage.jsonl")
sys.stderr.write("a line on stderr\\n")
print("x" * 5000)
"""


def test_pipes_and_links_planted_where_scarbook_writes_its_logs_neither_hang_nor_redirect(project, tmp_path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text('{"input_tokens": 1000000}\n')
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', PLANT, str(victim)])}}}\nisolation: none\n"
                   "timeout_s: 20\nconcurrency: 1\nkeep: all\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: output_contains, text: xxx}\n")
    done = _eval_in_subprocess(project)
    assert done.returncode == 0, done.stderr
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    assert [r.status for r in runs] == ["pass", "pass"]
    assert [r.agent_usage.input_tokens for r in runs] == [0, 0]  # the link was not followed
    assert victim.read_text() == '{"input_tokens": 1000000}\n'
    for r in runs:
        folder = Path(r.workspace).parent
        assert (folder / f"{r.k}.output.txt").read_text() == "x" * 5000 + "\n"
        assert Path(r.stderr_path).read_text() == "a line on stderr\n"


SWAP_LOG = """\
import os, sys, time
log = f"../{os.environ['SCARBOOK_RUN']}.stderr.log"
sys.stderr.write("it broke\\n"); sys.stderr.flush()
while not os.path.exists(log):
    time.sleep(0.01)
os.remove(log); os.mkfifo(log)  # what scarbook reads for the crash's last line
sys.exit(1)
"""


def test_a_stderr_log_swapped_for_a_pipe_before_scarbook_reads_its_last_line(project) -> None:
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', SWAP_LOG])}}}\nisolation: none\ntimeout_s: 20\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: output_contains, text: x}\n")
    done = _eval_in_subprocess(project)
    assert done.returncode == 1, done.stderr
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    assert [r.reason for r in runs] == ["agent exited with code 1: it broke"] * 2


# -- a failed run turned into a new scar: what the agent left is read as any workspace file is ---------

LINK_OUT = """\
import os, sys
os.symlink(sys.argv[1], "answer.txt")
os.symlink(sys.argv[1], os.environ["SCARBOOK_TRANSCRIPT"])
open("notes.txt", "w").write("my notes\\n")
print("done")
"""


def test_a_draft_case_from_a_failed_run_never_copies_a_linked_secret(project, tmp_path) -> None:
    from scarbook.cases.drafts import create_draft_case

    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', LINK_OUT, str(secret)])}}}\nisolation: none\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: out.txt}\n")
    assert project.cli("eval", "--runs", "1", "-q").exit_code == 1
    loaded = project.load()
    (run,) = loaded.history.runs(loaded.history.sessions()[0].id)
    assert run.diff.created == ["answer.txt", "notes.txt"]
    draft = create_draft_case(loaded, loaded.load_cases().cases[0], run)
    scar = loaded.cases_dir / draft.id / "scar"
    assert sorted(p.name for p in scar.iterdir()) == ["notes.txt"]  # the link skipped, no transcript
    assert draft.scar.failed_artifact == "scar/notes.txt" and draft.scar.transcript is None
    assert (scar / "notes.txt").read_text() == "my notes\n"


# -- the run review shows the files a failed run left: a pipe or a link there must not hang or leak ----

LEAVE_PIPE_AND_LINK = """\
import os, sys
os.mkfifo("pipe")
os.symlink(sys.argv[1], "key.txt")
open("notes.txt", "w").write("my notes\\n")
sys.stderr.write("oops\\n")
print("done")
"""


def test_reviewing_a_run_that_left_a_pipe_and_a_linked_secret_neither_hangs_nor_shows_it(project, tmp_path) -> None:
    from scarbook.tui.widgets.run_detail import describe_run
    from scarbook.views.run_review import load_review, load_run_detail

    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN PRIVATE KEY-----\n")
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-S', '-c', LEAVE_PIPE_AND_LINK, str(secret)])}}}\nisolation: none\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: out.txt}\n")
    assert project.cli("eval", "--runs", "1", "-q").exit_code == 1
    loaded = project.load()
    (run,) = loaded.history.runs(loaded.history.sessions()[0].id)
    shown: list[str] = []
    data = load_review(loaded, run.session_id, run.case_id)
    reader = threading.Thread(target=lambda: shown.append(describe_run(run, load_run_detail(loaded, run, data)).plain),
                              daemon=True)
    reader.start()
    reader.join(15)
    assert not reader.is_alive(), "describe_run blocked opening the pipe the agent left"
    (text,) = shown
    assert "PRIVATE KEY" not in text
    assert " created  key.txt\n   (not shown: key.txt is a symlink)\n" in text
    assert " created  pipe\n   (not shown: pipe is not a regular file)\n" in text
    assert " created  notes.txt\n   +my notes\n" in text
    assert "stderr log\noops\n" in text
