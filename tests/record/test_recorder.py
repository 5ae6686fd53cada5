"""The model-call recorder (issue 28): real agents (the anthropic SDK, raw HTTP) call the tests' local
model server through scarbook's proxy; every call lands in the run's transcript, usage and dollars
in the report, the real key never in a recording; replay answers from a recorded session."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.judge_server import chat_reply, judge_server, raw_reply, status_reply, text_reply, tool_reply  # noqa: F401
from tests.helpers.paths import FIXTURES

AGENTS = FIXTURES / "agents"
SECRET = "sk-real-secret-never-recorded"
CASE = """\
id: write-hello
task: write hello to out.txt
checks:
  - type: contains
    path: out.txt
    text: hello
"""


def scripted(server, calls: int = 1) -> None:
    """Each run: a write_file tool call, then a final text."""
    for _ in range(calls):
        r = tool_reply(tool_input={"path": "out.txt", "content": "hello"},
                       usage={"input_tokens": 1000, "output_tokens": 100})
        r.body["content"][0]["name"] = "write_file"
        server.push(r, text_reply("done", usage={"input_tokens": 1200, "output_tokens": 10}))


def use_agent(project, script: str, extra: str = "") -> None:
    """Point the project's command agent at another script (same record: section)."""
    path = project.root / "scarbook.yaml"
    text = path.read_text().replace("sdk_agent.py", script)
    path.write_text(text + extra)


def openai_calls(server, calls: int = 1, content: str = "hello") -> None:
    """Each run (OpenAI Chat Completions): a write_file tool call, then a final text."""
    for _ in range(calls):
        server.push(chat_reply(tool_calls=[("call_1", "write_file", {"path": "out.txt", "content": content})]),
                    chat_reply("done", usage={"prompt_tokens": 80, "completion_tokens": 5, "total_tokens": 85}))


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


