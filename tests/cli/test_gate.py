"""The gate end to end (issue 22): `scarbook eval` with evidence/point mode, undecided pass/fail/more,
and errors that cannot buy a green — real sessions of the demo agent and of command agents."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from scarbook.stats.decisions import binom_sf

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")

ONE_THEN_BROKEN = """\
#!{python}
# Run 1 does the job; then the agent breaks itself, so every later run cannot even start (an error).
from pathlib import Path
import sys
Path("out.txt").write_text("ok")
Path(sys.argv[0]).write_text("#!/nonexistent/interpreter\\n")
"""


def _case_row(stdout: str, cid: str) -> list[str]:
    return next(line.split() for line in stdout.splitlines() if line.startswith(cid + " "))


def test_one_pass_and_nine_errors_exits_3_and_says_why(project) -> None:
    agent = project.root / "agent.py"
    agent.write_text(ONE_THEN_BROKEN.format(python=sys.executable))
    agent.chmod(0o755)
    # isolation: none — the agent breaks its own #! line in the project folder, and unconfined the spawn errors
    project.config(f"agent: {{type: command, argv: [{json.dumps(str(agent))}]}}\nisolation: none\n", gate=None)
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: out.txt}]\n")
    for mode in ("evidence", "point"):
        agent.write_text(ONE_THEN_BROKEN.format(python=sys.executable))
        result = project.cli("eval", "--runs", "10", "-j", "1", "-q", "--gate", mode)
        assert result.exit_code == 3, result.output
        row = _case_row(result.stdout, "c")
        assert row[1:5] == ["1", "0", "9", "100%"]  # the rate is shown, with its errors beside it
        assert "no verdict" in " ".join(row)
        assert ("c: no verdict — only 1 of its 10 runs reached a verdict; the gate needs at least 5 (errors "
                "cannot count as evidence)") in result.stdout
        assert "c: its 9 errors could span 10–100% (had each been a fail, or each a pass)" in result.stdout


def test_undecided_fail_is_a_release_gate(project, tmp_path: Path) -> None:
    from xml.etree import ElementTree as ET

    project.bundled(gate=None)
    xpath = tmp_path / "junit.xml"
    result = project.cli("eval", "write-one-line", "--runs", "10", "-q", "--undecided", "fail", "--junit", str(xpath))
    assert result.exit_code == 3, result.output
    (tc,) = ET.parse(xpath).getroot().findall("testcase")
    error = tc.find("error")
    assert error.get("type") == "undecided" and error.get("message").endswith(
        "— needs about 34 more runs to show it meets 80%")
    assert ("write-one-line: undecided at 9/10 — needs about 34 more runs to show it meets 80%; counted as a "
            "failure (gate undecided: fail)") in result.stdout
    passed = project.cli("eval", "write-one-line", "--runs", "10", "-q", "--undecided", "pass")
    assert passed.exit_code == 0, passed.output


def test_undecided_fail_from_scarbook_yaml_and_the_flag_wins(project) -> None:
    project.bundled(gate=None)
    cfg = project.root / "scarbook.yaml"
    cfg.write_text(cfg.read_text() + "gate:\n  undecided: fail\n")
    assert project.cli("eval", "write-one-line", "--runs", "10", "-q").exit_code == 3
    assert project.cli("eval", "write-one-line", "--runs", "10", "-q", "--undecided", "pass").exit_code == 0


def test_undecided_more_adds_runs_at_looks_up_to_max_runs(project, tmp_path: Path) -> None:
    project.bundled(gate=None)
    out = tmp_path / "r.json"
    result = project.cli("eval", "write-one-line", "review-api-claims", "--runs", "5", "--max-runs", "20", "-q",
                         "--undecided", "more", "--json", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["session"]["gate"] == {"mode": "evidence", "alpha": 0.05, "undecided": "more",
                                         "min_verdicts": None, "looks": [5, 10, 20]}
    runs_per_case = {c["case_id"]: c["passes"] + c["fails"] + c["errors"] for c in report["cases"]}
    decisions = {c["case_id"]: c["decision"] for c in report["cases"]}
    for cid, n in runs_per_case.items():
        assert n in (5, 10, 20)  # only at the looks
        if n < 20:
            assert decisions[cid] in ("above", "below")  # it stopped because it decided
    # 9/10 in every block of ten can never reach p < 0.05/3 above 80% by 20 runs: both ran to the cap
    assert runs_per_case == {"write-one-line": 20, "review-api-claims": 20}
    assert binom_sf(18, 20, 0.8) > 0.05 / 3
    assert set(decisions.values()) == {"undecided"}
    history = project.load().history
    info = history.sessions()[0]
    assert info.runs_per_case == 20 and len(history.runs(info.id)) == 40


def test_undecided_more_stops_a_case_that_decides(project, tmp_path: Path) -> None:
    project.case("always", "id: always\ntask: nothing\nthreshold: 0.5\nchecks:\n"
                 "  - {type: only_changed, paths: []}\n")
    out = tmp_path / "r.json"
    result = project.cli("eval", "--runs", "4", "--max-runs", "32", "-q", "--gate", "evidence", "--undecided", "more",
                         "--json", str(out))
    assert result.exit_code == 0, result.output
    (case,) = json.loads(out.read_text())["cases"]
    # 4/4 at 0.5 is p = 0.0625; 8/8 is 0.0039 < 0.05/4 (four looks: 4, 8, 16, 32): decided at the second look
    assert (case["passes"], case["decision"]) == (8, "above")


def test_a_gate_flag_that_is_not_a_choice_is_a_usage_error(project) -> None:
    result = project.cli("eval", "--gate", "strict")
    assert result.exit_code == 2
    assert "Invalid value for '--gate': 'strict' is not one of 'evidence', 'point'." in result.output


def test_undecided_more_says_each_case_a_look_decides_as_it_is_decided(project) -> None:
    project.case("always", "id: always\ntask: nothing\nthreshold: 0.5\nchecks:\n"
                 "  - {type: only_changed, paths: []}\n")
    result = project.cli("eval", "--runs", "4", "--max-runs", "32", "--gate", "evidence", "--undecided", "more")
    assert result.exit_code == 0, result.output
    # the first look (4/4: P = .0625) leaves it open, and the count of runs grows with the look's runs
    # (before, the lines counted on past the first look's total: [5/4] ... [8/4])
    assert "[4/4] always #" in result.output and "[8/8] always #" in result.output, result.output
    assert "undecided so far: always — running it to 8 runs" in result.output
    counts = [tuple(map(int, line[1:line.index("]")].split("/"))) for line in result.output.splitlines()
              if line.startswith("[")]
    assert len(counts) == 8 and all(done <= total for done, total in counts), counts
    # said as the second look decides it (before, nothing until the session's report)
    assert "always: decided above after 8 runs" in result.output, result.output
