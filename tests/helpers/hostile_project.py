"""What the tests of issue 33's trust items share: a project whose command agent is a hostile script,
handed the project root (unconfined, it reaches everything under it: history, the judge's cache and
kept artifacts), judged by the loopback Messages-API server (tests/helpers/judge_server.py).

    hostile_project(root, AGENT, judge_server.url, cases={"good": judged_case("good"), ...}, runs=3)
    judge_server.responder = good_or_bad      # FAIL for what says "bad", PASS otherwise
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.judge_server import JUDGE_TIMEOUT_S, ScriptedReply, tool_reply


def judged_case(cid: str, artifact: str = "out.txt") -> str:
    """A case graded by the judge alone: is the artifact good?"""
    return (f"id: {cid}\ntask: write {artifact}\nchecks:\n  - type: llm_judge\n    artifact: {artifact}\n"
            "    rubric: [the answer is good]\n")


HEX_RUN = re.compile(r"[0-9a-f]{16,}")  # the artifact markers' nonce (32 hex digits), digests: no artifact's words


def good_or_bad(body: dict[str, Any]) -> ScriptedReply:
    """The judge's verdict on a request (online, or a batch request's params): FAIL when it says bad. The request's
    nonce is left out: it is hex, and about 1 in 140 of them held "bad" (a good artifact judged FAIL, now and then)."""
    if "bad" in HEX_RUN.sub("", json.dumps(body)):
        return tool_reply([("FAIL", "it says bad")])
    return tool_reply([("PASS", "it says good")])


def hostile_project(root: Path, agent: str, judge_url: str, *, cases: dict[str, str], runs: int = 1,
                    isolation: str = "none", judge: str = "", extra: str = "") -> Path:
    """scarbook.yaml (the agent `agent`'s source, run as `python agent.py ROOT`), and cases/<id>/case.yaml."""
    (root / "agent.py").write_text(agent)
    argv = [sys.executable, str(root / "agent.py"), str(root)]
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent: {{type: command, argv: {json.dumps(argv)}}}
        runs: {runs}
        concurrency: 1
        isolation: {isolation}
        gate: {{mode: point}}
        judge: {{model: claude-sonnet-4-6, base_url: {judge_url}, max_retries: 0, timeout_s: {JUDGE_TIMEOUT_S}{judge}}}
        """) + extra)
    for cid, text in cases.items():
        (root / "cases" / cid).mkdir(parents=True, exist_ok=True)
        (root / "cases" / cid / "case.yaml").write_text(text)
    return root


def inline_agent(project, code: str, isolation: str, checks: str, *, seed: dict[str, str] | None = None,
                 extra: str = "", timeout_s: float = 20) -> None:
    """The `project` fixture's scarbook.yaml running `python -c code` as the agent under `isolation` (a test
    asking for the sandbox where it cannot start is skipped), and case c with `checks` (YAML list items)."""
    if isolation == "sandbox":
        from tests.helpers.recorder_upstream import sandbox_or_skip

        sandbox_or_skip(project.root)
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', code])}}}\n"
                   f"timeout_s: {timeout_s:g}\nisolation: {isolation}\n{extra}")
    project.case("c", f"id: c\ntask: t\nchecks:\n{checks}", seed)


def without_dac_override(argv: list[str]) -> list[str]:
    """`argv` run as a scarbook on CI runs: a user the file bits bind (when the tests run as root, setpriv drops
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH; without setpriv the test is skipped)."""
    if os.geteuid() != 0:
        return argv
    if sys.platform != "linux" or shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no way to run scarbook without CAP_DAC_OVERRIDE")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *argv]


def eval_bound_by_file_bits(project, runs: int) -> tuple[Any, list[dict[str, Any]]]:
    """`scarbook eval --runs RUNS` of `project` in a process the file bits bind (without_dac_override): the
    finished process and the JSON report's runs in k order."""
    report = project.root / "report.json"
    argv = [sys.executable, "-c", "from scarbook.entry import main; main()", "-C", str(project.root), "eval",
            "--runs", str(runs), "-q", "--json", str(report)]
    done = subprocess.run(without_dac_override(argv), capture_output=True, text=True, timeout=120)
    return done, sorted(json.loads(report.read_text())["runs"], key=lambda r: r["k"])


def eval_json(project, runs: int) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """`scarbook eval --runs RUNS --json` of `project` in this process: the CLI's result, the JSON report, and
    its runs in k order."""
    report = project.root / "report.json"
    result = project.cli("eval", "--runs", str(runs), "-q", "--json", str(report))
    doc = json.loads(report.read_text())
    return result, doc, sorted(doc["runs"], key=lambda r: r["k"])


def eval_bounded(project, runs: int, bound_s: float, what: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """`scarbook eval --runs RUNS --json` of `project` in a process of its own, which must end within `bound_s`
    (else the test fails, saying `what` froze the session): its result and the JSON report."""
    report = project.root / "report.json"
    argv = [sys.executable, "-c", "from scarbook.entry import main; main()", "-C", str(project.root), "eval",
            "--runs", str(runs), "-q", "--json", str(report)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=bound_s)
    except subprocess.TimeoutExpired:
        pytest.fail(f"scarbook eval did not end within {bound_s} s: {what} froze the session")
    assert "Traceback" not in done.stderr + done.stdout
    return done, json.loads(report.read_text())