def test_sdk_agent_calls_are_recorded_with_usage_and_dollars_and_no_key(rec_project, judge_server, monkeypatch):
    """The real anthropic SDK: its first call plain JSON, its second streamed (one agent process: the
    SDK's import is most of this test's time)."""
    monkeypatch.setenv("AGENT_STREAM", "alternate")
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
    assert (first["n"], first["api"], first["stream"], first["model"]) == (1, "anthropic.messages", False, "claude-test")
    assert (second["stream"], "sse" in second["response"], "body" in first["response"]) == (True, True, True)
    assert first["request"]["body"]["messages"][0]["content"] == "write hello to out.txt"
    assert "authorization" not in first["request"]["headers"] and "x-api-key" not in first["request"]["headers"]
    assert first["usage"] == {"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 0, "cache_write_tokens": 0}
    assert first["latency_ms"] > 0 and len(first["digest"]) == 64
    assert lines[2] == {"type": "tool_call", "call": 1, "id": "toolu_01", "name": "write_file",
                        "input": {"path": "out.txt", "content": "hello"}}
    assert lines[5]["output"] == "wrote 5 bytes to out.txt" and second["n"] == 2
    assert lines[6]["text"] == "done"
    # review reads the recorded transcript as a timeline; the HTML report shows the spend
    from scarbook.views.run_review import load_run_transcript

    history = rec_project.load().history
    (record,) = history.runs(report["session"]["id"])
    t, why = load_run_transcript(record)
    assert why == "" and [c.name for c in t.tool_calls] == ["write_file"] and t.model == "claude-test"
    assert [(e.role, e.text) for e in t.messages] == [("user", "write hello to out.txt"), ("assistant", "done")]
    html = rec_project.root / "r.html"
    assert rec_project.cli("report", report["session"]["id"], "--html", str(html)).exit_code == 0
    assert "agent 2,310 tokens $0.0083" in html.read_text()


@pytest.mark.parametrize("stream", ["", "1"], ids=["json", "sse"])
def test_raw_http_openai_agent_is_recorded(rec_project, judge_server, monkeypatch, stream):
    monkeypatch.setenv("AGENT_STREAM", stream)
    use_agent(rec_project, "http_openai_agent.py")
    path = rec_project.root / "scarbook.yaml"
    path.write_text(path.read_text().replace("env: [PATH, AGENT_STREAM]", "env: [PATH, AGENT_STREAM, OPENAI_API_KEY]"))
    openai_calls(judge_server)
    result, report = eval_json(rec_project)
    assert result.exit_code == 0, result.output + result.stderr
    (run,) = report["runs"]
    assert [r["path"] for r in judge_server.requests] == ["/v1/chat/completions"] * 2
    assert [r["headers"]["authorization"] for r in judge_server.requests] == [f"Bearer {SECRET}"] * 2
    # the agent had only the dummy key, even with the real one allow-listed (env: [..., OPENAI_API_KEY])
    assert Path(run["stderr_path"]).read_text() == "key in my environment: scarbook-recorder-no-real-key\n"
    assert run["agent_usage"]["input_tokens"] == 130 and run["agent_usage"]["output_tokens"] == 15
    assert run["agent_usage"]["cost_usd"] == pytest.approx((130 * 1 + 15 * 2) / 1_000_000)
    lines = transcript_lines(rec_project, report)
    assert [r["type"] for r in lines] == ["model_call", "task", "tool_call", "usage",
                                          "model_call", "tool_result", "assistant", "usage"]
    assert lines[0]["api"] == "openai.chat" and lines[0]["stream"] == bool(stream)
    assert lines[2]["input"] == {"path": "out.txt", "content": "hello"} and lines[5]["id"] == "call_1"
    assert SECRET not in Path(run["transcript_path"]).read_text()
    if not stream:  # `scarbook import` turns the recorded run into a scar: the task and the file written
        listed = rec_project.cli("import", run["transcript_path"], "--list")
        assert listed.exit_code == 0, listed.output + listed.stderr
        assert "write hello to out.txt" in listed.output and "file out.txt (final content)" in listed.output


def recorded_session(project, server, runs: int = 2) -> tuple[str, dict]:
    use_agent(project, "http_openai_agent.py")
    openai_calls(server, runs)
    result, report = eval_json(project, "-n", str(runs))
    assert result.exit_code == 0, result.output + result.stderr
    assert len(server.requests) == 2 * runs
    return report["session"]["id"], report


def test_replay_gives_the_same_verdicts_with_no_upstream_call(rec_project, judge_server):
    sid, first = recorded_session(rec_project, judge_server)
    result, again = eval_json(rec_project, "-n", "2", "--replay", sid)
    assert result.exit_code == 0, result.output + result.stderr
    assert len(judge_server.requests) == 4  # the server's log: not one call more
    assert [(r["k"], r["status"], [c["status"] for c in r["checks"]]) for r in again["runs"]] == \
        [(r["k"], r["status"], [c["status"] for c in r["checks"]]) for r in first["runs"]]
    assert all(r["agent_usage"]["cost_usd"] == 0 for r in again["runs"])  # offline and free
    calls = [r for r in transcript_lines(rec_project, {"runs": again["runs"][:1]}) if r["type"] == "model_call"]
    assert [(c["n"], c.get("replayed")) for c in calls] == [(1, True), (2, True)]


def test_fork_at_k_replays_k_calls_then_goes_live(rec_project, judge_server):
    sid, _ = recorded_session(rec_project, judge_server)
    judge_server.push(chat_reply("live answer"), chat_reply("live answer"))
    result, forked = eval_json(rec_project, "-n", "2", "--replay", sid, "--fork-at", "1")
    assert result.exit_code == 0, result.output + result.stderr
    assert len(judge_server.requests) == 4 + 2  # exactly the calls after K=1, one per run
    assert [len(r["body"]["messages"]) for r in judge_server.requests[4:]] == [3, 3]  # call 2's request, live
    assert [r["output_excerpt"].strip() for r in forked["runs"]] == ["live answer", "live answer"]
    calls = [r for r in transcript_lines(rec_project, {"runs": forked["runs"][:1]}) if r["type"] == "model_call"]
    assert [(c["n"], c.get("replayed", False)) for c in calls] == [(1, True), (2, False)]


def test_a_request_that_differs_is_a_run_error_with_the_difference(rec_project, judge_server):
    sid, _ = recorded_session(rec_project, judge_server, runs=1)
    rec_project.case("write-hello", CASE.replace("write hello to out.txt", "write hi to out.txt"))
    result, report = eval_json(rec_project, "--replay", sid)
    (run,) = report["runs"]
    assert run["status"] == "error"
    assert run["reason"] == ('replay diverged at call 1 (recorded -, now +): - "content": "write hello to out.txt",; '
                             '+ "content": "write hi to out.txt",')
    assert run["cause"]["rule"] == "replay-diverged"
    assert len(judge_server.requests) == 2  # never a silent live call


def quiet_agent(project, record: str = "") -> None:
    """A command agent that calls no model at all (it ignores the base URLs)."""
    project.config(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, -c, "print('no model here')"]
        runs: 1
        timeout_s: 30
        """) + record)


def test_replay_of_a_session_without_recordings_is_refused_before_any_run(project):
    project.case("write-hello", CASE)
    quiet_agent(project)
    result, report = eval_json(project)
    sid = report["session"]["id"]
    sessions = sorted(p.name for p in (project.load().history.dir).iterdir())
    result = project.cli("eval", "-q", "--replay", sid)
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: --replay {sid}: that session has no recorded model calls (its runs' "
                             "transcripts hold no model_call records) — replay a session that ran with record: "
                             "(or eval --record)\n")
    assert sorted(p.name for p in (project.load().history.dir).iterdir()) == sessions  # no run


def test_an_agent_that_ignores_the_base_url_is_told(project):
    project.case("write-hello", CASE)
    quiet_agent(project, "record: true\n")
    result, report = eval_json(project)
    (run,) = report["runs"]
    assert run["notes"] == ["no model calls recorded: the agent did not use ANTHROPIC_BASE_URL or OPENAI_BASE_URL "
                            "(record: is on; an agent with its own endpoint setting must read them)"]


def test_a_failing_model_api_reaches_the_agent_and_makes_the_cause_infra(rec_project, judge_server):
    use_agent(rec_project, "http_openai_agent.py")
    judge_server.push(status_reply(503, "overloaded"))
    result, report = eval_json(rec_project, "--retry-infra", "0")
    (run,) = report["runs"]
    assert run["status"] == "error"  # the machine ended it: no verdict, never the agent's fail
    assert "model call failed: HTTP 503" in Path(run["stderr_path"]).read_text()  # the agent saw the same status
    assert run["cause"] == {"kind": "infra", "rule": "model-api",
                            "evidence": "recorder: the model API answered call 1 with HTTP 503"}


def test_an_unreachable_model_api_is_a_gateway_error_and_infra(rec_project, judge_server):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = rec_project.root / "scarbook.yaml"
    path.write_text(path.read_text().replace(f"{judge_server.url}/v1", f"http://127.0.0.1:{port}/v1"))
    use_agent(rec_project, "http_openai_agent.py")
    result, report = eval_json(rec_project, "--retry-infra", "0")
    (run,) = report["runs"]
    assert "model call failed: HTTP 502" in Path(run["stderr_path"]).read_text()
    assert run["cause"]["kind"] == "infra" and run["cause"]["rule"] == "model-api"
    assert run["cause"]["evidence"].startswith(f"recorder: call 1: the model API at http://127.0.0.1:{port}/v1 "
                                               "could not be reached (ClientConnectorError")


def test_a_response_the_recorder_cannot_parse_is_passed_through_and_recorded_raw(rec_project, judge_server):
    use_agent(rec_project, "http_openai_agent.py")
    judge_server.push(raw_reply(b'{"choices": "not a list"}'))
    result, report = eval_json(rec_project)
    (run,) = report["runs"]
    assert "TypeError: string indices" in Path(run["stderr_path"]).read_text()  # the agent got it as sent
    assert run["notes"] == ["recorder: call 1: the response is not openai.chat JSON or a stream of it: passed "
                            "through, recorded raw"]
    (call,) = [r for r in transcript_lines(rec_project, report) if r["type"] == "model_call"]
    assert call["response"]["body"] == {"choices": "not a list"} and "warning" in call


def test_a_huge_response_reaches_the_agent_whole_and_its_recording_is_capped(rec_project, judge_server):
    """The 3 MB response goes to the agent whole and is recorded to the cap. The agent's next request
    repeats it (a conversation): over record.max_body_bytes, that request is refused (issue 33.4), so
    this run fails where it passed before the cap held for requests."""
    path = rec_project.root / "scarbook.yaml"
    path.write_text(path.read_text().replace("openai: ", "max_body_bytes: 50000, openai: "))
    use_agent(rec_project, "http_openai_agent.py")
    big = "hello" + "x" * 3_000_000
    openai_calls(judge_server, content=big)
    result, report = eval_json(rec_project, "--keep-all")
    (run,) = report["runs"]
    assert (Path(run["workspace"]) / "out.txt").stat().st_size == len(big)
    first, second = [r for r in transcript_lines(rec_project, report) if r["type"] == "model_call"]
    assert first["response"]["truncated"] is True and first["response"]["bytes"] > 3_000_000
    assert len(first["response"]["raw"]) == 50000
    assert second["response"]["status"] == 413 and second["request"]["bytes"] > 3_000_000
    assert len(judge_server.requests) == 1
    assert run["status"] == "fail" and "model call failed: HTTP 413" in Path(run["stderr_path"]).read_text()
    assert run["notes"] == [f"recorder: call 1: response of {first['response']['bytes']} bytes recorded only to "
                            "50000 bytes (record.max_body_bytes); the agent got all of it",
                            "recorder: call 2: a request of more than 50000 bytes was refused (record.max_body_bytes; "
                            "raise it in scarbook.yaml to let such requests through)"]


@pytest.mark.parametrize("isolation", ["sandbox", "slot"])
def test_in_the_sandbox_the_agent_reaches_the_recorder_and_nothing_else(rec_project, judge_server, isolation):
    """isolation: sandbox without network: the base URL's port is opened inside the sandbox and leads
    only to the recorder's socket; the model server itself (another loopback port) is out of reach. In a sandbox
    slot too (the bridge starts inside the slot, once per run)."""
    from scarbook.agents.sandbox import SandboxUnavailable, require_sandbox

    try:
        require_sandbox(rec_project.root)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    probe = rec_project.root / "probe.py"  # (the project is visible in the sandbox) tries the model server, then the recorder
    probe.write_text(textwrap.dedent(f"""\
        import os, sys, urllib.request
        try:
            urllib.request.urlopen({judge_server.url!r} + "/v1/models", timeout=3)
            print("direct: reached")
        except OSError as exc:
            print("direct: blocked")
        sys.argv = [sys.argv[0], sys.argv[1]]
        exec(open({str(AGENTS / "http_openai_agent.py")!r}).read(), {{"__name__": "__main__"}})
        """))
    path = rec_project.root / "scarbook.yaml"
    path.write_text(path.read_text().replace(json.dumps(str(AGENTS / "sdk_agent.py")), json.dumps(str(probe)))
                    + f"isolation: {isolation}\n")
    openai_calls(judge_server)
    result, report = eval_json(rec_project)
    (run,) = report["runs"]
    assert run["status"] == "pass", run
    assert run["output_excerpt"].splitlines()[0] == "direct: blocked"
    assert len(judge_server.requests) == 2 and judge_server.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    assert [r["type"] for r in transcript_lines(rec_project, report)][:3] == ["model_call", "task", "tool_call"]


def test_trajectory_checks_read_a_recorded_run(rec_project, judge_server):
    """A command agent that keeps no transcript of its own may have trajectory checks once record: is
    on (the recorder writes one for every run): the tool calls are the model's tool uses."""
    use_agent(rec_project, "http_openai_agent.py")
    rec_project.case("write-hello", CASE + "  - type: tool_called\n    name: write_file\n"
                                          "  - type: max_tool_calls\n    n: 1\n")
    rec_project.case("no-writes", CASE.replace("write-hello", "no-writes").replace("  - type: contains\n    path: out.txt\n"
                                                                                 "    text: hello\n", "")
                     + "  - type: tool_not_called\n    name: write_file\n")
    openai_calls(judge_server, 2)
    result, report = eval_json(rec_project)
    runs = {r["case_id"]: r for r in report["runs"]}
    assert runs["write-hello"]["status"] == "pass", runs["write-hello"]
    assert runs["no-writes"]["status"] == "fail"
    (failed,) = [c for c in runs["no-writes"]["checks"] if c["status"] == "fail"]
    assert failed["detail"].startswith('call 1 (write_file {"path": "out.txt", "content": "hello"}) called write_file')


def test_a_node_agent_streaming_over_fetch_is_recorded(rec_project, judge_server):
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    path = rec_project.root / "scarbook.yaml"
    path.write_text(path.read_text().replace(json.dumps(sys.executable), json.dumps(node))
                    .replace("sdk_agent.py", "node_agent.mjs"))
    scripted(judge_server)
    result, report = eval_json(rec_project)
    (run,) = report["runs"]
    assert run["status"] == "pass", run
    assert run["output_excerpt"] == "done\n"
    lines = transcript_lines(rec_project, report)
    assert [r["type"] for r in lines] == ["model_call", "task", "tool_call", "usage",
                                          "model_call", "tool_result", "assistant", "usage"]
    assert lines[0]["stream"] is True and lines[0]["response"]["sse"].startswith("event: message_start")
    assert run["agent_usage"]["input_tokens"] == 2200
