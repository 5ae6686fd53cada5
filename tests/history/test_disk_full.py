"""Disk full, provoked for real: `scarbook eval` runs under RLIMIT_FSIZE (with SIGXFSZ ignored, a write
past the limit fails with EFBIG, as ENOSPC would). One message, no traceback; a failed first append
leaves no empty runs file that later reads as "damaged"; a stderr log that cannot be written does not
turn an agent that started and finished into "could not start"."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

from scarbook.history.store import History

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]


def _limited(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return apply


def _eval(root: Path, limit: int) -> subprocess.CompletedProcess:
    return subprocess.run([*SCARBOOK, "-C", str(root), "eval", "--runs", "1", "-q"], capture_output=True,
                          text=True, timeout=120, preexec_fn=_limited(limit))


def _agent(project, body: str) -> None:
    agent = project.root / "agent.py"
    agent.write_text(body)
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {agent}]}}\n")
    project.case("c", "id: c\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")


def test_a_failed_first_append_leaves_no_empty_runs_file_and_no_traceback(project) -> None:
    # session.json (about 1 KB) fits under the limit; the run's record, with its 3,500-character output, does not.
    _agent(project, "open('tmp.txt', 'w').write('ok')\nprint('x' * 3500)\n")
    out = _eval(project.root, 3000)
    assert "Traceback" not in out.stderr and "During handling" not in out.stderr, out.stderr
    (folder,) = [p for p in (project.workspaces / "history").iterdir() if p.is_dir()]
    assert not (folder / "runs-c.jsonl").exists()  # nothing that would read as "damaged" later
    assert (f"could not record run c#1 in {folder}: File too large — free some disk space (the runs recorded "
            "before it are kept)") in out.stderr
    assert out.returncode in (2, 3)  # never 0 or 1: no verdict was recorded
    listed = subprocess.run([*SCARBOOK, "-C", str(project.root), "sessions"], capture_output=True, text=True)
    assert listed.returncode == 0 and listed.stderr == ""
    assert History(project.workspaces).runs(folder.name) == []


def test_a_stderr_log_the_disk_cannot_hold_does_not_make_a_started_agent_unstarted(project) -> None:
    _agent(project, "import sys\nsys.stderr.write('log line\\n' * 200_000)\n"  # 1.8 MB of stderr
                    "open('tmp.txt', 'w').write('ok')\nprint('done')\n")
    out = _eval(project.root, 256 * 1024)
    assert "Traceback" not in out.stderr and "Exception in callback" not in out.stderr, out.stderr
    (info,) = History(project.workspaces).sessions()
    (run,) = History(project.workspaces).runs(info.id)
    assert (run.status, run.reason) == ("pass", "all checks passed")
    assert out.returncode == 0, out.stdout + out.stderr
