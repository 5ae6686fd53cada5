"""`scarbook eval --rerun SESSION --only ...` (issue 24.5): re-run just the cases that had such runs,
as a new session linked to its source, whose records and rates never change."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

AGENT = """\
from pathlib import Path
if Path('case.txt').read_text() == 'good':
    Path('ok.txt').write_text('ok')
"""
CASE = "id: {cid}\ntask: write ok.txt\nchecks:\n  - {{type: file_exists, path: ok.txt}}\n"


@pytest.fixture
def two(project):
    script = project.root / "agent.py"
    script.write_text(textwrap.dedent(AGENT))
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]}}\n"
                   "runs: 2\nconcurrency: 1\ntimeout_s: 30\nthreshold: 0.8\n")
    project.case("good", CASE.format(cid="good"), seed={"case.txt": "good"})
    project.case("bad", CASE.format(cid="bad"), seed={"case.txt": "bad"})
    first = project.cli("eval", "-q", "-l", "source", "--json", str(project.root / "source.json"))
    assert first.exit_code == 1, first.output
    return project


def test_rerun_runs_only_the_failed_cases_as_a_new_linked_session(two) -> None:
    source = json.loads((two.root / "source.json").read_text())
    sid = source["session"]["id"]
    runs_file_before = {p.name: p.read_bytes() for p in (two.workspaces / "history" / sid).iterdir() if p.is_file()}
    out = two.root / "rerun.json"
    result = two.cli("eval", "-q", "--rerun", "source", "--only", "fail", "--json", str(out))
    assert result.exit_code == 1, result.output
    report = json.loads(out.read_text())
    assert report["session"]["case_ids"] == ["bad"] and report["session"]["id"] != sid
    assert report["session"]["rerun_of"] == {"session": sid, "only": ["fail"], "cases": {"bad": 2}}
    assert sorted((r["case_id"], r["k"]) for r in report["runs"]) == [("bad", 1), ("bad", 2)]
    assert (f"re-run of session {sid} (only fail): 1 case — bad (2) (matching runs in the source); the source "
            "session's rates are unchanged") in result.stdout
    # the source is as it was: same files, same bytes
    assert {p.name: p.read_bytes() for p in (two.workspaces / "history" / sid).iterdir()
            if p.is_file() and p.name in runs_file_before} == runs_file_before
    again = two.cli("report", sid, "--json", str(two.root / "again.json"))
    assert again.exit_code == 0, again.output  # report always exits 0 when it could write: eval is the gate
    assert json.loads((two.root / "again.json").read_text())["cases"] == source["cases"]


def test_rerun_by_cause(two) -> None:
    """--only agent picks the case the agent failed (cause agent); --only infra finds none here."""
    result = two.cli("eval", "-q", "--rerun", "latest", "--only", "agent")
    assert result.exit_code == 1, result.output
    assert "(only agent): 1 case — bad (2)" in result.stdout
    none = two.cli("eval", "-q", "--rerun", "source", "--only", "infra,case")
    assert none.exit_code == 2
    assert none.stderr.endswith("has no infra / case runs: nothing to re-run\n")


@pytest.mark.parametrize(("args", "message"), [
    (("--rerun", "source", "--only", "fail,weird"),
     "--only takes a comma-separated list of fail, error, unjudged, agent, infra, judge, case (run statuses and "
     "causes), got 'fail,weird'"),
    (("--rerun", "source", "bad"), "--rerun picks the cases itself (those of the session with a matching run): "
                                   "give no CASE names or --tag"),
    (("--only", "fail"), "--only chooses which runs of --rerun's session pick their case: give --rerun SESSION"),
    (("--rerun", "nope"), "no session matches 'nope' (by id, label, 'latest' or 'previous') — see `scarbook sessions`"),
])
def test_bad_rerun_input_is_said_and_nothing_runs(two, args, message) -> None:
    sessions = sorted(p.name for p in (two.workspaces / "history").iterdir())
    result = two.cli("eval", "-q", *args)
    assert result.exit_code == 2
    assert result.stderr == f"scarbook: {message}\n"
    assert sorted(p.name for p in (two.workspaces / "history").iterdir()) == sessions


def test_a_session_of_several_agents_is_not_rerun_with_the_default_agent(project) -> None:
    """Before: the cases were picked by any agent's runs (here only the candidate failed) and run again with
    scarbook.yaml's `agent:` — another agent than the one that failed — as a 're-run' that passed."""
    from tests.cli.test_agents_history import agents_session

    sid = agents_session(project, "base,never")
    before = sorted(p.name for p in (project.workspaces / "history").iterdir())
    result = project.cli("eval", "-q", "--rerun", "ab")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"scarbook: --rerun ab: session {sid} compared the agents base, never, and --rerun runs one agent "
        "(scarbook.yaml's agent:) — to run its cases again, `scarbook eval --agents base,never alpha`")
    assert sorted(p.name for p in (project.workspaces / "history").iterdir()) == before  # nothing ran
