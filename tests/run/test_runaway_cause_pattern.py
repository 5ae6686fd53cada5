"""A project's cause pattern (scarbook.yaml `causes:`) that backtracks on a crashed agent's stderr cannot freeze
the session: a real agent process, a real `scarbook eval` in its own process. Before, Python's `re` matched
`^(\\w+?\\s?)*$` on the tail the agent chose for hours, holding the GIL: the session never ended. Now the match
gives up at the checks' time limit and the pattern is no evidence either way: the run is the agent's exit."""

from __future__ import annotations

from tests.helpers.hostile_project import eval_bounded, inline_agent

HOSTILE = """
import os, sys
open("out.txt", "w").write("x")
if os.environ["SCARBOOK_RUN"] == "1":
    sys.stderr.write("a" * 40 + "!")
    sys.exit(1)
"""
BOUND_S = 60  # the session takes a few seconds; it used not to end at all


def test_a_backtracking_cause_pattern_on_the_agents_stderr_does_not_freeze_the_session(project) -> None:
    inline_agent(project, HOSTILE, "none", "  - {type: file_exists, path: out.txt}\n",
                 extra="concurrency: 2\nthreshold: 0.5\nretry_infra: 0\ncauses: {infra: ['^(\\w+?\\s?)*$']}\n")
    done, doc = eval_bounded(project, 3, BOUND_S, "the cause pattern's match")
    runs = sorted(doc["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["fail", "pass", "pass"]
    assert runs[0]["cause"] == {"kind": "agent", "rule": "agent-exited",
                                "evidence": "exit code 1; stderr: " + "a" * 40 + "!"}
