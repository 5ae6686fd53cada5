"""A model call still going when the agent ends is a call (hostile agent, round six).

The recorder wrote a call to the run's list only when its response ended. An agent that read what it wanted of a
streamed answer (a tool call), acted on it and ended before the answer's end left that call out of the list the
trajectory checks read: max_turns counted one call fewer, tool_not_called never saw the tool it ran, and the
call's tokens were in no spend, so --max-cost let the next runs start. Now the recorder waits for such a call to
settle (at most proxy.SETTLE_S), reading the answer to its end though the agent is gone; a call still going past
that is recorded as it stands — a call, with the tool calls the agent was sent — its tokens not counted.
The real recorder, a raw-HTTP agent process and the loopback Messages-API server; unconfined and sandboxed.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading

import pytest

from tests.helpers.judge_server import judge_server, text_reply, tool_reply  # noqa: F401
from tests.helpers.recorder_upstream import SECRET, TWO_CALLS, sandbox_or_skip

# Call 1 whole; call 2 streamed, read up to the end of its tool call; the tool "run" (out.txt written), "ending"
# written beside it, and the agent ends with call 2 still open.
AGENT = TWO_CALLS + r'''
while True:
    line = r.fp.readline()
    if not line or (line.startswith(b"data: ") and json.loads(line[6:])["type"] == "content_block_stop"):
        break
open("out.txt", "w").write("hello")
open("ending", "w").write("")
os._exit(0)
'''
CHECKS = {"turns": "  - {type: max_turns, n: 1}\n", "tools": "  - {type: tool_not_called, name: bash}\n"}
FAILED = {"turns": ("fail", "2 turns (model calls), at most 1 allowed: model call 2 went past it"),
          "tools": ("fail", 'call 1 (bash {"command": "rm -rf build"}) called bash, which must not be called')}


def reply(body: dict) -> object:
    if body.get("stream"):  # call 2: a bash tool call, 50,000 tokens out ($0.75 at $15 per million)
        return tool_reply(tool_input={"command": "rm -rf build"}, name="bash",
                          usage={"input_tokens": 10, "output_tokens": 50_000})
    return text_reply("ok", usage={"input_tokens": 10, "output_tokens": 10})


def _eval(project, judge_server, isolation: str, release: bool, *args: str) -> tuple[object, dict]:
    """Recorded runs of AGENT, one per case, against a server that holds call 2's answer before its usage
    (message_delta): until the agent has ended (`release`), or past the run's end."""
    if isolation == "sandbox":
        sandbox_or_skip(project.root)
    (project.root / "agent.py").write_text(AGENT)
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: {json.dumps([sys.executable, str(project.root / "agent.py")])}}}
        runs: 1
        concurrency: 1
        timeout_s: 60
        isolation: {isolation}
        record: {{anthropic: {judge_server.url}}}
        judge: {{prices: {{claude-test: {{input: 3, output: 15}}}}}}
        """))
    for cid, check in CHECKS.items():
        project.case(cid, f"id: {cid}\ntask: t\nchecks:\n  - {{type: contains, path: out.txt, text: hello}}\n{check}")
    judge_server.responder = reply
    gate = judge_server.stream_gate = threading.Event()
    judge_server.stream_gate_s, judge_server.stream_gate_at = 60, 5
    done = threading.Event()

    def release_once_ended() -> None:  # each run's call 2, once its agent has ended
        seen: set[str] = set()
        while release and not done.wait(0.05):
            ended = {str(p) for p in project.root.glob("workspaces/*/*/*/ending")}
            if ended - seen:
                seen |= ended
                done.wait(0.3)
                gate.set()

    watcher = threading.Thread(target=release_once_ended)
    watcher.start()
    out = project.root / "report.json"
    try:
        result = project.cli("eval", "-q", "--json", str(out), *args)
    finally:
        done.set()
        gate.set()
        watcher.join()
    return result, json.loads(out.read_text())


def _details(report: dict) -> dict[str, tuple[str, str]]:
    return {r["case_id"]: (r["checks"][1]["status"], r["checks"][1]["detail"]) for r in report["runs"]}


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_call_that_ends_after_its_agent_is_counted_whole(project, judge_server, monkeypatch, isolation) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    result, report = _eval(project, judge_server, isolation, True)
    assert _details(report) == FAILED  # passed before: '1 turn (model calls) (at most 1)', 'bash was never called …'
    for run in report["runs"]:
        assert run["agent_usage"]["output_tokens"] == 50_010  # call 2's tokens, read to its end
        assert not any("still going" in note for note in run["notes"]), run["notes"]
    assert result.exit_code == 1, result.output


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_call_still_going_past_the_bound_is_a_call_with_the_tools_it_sent(project, judge_server, monkeypatch,
                                                                          isolation) -> None:
    from scarbook.record import proxy

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setattr(proxy, "SETTLE_S", 0.5, raising=False)  # (none before: the test fails on its checks)
    result, report = _eval(project, judge_server, isolation, False)
    assert _details(report) == FAILED
    for run in report["runs"]:
        assert "recorder: call 2 was still going when the agent ended: its tokens are not in the run's usage" in \
            run["notes"]
        assert run["agent_usage"]["output_tokens"] == 10  # call 1's: call 2's count so far is no count of it
    assert result.exit_code == 1, result.output


def test_max_cost_counts_a_call_that_ended_after_its_agent(project, judge_server, monkeypatch) -> None:
    """Call 2 of the first run costs $0.75; --max-cost 0.5 stops the session before the next run starts. Before, its
    tokens were in no spend, and every run started."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    result, report = _eval(project, judge_server, "none", True, "--max-cost", "0.5")
    assert len(report["runs"]) == 1
    assert report["session"]["state"] == "stopped: budget"
    assert result.exit_code == 3, result.output


def test_max_cost_stops_on_a_call_still_going_past_the_bound(project, judge_server, monkeypatch) -> None:
    """Call 2 of the first run goes on past the recorder's wait (SETTLE_S): its tokens cannot be counted, so the spend
    --max-cost checks is no longer known. The session stops there, saying so. Before, its $0.75 was in no spend and
    every run started, however far past 0.5 they went."""
    from scarbook.record import proxy

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setattr(proxy, "SETTLE_S", 0.5, raising=False)
    result, report = _eval(project, judge_server, "none", False, "--max-cost", "0.5")
    assert len(report["runs"]) == 1  # was 2: the session finished
    assert report["session"]["state"] == "stopped: budget"
    [run] = report["runs"]
    assert report["session"]["note"] == (
        f"stopped by --max-cost $0.5000: {run['case_id']} #1's call 2 was still going when the agent ended, so its cost "
        "is not counted and the spend is not known; spent at least $0.0002 — judge $0.0000 (measured by scarbook), "
        "agent $0.0002 (reported by the agent)")
    assert report["session"]["note"] in result.output
    assert result.exit_code == 3, result.output
