"""A budget check cannot pass on calls the recorder did not count. A streamed answer carries its usage at its
end (message_delta); an agent that read the content it wanted, cut the stream off and ended left that call
unrecorded, so max_tokens and max_cost_usd added up only the calls before it and passed: a 50,000-token answer
under a budget of 1,000. The recorder now keeps, for the run, the calls whose tokens it could not count (still
going when the agent ended, or broken off before their end); the budget checks fail on them, naming the call.
The real recorder, a raw-HTTP agent process and the loopback Messages-API server; unconfined and sandboxed."""

from __future__ import annotations

import json
import sys
import textwrap
import threading

import pytest

from tests.helpers.judge_server import judge_server, text_reply  # noqa: F401
from tests.helpers.recorder_upstream import SECRET, TWO_CALLS, sandbox_or_skip

# Call 1 whole; call 2 streamed, read up to the end of its text (argv[1] "start": up to its first event only), then
# the connection is dropped ("dropped" written beside out.txt) and the agent ends (argv[2] seconds later).
AGENT = TWO_CALLS + r'''
text = ""
while True:
    line = r.fp.readline()
    if not line:
        break
    if line.startswith(b"data: "):
        event = json.loads(line[6:])
        if event["type"] == "content_block_delta":
            text += event["delta"]["text"]
        if event["type"] == ("message_start" if sys.argv[1] == "start" else "content_block_stop"):
            break  # all it wanted: the usage would come later
c.sock.shutdown(2)  # (the response's file still holds the socket: close alone would leave it open)
c.sock.close()
open("out.txt", "w").write(text or "hello")
open("dropped", "w").write("")
time.sleep(float(sys.argv[2]))
'''
COUNTED = "the recorder counted 20 tokens (10 in, 10 out), at most 1,000 allowed, but call 2"
NOT_KEPT = ": its tokens were not counted, so the budget is not shown kept"


def _eval(project, judge_server, isolation: str, cut: str, wait_s: float) -> tuple[object, dict]:
    """One recorded run of AGENT (`cut`, then `wait_s` before it ends) against a server that holds call 2's stream
    before its 5th event (message_delta) for the whole run — or, with `cut` "start", before its 2nd until the
    agent dropped it, then sends the rest an event at a time."""
    if isolation == "sandbox":
        sandbox_or_skip(project.root)
    (project.root / "agent.py").write_text(AGENT)
    argv = [sys.executable, str(project.root / "agent.py"), cut, str(wait_s)]
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: {json.dumps(argv)}}}
        runs: 1
        timeout_s: 60
        isolation: {isolation}
        record: {{anthropic: {judge_server.url}}}
        """))
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: contains, path: out.txt, text: hello}\n"
                      "  - {type: max_tokens, n: 1000}\n")
    judge_server.push(text_reply("ok", usage={"input_tokens": 10, "output_tokens": 10}),
                      text_reply("hello " * 20, usage={"input_tokens": 10, "output_tokens": 50_000}))
    gate = judge_server.stream_gate = threading.Event()
    judge_server.stream_gate_s = 60
    judge_server.stream_gate_at, judge_server.stream_pause_s = (1, 0.2) if cut == "start" else (5, 0.0)
    done = threading.Event()

    def release_once_dropped() -> None:
        while cut == "start" and not done.wait(0.05):
            if list(project.root.glob("workspaces/*/c/1/dropped")):
                gate.set()
                return

    watcher = threading.Thread(target=release_once_dropped)
    watcher.start()
    out = project.root / "report.json"
    try:
        result = project.cli("eval", "-q", "--json", str(out))
    finally:
        done.set()
        gate.set()
        watcher.join()
    (run,) = json.loads(out.read_text())["runs"]
    return result, run


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_stream_cut_off_before_its_usage_fails_the_budget(project, judge_server, monkeypatch, isolation) -> None:
    from scarbook.record import proxy

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setattr(proxy, "SETTLE_S", 0.5)  # the server holds call 2 for the whole run: no wait for it to end
    result, run = _eval(project, judge_server, isolation, "text", 0)
    assert [(c["status"], c["detail"]) for c in run["checks"]] == [  # a pass before: '20 tokens spent (10 in, …'
        ("pass", "out.txt contains 'hello'"), ("fail", f"{COUNTED} was still going when the agent ended{NOT_KEPT}")]
    assert "recorder: call 2 was still going when the agent ended: its tokens are not in the run's usage" in run["notes"]
    assert result.exit_code == 1, result.output


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_stream_the_agent_dropped_while_it_ran_on_fails_the_budget(project, judge_server, monkeypatch,
                                                                      isolation) -> None:
    """The agent dropped call 2 after its first event and ran on: the recorder's next write to it failed and it
    read no more, the usage at the end unread. So an agent could have the model write at length, keep the
    beginning and drop the rest, and none of it was counted. The recorder now reads such an answer on to its end
    (at most proxy.SETTLE_S), the agent gone: its tokens are counted."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    result, run = _eval(project, judge_server, isolation, "start", 1.5)
    # a pass before: '20 tokens spent (10 in, 10 out), at most 1,000'
    assert (run["checks"][1]["status"], run["checks"][1]["detail"]) == (
        "fail", "50,030 tokens spent (20 in, 50,010 out), at most 1,000 allowed; passed at model call 2")
    assert result.exit_code == 1, result.output
