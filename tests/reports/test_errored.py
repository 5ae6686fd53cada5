"""A session that did not finish exits 3 — it saw part of the evidence — but its JUnit file said every
testcase passed (tests="3" failures="0" errors="0"): a CI dashboard (GitHub's test reporters, GitLab,
Jenkins) showed a cancelled eval as green. Each testcase with no failure or error of its own now carries
`<error type="incomplete">` saying why there is no verdict and, where `scarbook resume` can finish the
session, the command (reports/errored.py), for one agent and for a comparison of several; the summary
under the table ends with the same words (its gate lines said "undecided cases pass with a warning" above an
exit 3, and nothing said how to finish the session)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from xml.etree import ElementTree as ET

import pytest

from tests.helpers.stopped_session import stopped_short

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
AGENT = "open('tmp.txt', 'w').write('x')"


def errors_of(path) -> tuple[ET.Element, list[tuple[str, str | None, str | None]]]:
    suite = ET.parse(path).getroot()
    return suite, [(tc.get("name"), e.get("type"), e.get("message"))
                   for tc in suite.iter("testcase") for e in tc.iter("error")]


@pytest.mark.parametrize(("state", "why"), [
    ("cancelled", "the session was cancelled (Ctrl-C, or its CI job cancelled), so its runs are part of the evidence "
                  "(exit 3) — `scarbook resume {id}` runs the rest"),
    ("running", "the session was interrupted (its scarbook was killed), so its runs are part of the evidence (exit 3) — "
                "`scarbook resume {id}` runs the rest"),
    ("stopped: budget", "the session was stopped by --max-cost, so its runs are part of the evidence (exit 3)"),
])
def test_a_session_that_did_not_finish_is_an_error_in_junit(project, state, why) -> None:
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', AGENT])}}}\nisolation: none\n")
    sid = stopped_short(project, state=state, keep=1)  # its one run kept passed: no failure of its own
    junit = project.root / "r.xml"
    result = project.cli("report", sid, "--junit", str(junit))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "no verdict: " + why.format(id=sid)  # the summary's last word too
    suite, errors = errors_of(junit)
    assert errors == [("c", "incomplete", "no verdict: " + why.format(id=sid))]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")


SLOW_AGENT = "import time; time.sleep(0.3); " + AGENT


def test_a_comparison_cancelled_with_ctrl_c_is_an_error_in_junit(project) -> None:
    argv = json.dumps([sys.executable, "-c", SLOW_AGENT])
    project.config(f"agent: {{type: command, argv: {argv}}}\nisolation: none\nconcurrency: 2\n"
                   f"agents:\n  a: {{type: command, argv: {argv}}}\n  b: {{base: a}}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    junit = project.root / "r.xml"
    proc = subprocess.Popen([*SCARBOOK, "-C", str(project.root), "eval", "--agents", "a,b", "--runs", "40", "-q",
                             "--junit", str(junit)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    history = project.workspaces / "history"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # some runs recorded: then Ctrl-C
        if sum(p.read_text().count("\n") for p in history.glob("*/runs-*.jsonl")) >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    (sid,) = [p.name for p in history.iterdir()]
    suite, errors = errors_of(junit)
    message = (f"no verdict: the session was cancelled (Ctrl-C, or its CI job cancelled), so its runs are part of the "
               f"evidence (exit 3) — `scarbook resume {sid}` runs the rest")
    assert out.splitlines()[-1] == message  # under the comparison's table, as the file says it
    assert errors == [("c [b vs a]", "incomplete", message), ("suite [b vs a]", "incomplete", message)]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "2")
