"""Issue 33.15: a rejudge that cannot grade a run again keeps that run's case without a verdict.

A session judges a good case (PASS) and a bad one (FAIL), through the real SDK and the loopback
Messages-API server. Then an unconfined hostile agent, run in a later session, alters the kept
artifacts of the failing runs (workspaces/judge-artifacts/). Before, `scarbook rejudge` listed those
runs as not re-judgeable, left the failing case out and exited 0; now they stay in the new session as
unjudged — the case has no verdict and the rejudge exits 3."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from tests.helpers.hostile_project import good_or_bad, hostile_project, judged_case
from tests.helpers.judge_server import judge_server  # noqa: F401

# Writes out.txt: "bad" in case bad, "good" elsewhere; in case tamper it alters every kept artifact that
# holds "bad" (its content no longer matches its name) and writes nothing to judge.
AGENT = r'''
import os, pathlib, sys
root = pathlib.Path(sys.argv[1])
case = os.environ["SCARBOOK_CASE"]
if case == "tamper":
    for p in (root / "workspaces" / "judge-artifacts").rglob("*.json"):
        if '"bad' in p.read_text():
            p.write_text(p.read_text().replace('"bad', '"good'))
pathlib.Path("out.txt").write_text("bad\n" if case == "bad" else "good\n")
print("done")
'''


def _cli(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def test_runs_whose_kept_artifacts_were_altered_leave_their_case_without_a_verdict(tmp_path, judge_server,
                                                                                 monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    judge_server.responder = good_or_bad
    hostile_project(tmp_path, AGENT, judge_server.url, runs=3, extra="threshold: 0.5\n", cases={
        "good": judged_case("good"), "bad": judged_case("bad"),
        "tamper": "id: tamper\ntask: t\nchecks:\n  - {type: file_exists, path: out.txt}\n"})
    first = _cli(tmp_path, "eval", "good", "bad", "-q")
    assert first.exit_code == 1, first.output  # bad: 0/3
    source = json.loads(next((tmp_path / "workspaces" / "history").glob("*/session.json")).read_text())
    sid = source["session"]["1"]["id"]
    assert _cli(tmp_path, "eval", "tamper", "--runs", "1", "-q").exit_code == 0  # the agent alters the artifacts

    out = tmp_path / "rejudge.json"
    result = _cli(tmp_path, "rejudge", sid, "--json", str(out))
    assert result.exit_code == 3, result.output + result.stderr
    report = json.loads(out.read_text())
    runs = {(r["case_id"], r["k"]): r for r in report["runs"]}
    assert {k: r["status"] for k, r in runs.items()} == {
        **{("good", k): "pass" for k in (1, 2, 3)}, **{("bad", k): "unjudged" for k in (1, 2, 3)}}
    bad = runs[("bad", 1)]
    assert bad["reason"].startswith("not re-judgeable: its artifact "), bad["reason"]
    assert bad["reason"].endswith(" is damaged (its content does not match its name)")
    cases = {c["case_id"]: c for c in report["cases"]}
    assert cases["bad"]["rate"] is None, cases["bad"]
    assert "3 runs not re-judgeable (3 kept without a verdict, so their cases have none):" in result.stderr
