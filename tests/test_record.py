"""The model-call recorder (issue 28): real agents (the anthropic SDK, raw HTTP) call the tests' local
model server through scarbook's proxy; every call lands in the run's transcript, usage and dollars
in the report, the real key never in a recording; replay answers from a recorded session."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

try:
    from tests.judge_server import chat_reply, judge_server, raw_reply, status_reply, text_reply, tool_reply  # noqa: F401
except ImportError:
    from judge_server import chat_reply, judge_server, raw_reply, status_reply, text_reply, tool_reply  # noqa: F401

AGENTS = Path(__file__).parent / "fixtures" / "agents"
SECRET = "sk-real-secret-never-recorded"
CASE = """\
id: write-hello
task: write hello to out.txt
checks:
  - type: contains
    path: out.txt
    text: hello
"""


def write_call(content: str = "hello", cid: str = "toolu_1"):
    return tool_reply(tool_input={"path": "out.txt", "content": content}, usage={"input_tokens": 1000, "output_tokens": 100})


def scripted(server, calls: int = 1) -> None:
    """Each run: a write_file tool call, then a final text."""
    for _ in range(calls):
        r = tool_reply(tool_input={"path": "out.txt", "content": "hello"},
                       usage={"input_tokens": 1000, "output_tokens": 100})
        r.body["content"][0]["name"] = "write_file"
        server.push(r, text_reply("done", usage={"input_tokens": 1200, "output_tokens": 10}))


@pytest.fixture
def rec_project(project, judge_server, monkeypatch):
    """A project whose command agent is tests/fixtures/agents/sdk_agent.py, recorded (upstream: the
    local server), with a price for the server's model so dollars show."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    project.config(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(AGENTS / "sdk_agent.py"))}, "{{task}}"]
          env: [PATH, AGENT_STREAM]
        runs: 1
        concurrency: 1
        timeout_s: 30
        record: {{anthropic: {judge_server.url}, openai: {judge_server.url}/v1}}
        judge:
          prices: {{claude-test: {{input: 3, output: 15}}, gpt-test: {{input: 1, output: 2}}}}
        """))
    project.case("write-hello", CASE)
    return project


def transcript_lines(project, report: dict) -> list[dict]:
    (run,) = report["runs"]
    return [json.loads(line) for line in Path(run["transcript_path"]).read_text().splitlines()]


def eval_json(project, *args: str) -> tuple[object, dict]:
    out = project.root / f"report{len(list(project.root.glob('report*.json')))}.json"
    result = project.cli("eval", "-q", "--json", str(out), *args)
    return result, json.loads(out.read_text()) if out.exists() else {}


@pytest.mark.parametrize("stream", ["", "1"], ids=["json", "sse"])
def test_sdk_agent_calls_are_recorded_with_usage_and_dollars_and_no_key(rec_project, judge_server, monkeypatch, stream):
    monkeypatch.setenv("AGENT_STREAM", stream)
    scripted(judge_server)
    result, report = eval_json(rec_project)
    assert result.exit_code == 0, result.output + result.stderr
    (run,) = report["runs"]
    assert run["status"] == "pass"
    assert run["agent_usage"]["input_tokens"] == 2200 and run["agent_usage"]["output_tokens"] == 110
    assert run["agent_usage"]["cost_usd"] == pytest.approx((2200 * 3 + 110 * 15) / 1_000_000)
    assert run["notes"] == []
    # the upstream got the real key; the agent only ever had the dummy one
    assert [r["headers"].get("x-api-key") for r in judge_server.requests] == [SECRET, SECRET]
    lines = transcript_lines(rec_project, report)
    text = Path(run["transcript_path"]).read_text()
    assert SECRET not in text and "scarbook-recorder-no-real-key" not in text
    assert [r["type"] for r in lines] == ["model_call", "task", "tool_call", "usage",
                                          "model_call", "tool_result", "assistant", "usage"]
    first, second = lines[0], lines[4]
    assert (first["n"], first["api"], first["stream"], first["model"]) == (1, "anthropic.messages", bool(stream), "claude-test")
    assert first["request"]["body"]["messages"][0]["content"] == "write hello to out.txt"
    assert "authorization" not in first["request"]["headers"] and "x-api-key" not in first["request"]["headers"]
    assert ("sse" in first["response"]) == bool(stream)
    assert first["usage"] == {"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 0, "cache_write_tokens": 0}
    assert first["latency_ms"] > 0 and len(first["digest"]) == 64
    assert lines[2] == {"type": "tool_call", "call": 1, "id": "toolu_01", "name": "write_file",
                        "input": {"path": "out.txt", "content": "hello"}}
    assert lines[5]["output"] == "wrote 5 bytes to out.txt" and second["n"] == 2
    assert lines[6]["text"] == "done"
