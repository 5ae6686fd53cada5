"""A reader that leaves early — `scarbook eval --junit r.xml | head`, `scarbook sessions | head -3` — closes
the pipe under scarbook's standard output. Click's answer to the broken pipe was to exit 1 at once: the
eval's report files were never written and its exit code read "a case below its threshold", with no word
said. The command now goes on with nothing more printed there: its reports, its recorded session and its
exit code are the ones an unbroken pipe would have had, and no traceback is printed."""

from __future__ import annotations

import json
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest

pytestmark = pytest.mark.needs_proc
SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
AGENT = "open('tmp.txt', 'w').write('x')"


@pytest.fixture
def passing(project):
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', AGENT])}}}\nisolation: none\n")
    project.case("c", "id: c\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    return project


def run_with_reader_gone(project, *args: str, stderr_too: bool = False) -> tuple[int, str]:
    """`scarbook ARGS | true`: the reader closes the pipe before scarbook prints anything to it (with
    `stderr_too`, `2>&1 | true`: both streams go to it). The exit code and what stderr said."""
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if stderr_too else subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()
    err = "" if stderr_too else proc.stderr.read()
    return proc.wait(timeout=120), err


@pytest.mark.parametrize("stderr_too", [False, True], ids=["stdout", "stdout-and-stderr"])
def test_eval_writes_its_reports_and_gates_when_its_reader_left(passing, stderr_too) -> None:
    project = passing
    junit, report = project.root / "r.xml", project.root / "r.json"
    code, err = run_with_reader_gone(project, "eval", "--runs", "3", "--junit", str(junit), "--json", str(report),
                                     stderr_too=stderr_too)
    assert code == 0  # 3/3 at 80%: undecided, which passes with a warning — not 1, "below its threshold"
    assert json.loads(report.read_text())["exit_code"] == 0
    assert ET.parse(junit).getroot().get("tests") == "1"
    assert "Traceback" not in err and "Exception ignored" not in err and "Broken pipe" not in err, err
    (session,) = project.load().history.sessions()
    assert session.state == "finished"


def test_a_listing_read_in_part_exits_0(passing) -> None:
    assert run_with_reader_gone(passing, "eval", "--runs", "1", "-q")[0] == 0
    assert run_with_reader_gone(passing, "sessions") == (0, "")
