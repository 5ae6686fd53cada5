"""$SCARBOOK_USAGE is the agent's own bookkeeping: whatever it appends, its run keeps the verdict its checks
give (agents/usage.read_agent_usage ignores a line it cannot take). A real agent process that failed its
task wrote a line holding a 5,000-digit integer: Python's JSON reader raises ValueError on it (longer than
int() converts), which was not caught, so scarbook 'could not finish this run' — an infra error, retried,
then an error with a traceback, and the session exited 3 (no verdict) instead of 1."""

from __future__ import annotations

import pytest

from tests.helpers.hostile_project import eval_json, inline_agent

AGENT = """
import os
open("out.txt", "w").write("BAD\\n")
with open(os.environ["SCARBOOK_USAGE"], "a") as f:
    f.write('{"input_tokens": 120, "output_tokens": 30}\\n')
    f.write('{"input_tokens": ' + "9" * 5000 + '}\\n')
    f.write("[" * 100_000 + "\\n")
"""


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_usage_line_python_cannot_read_is_ignored_and_the_run_keeps_its_fail(project, isolation) -> None:
    inline_agent(project, AGENT, isolation, "  - {type: not_contains, path: out.txt, text: BAD}\n",
                 extra="retry_infra: 1\n")
    result, _, (run,) = eval_json(project, 1)
    assert (run["status"], run["reason"]) == ("fail", "check 1 (not_contains): out.txt contains 'BAD' at line 1 "
                                                       "but must not"), run["reason"]
    assert run["cause"]["kind"] == "agent"
    assert (run["agent_usage"]["input_tokens"], run["agent_usage"]["output_tokens"]) == (120, 30)
    assert result.exit_code == 1, result.output
