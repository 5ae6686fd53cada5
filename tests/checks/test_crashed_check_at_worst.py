"""A rule check that crashes on what the agent made cannot take the run out of the rate (hostile agent, round seven).

A check that raises has no verdict: the run is an error, out of the pass rate's denominator. The readers of the rule
checks turn every agent-made file known to break a reader into a fail that says what could not be read (huge JSON
nesting, a number past Python's digits, invalid UTF-8, a pipe, a folder or a link where a file goes, a file past the
read cap: tests/checks/test_agent_made_errors.py, round seven's search found no other). For the reader still unknown,
the gate reads a run whose rule check crashed as a fail too, as it reads a judge reply the artifact broke: a case whose
decision differs between the two readings has no verdict (exit 3). Before, runs 7-10 of an agent that wrote what
breaks its check read 6/6: 100% at threshold 80%, exit 0. Real agent processes through `scarbook eval`, unconfined and
sandboxed; the reader that raises on the agent's words is put in for the unknown one."""

from __future__ import annotations

import json
import sys

import pytest

from scarbook.checks import sequence
from tests.helpers.recorder_upstream import sandbox_or_skip

AGENT = """\
import os
k = int(os.environ["SCARBOOK_RUN"])
open("out.txt", "w").write("ok" if k <= 6 else "bad: what breaks the check")
"""
NOTE = ("it reads above only because 4 runs' rule checks crashed on what the run left (the check crashed: ValueError: "
        "a reader that met what it did not expect), which what the agent wrote can cause; read as fails they make it "
        "below")


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_check_that_crashes_on_what_the_agent_wrote_buys_no_verdict(project, monkeypatch, isolation) -> None:
    if isolation == "sandbox":
        sandbox_or_skip(project.root)
    contains = sequence.ALL_RULES["contains"]

    def breaks_on(ctx, params):
        if "what breaks the check" in (ctx.workspace / params["path"]).read_text():
            raise ValueError("a reader that met what it did not expect")
        return contains(ctx, params)

    monkeypatch.setitem(sequence.ALL_RULES, "contains", breaks_on)
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', AGENT])}}}\n"
                   f"timeout_s: 60\nisolation: {isolation}\nthreshold: 0.8\n")
    project.case("c", "id: c\ntask: write ok\nchecks: [{type: contains, path: out.txt, text: ok}]\n")
    report = project.root / "report.json"
    result = project.cli("eval", "--runs", "10", "--json", str(report))
    doc = json.loads(report.read_text())
    [case] = doc["cases"]
    assert (case["passes"], case["fails"], case["errors"]) == (6, 0, 4)
    assert {(r["status"], r["reason"]) for r in doc["runs"] if r["k"] > 6} == {
        ("error", "check 1 (contains): the check crashed: ValueError: a reader that met what it did not expect")}
    assert "Traceback" not in result.output
    assert result.exit_code == 3, result.output  # was 0: 6/6 read 100%
    assert (case["decision"], case["gate_note"]) == ("no verdict", NOTE)
    assert f"c: no verdict — {NOTE}\n" in result.stdout
