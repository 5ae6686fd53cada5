"""An agent's own claim of infra buys a retry, never a verdict (hostile agent, round six).

A real agent that knows it failed prints what the machine's failures look like (a 529, MemoryError, No space left on
device, a 'bwrap:' line) and exits 1, or exits 127 having done nothing: scarbook retries the run (retry_infra: 1) and
the retry replaces the first attempt. Before, a 6/10 agent read 10/10 at threshold 0.5: above, exit 0. The retry is
kept (a real 529 of an agent not recorded is still retried), but the gate reads each run retried on the agent's own
word as a fail too, and a case whose decision differs between the two readings has no verdict (exit 3). Real agent
processes through `scarbook eval`, sandboxed (the default) and `isolation: none`.
"""

from __future__ import annotations

import json
import sys
from xml.etree import ElementTree as ET

import pytest

# Runs 1-6 pass; runs 7-10 fail their task and say the machine failed them, but pass the retry (its workspace is
# under attempt-2/: an agent can tell, sandboxed or not).
CLAIMING = """\
import os, sys
if "attempt-" in os.getcwd() or int(os.environ["SCARBOOK_RUN"]) <= 6:
    open("ok.txt", "w").write("ok")
    print("done")
else:
    {claim}
"""
CASE = "id: c\ntask: write ok.txt\nchecks: [{type: file_exists, path: ok.txt}]\n"
CLAIMS = {
    "api-overloaded": "print(\"anthropic.InternalServerError: Error code: 529 - {'type': 'overloaded_error'}\", "
                      "file=sys.stderr); sys.exit(1)",
    "out-of-memory": "print('MemoryError', file=sys.stderr); sys.exit(1)",
    "disk-full": "print('OSError: [Errno 28] No space left on device', file=sys.stderr); sys.exit(1)",
    "sandbox-failed": "print('bwrap: Can not mount tmpfs', file=sys.stderr); sys.exit(1)",
    "agent-could-not-exec": "print('sh: 1: claude: not found', file=sys.stderr); sys.stderr.flush(); os._exit(127)",
}


def _claiming(project, claim: str, isolation: str, runs_passing: int = 6) -> None:
    code = CLAIMING.format(claim=CLAIMS[claim]).replace("<= 6", f"<= {runs_passing}")
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', code])}}}\n"
                   f"threshold: 0.5\nretry_infra: 1\nisolation: {isolation}\n", gate="evidence")
    project.case("c", CASE)


def _note(n: int, rule: str, worst: str) -> str:
    return (f"it reads above only because {n} runs were retried on the agent's own word ({rule}: what it printed or "
            f"how it exited, which scarbook cannot verify); read as fails they make it {worst} — with record: on, "
            "scarbook verifies a model API's failure itself")


@pytest.mark.parametrize(("claim", "isolation"), [("api-overloaded", "sandbox"), ("out-of-memory", "none"),
                                                  ("disk-full", "none"), ("sandbox-failed", "sandbox"),
                                                  ("agent-could-not-exec", "sandbox")])
def test_runs_retried_on_the_agents_claim_of_infra_buy_no_verdict(project, tmp_path, claim, isolation):
    _claiming(project, claim, isolation)
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    result = project.cli("eval", "--runs", "10", "--json", str(out), "--junit", str(junit))
    report = json.loads(out.read_text())
    [case] = report["cases"]
    assert (case["passes"], case["fails"], case["errors"]) == (10, 0, 0)  # the retries passed: the runs say so
    assert result.exit_code == 3, result.output  # was 0: 10/10 above 50%
    assert (case["decision"], case["gate_note"]) == ("no verdict", _note(4, claim, "undecided"))
    assert report["retried_after_infra"] == report["retried_on_agents_word"] == 4
    assert [[a["cause"]["rule"] if a["cause"] else None for a in r["attempts"]] for r in report["runs"]
            if len(r["attempts"]) > 1] == [[claim, None]] * 4
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().find("properties")}
    assert (props["retried_after_infra"], props["retried_on_agents_word"]) == ("4", "4")
    assert ("4 runs retried after infra errors (4 retries; 4 then passed; 4 on the agent's own word, which the gate "
            "also reads as fails; every attempt is kept with its cause in the JSON report and `scarbook show`)"
            ) in result.stdout
    assert f"c: no verdict — {_note(4, claim, 'undecided')}" in result.stdout
    assert sum(f"c #{k}: infra error ({claim}, the agent's own word" in result.stderr for k in range(7, 11)) == 4
    shown = project.cli("show", "c").stdout
    assert shown.count(f"  attempt 1: fail — infra ({claim}, the agent's own word): ") == 4


def test_a_case_the_claims_would_not_move_keeps_its_verdict_and_its_retry(project, tmp_path):
    """An honest agent hit by a real 529 (here: run 12 of 12, not recorded) is still retried, and a case clearly above
    its threshold stays above: 12/12, and 11/12 read at the worst, are both above 50%."""
    _claiming(project, "api-overloaded", "sandbox", runs_passing=11)
    out = tmp_path / "r.json"
    result = project.cli("eval", "--runs", "12", "--json", str(out))
    report = json.loads(out.read_text())
    assert result.exit_code == 0, result.output
    assert (report["cases"][0]["decision"], report["cases"][0]["gate_note"]) == ("above", "")
    assert report["retried_on_agents_word"] == 1
    assert "1 on the agent's own word, which the gate also reads as fails;" in result.stdout
