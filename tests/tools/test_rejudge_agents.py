"""`scarbook rejudge` of a session of several agents (issue 36): the new session records the same agents,
every carried run keeps its agent, and its report is the comparison again — graded by today's judge."""

from __future__ import annotations

import uuid

from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.tools.test_rejudge import AGENT, CASE, change_rubric, run_json, write_config

SECOND = """
def act_nothing(task, cwd):
    return "nothing written"
"""


def test_a_rejudged_comparison_keeps_its_agents(tmp_path, judge_server, monkeypatch) -> None:
    module = f"rejudge_agents_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(AGENT + SECOND)
    write_config(tmp_path, judge_server.url, "agent: {type: demo}",
                 extra=f"agents:\n  writes: {{type: python, function: '{module}:act'}}\n"
                       f"  idle: {{type: python, function: '{module}:act_nothing'}}\n")
    (tmp_path / "cases" / "judge-me").mkdir(parents=True)
    (tmp_path / "cases" / "judge-me" / "case.yaml").write_text(CASE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    monkeypatch.delenv("REJUDGE_SKIP_RUNS", raising=False)
    judge_server.default = tool_reply([("PASS", "one line"), ("PASS", "title")])
    first, source = run_json(tmp_path, "eval", "--agents", "writes,idle", "--runs", "3", "-q", "-l", "ab")
    assert first.exit_code == 0, first.output  # 3/3 against 0/3: worse, but 3 runs a side cannot show it
    assert len(judge_server.requests) == 3  # only the writer's runs reach the judge

    change_rubric(tmp_path)  # (an unchanged rubric would be answered from the verdict cache)
    judge_server.default = tool_reply([("FAIL", "not one line"), ("PASS", "title")])
    result, report = run_json(tmp_path, "rejudge", "ab", "-q")
    assert result.exit_code == 0, result.output
    assert [a["name"] for a in report["session"]["agents"]] == ["writes", "idle"]
    assert sorted((r["k"], r["agent"]) for r in report["runs"]) == sorted(
        (r["k"], r["agent"]) for r in source["runs"])
    rates = report["agents"]["cases"][0]["agents"]
    assert (rates["writes"]["rate"], rates["idle"]["rate"]) == (0.0, 0.0)  # the writer's runs now fail the judge
    assert report["agents"]["cases"][0]["comparisons"][0]["decision"] == "undecided"
