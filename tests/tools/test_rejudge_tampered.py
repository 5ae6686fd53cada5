"""Issue 33.15: a rejudge that cannot grade a run again keeps that run's case without a verdict.

A session judges a good case (PASS) and a bad one (FAIL), through the real SDK and the loopback
Messages-API server. Then an unconfined hostile agent, run in a later session, alters the kept
artifacts of the failing runs (workspaces/judge-artifacts/). Before, `scarbook rejudge` listed those
runs as not re-judgeable, left the failing case out and exited 0; now they stay in the new session as
unjudged — the case has no verdict and the rejudge exits 3."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401

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


def _verdict(body: dict) -> object:
    said = json.dumps(body)
    return tool_reply([("FAIL", "it says bad")]) if "bad" in said else tool_reply([("PASS", "it says good")])


def _cli(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def test_runs_whose_kept_artifacts_were_altered_leave_their_case_without_a_verdict(tmp_path, judge_server,
                                                                                 monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    judge_server.responder = _verdict
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(tmp_path / "agent.py"))}, {json.dumps(str(tmp_path))}]
        runs: 3
        concurrency: 1
        threshold: 0.5
        isolation: none
        gate: {{mode: point}}
        judge: {{model: claude-sonnet-4-6, base_url: {judge_server.url}, max_retries: 0, timeout_s: 5}}
        """))
    for cid in ("good", "bad"):
        (tmp_path / "cases" / cid).mkdir(parents=True)
        (tmp_path / "cases" / cid / "case.yaml").write_text(
            f"id: {cid}\ntask: write out.txt\nchecks:\n  - type: llm_judge\n    artifact: out.txt\n"
            "    rubric: [out.txt says good]\n")
    (tmp_path / "cases" / "tamper").mkdir(parents=True)
    (tmp_path / "cases" / "tamper" / "case.yaml").write_text(
        "id: tamper\ntask: t\nchecks:\n  - {type: file_exists, path: out.txt}\n")
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
