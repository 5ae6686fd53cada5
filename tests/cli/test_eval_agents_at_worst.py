"""`scarbook eval --agents A,B` reads the runs an agent's own doing may have shaped at their worst, as the gate does
(hostile agent, round seven). The candidate passes 6 of every 10 blocks; on the 4 it fails it prints the line of an
overloaded API and exits 1 — infra on its own word, retried — and passes the retry. Before, the comparison took the
retries: 40/40 against the baseline's 36/40, the candidate not worse than the margin, exit 0. Now each row the
candidate's claimed runs read as fails decide otherwise has no verdict, saying why (exit 3). Real agent processes
through `scarbook eval`, isolation: none."""

from __future__ import annotations

import json

from tests.cli.test_eval_agents import CONFIG, _project, _table

CLAIMING = """\
#!/bin/sh
k=${PWD##*/}
block=$(( (k - 1) / 2 ))
case "$PWD" in */attempt-*) echo ok > out.txt; echo done; exit 0;; esac
if [ $(( block % 10 )) -lt "$1" ]; then echo ok > out.txt; echo done; exit 0; fi
echo "anthropic.InternalServerError: Error code: 529 - {'type': 'overloaded_error'}" >&2
exit 1
"""
WHY = ("cand: it reads non-inferior only because 16 runs were retried on the agent's own word (api-overloaded: what it "
       "printed or how it exited, which scarbook cannot verify); read as fails they make it inferior — with record: "
       "on, scarbook verifies a model API's failure itself")


def test_a_candidate_that_claims_infra_on_the_runs_it_fails_wins_no_comparison(project, tmp_path) -> None:
    _project(project, config=CONFIG.replace('cand: {base: base, argv: [./agent.sh, "6"]}',
                                            'cand: {type: command, argv: [./claims.sh, "6"]}') + "retry_infra: 1\n",
             cases=("alpha",))
    script = project.root / "claims.sh"
    script.write_text(CLAIMING)
    script.chmod(0o755)
    out = tmp_path / "report.json"
    result = project.cli("eval", "--agents", "base,cand", "--runs", "40", "-q", "--json", str(out))
    assert _table(result.stdout)["alpha"][1:7] == ["90%", "(77–96%)", "36/40", "100%", "(91–100%)", "40/40"]
    assert result.exit_code == 3, result.stdout + result.stderr  # was 0: not worse than the baseline
    report = json.loads(out.read_text())
    assert report["retried_on_agents_word"] == 16
    [row] = report["agents"]["cases"][0]["comparisons"]
    assert (row["decision"], row["margin_decision"], row["why"]) == ("no verdict", "no verdict", WHY)
    assert f"alpha (cand): no verdict — {WHY}" in result.stdout
