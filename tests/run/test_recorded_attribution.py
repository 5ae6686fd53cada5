"""Issue 33 (19): a run that met one 529 from the model API, called again with success and then
failed by itself is the agent's failure — the recorder saw the later calls succeed — not infra (which
turned exit 1 into exit 3). A run whose last call failed on the model's side stays infra."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.helpers.recorder_upstream import CALL, SECRET, Upstream, hostile_project

# Calls until a call succeeds (an SDK's retry, printing the failure as the anthropic SDK does), then writes
# the wrong file; argv[1] "exit" makes it exit 1 afterwards, "give-up" stops after the first failure.
RETRIER = CALL + r'''
import os, sys
for attempt in range(3):
    status = call(os.environ["ANTHROPIC_BASE_URL"], "write hello")
    if status == 200:
        break
    print(f"anthropic.InternalServerError: Error code: {status} - overloaded_error", file=sys.stderr)
    if sys.argv[1] == "give-up":
        sys.exit(1)
open("out.txt", "w").write("goodbye")
sys.exit(1 if sys.argv[1] == "exit" else 0)
'''


def eval_retrier(project, how: str, statuses: list[int]) -> tuple[object, dict]:
    """One recorded run of RETRIER (`how`) against an upstream that first answers `statuses`."""
    up = Upstream().start()
    up.statuses.extend(statuses)
    hostile_project(project, up, [how], script=RETRIER, retry_infra=1)
    out = project.root / "report.json"
    try:
        result = project.cli("eval", "-q", "--json", str(out))
    finally:
        up.stop()
    (run,) = json.loads(out.read_text())["runs"]
    return result, run


@pytest.mark.parametrize("how, rule", [("ok", "check-fail"), ("exit", "agent-exited")])
def test_a_529_the_agent_got_past_is_not_why_it_failed(project, monkeypatch, how, rule):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    result, run = eval_retrier(project, how, [529])
    assert (run["status"], run["cause"]["kind"], run["cause"]["rule"]) == ("fail", "agent", rule), run["cause"]
    assert run["infra_retries"] == 0 and not run.get("attempts", [])[1:]  # never retried as the machine's
    assert "recorder: the model API answered call 1 with HTTP 529; call 2 then succeeded, so the run's outcome " \
           "is the agent's" in run["notes"]
    assert result.exit_code == 1, result.output


def test_a_529_the_run_ended_on_is_infra(project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    result, run = eval_retrier(project, "give-up", [529, 529])
    assert (run["cause"]["kind"], run["cause"]["rule"]) == ("infra", "model-api"), run["cause"]
    assert len(run["attempts"]) == 2  # retried once, as the machine's fault
    assert result.exit_code == 3, result.output
