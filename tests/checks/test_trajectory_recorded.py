"""Trajectory checks on recorded runs (issue 28.4): a raw-HTTP command agent that keeps no transcript of
its own calls the tests' local model server through scarbook's recorder; each check type passes on one
run and fails on another, the failure naming the call. One session, one run per case."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from tests.helpers.judge_server import chat_reply, judge_server  # noqa: F401
from tests.helpers.paths import FIXTURES

AGENT = FIXTURES / "agents" / "http_openai_agent.py"
OUT = 'call 1 (write_file {"path": "out.txt", "content": "hello"})'
README = 'call 2 (write_file {"path": "README.md", "content": "gone"})'

# Each run: one model call answering with two write_file tool calls (out.txt, then README.md whole),
# then one answering "done": 2 turns, 2 tool calls, 145 tokens, $0.00016 at gpt-test's price.
PASSING = [
    {"type": "tool_called", "name": "write_file", "min": 2, "max": 2},
    {"type": "tool_not_called", "name": "Bash"},
    {"type": "tool_order", "names": ["write_file", "write_file"]},
    {"type": "max_tool_calls", "n": 2},
    {"type": "max_turns", "n": 2},
    {"type": "max_tokens", "n": 145},
    {"type": "max_cost_usd", "usd": 0.001},
    {"type": "no_writes_outside", "paths": ["out.txt", "README.md"]},
]
FAILING = {
    "tool_called": ({"name": "write_file", "max": 1}, f"{README} is write_file call 2; at most 1 allowed (2 calls in all)"),
    "tool_not_called": ({"name": "write_*"}, f"{OUT} called write_*, which must not be called (2 calls in all)"),
    "tool_order": ({"names": ["write_file", "write_file", "write_file"]},
                   f"no write_file call after write_file at {README}; it was called before, at {OUT}"),
    "max_tool_calls": ({"n": 1}, f"2 tool calls, at most 1 allowed: {README} went past it (calls: write_file ×2)"),
    "max_turns": ({"n": 1}, "2 turns, at most 1 allowed: turn 2 began with its message 'done'"),
    # the recorder's usage record per model call says where the budget was passed
    "max_tokens": ({"n": 50}, f"145 tokens spent (130 in, 15 out), at most 50 allowed; passed at model call 1, "
                              f"which made {OUT}"),
    "max_cost_usd": ({"usd": 0.0001}, "$0.0002 spent (145 tokens at gpt-test's price), at most $0.0001 allowed; "
                                      "passed at model call 2"),
    "no_writes_outside": ({"paths": ["out.txt"]}, f"{README} wrote README.md, outside out.txt"),
}


def test_each_trajectory_check_passes_and_fails_on_recorded_runs(project, judge_server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    project.config(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}, "{{task}}"]
          env: [PATH]
        runs: 1
        concurrency: 1
        timeout_s: 30
        record: {{openai: {judge_server.url}/v1}}
        judge:
          prices: {{gpt-test: {{input: 1, output: 2}}}}
        """))
    cases = {"good": PASSING, **{f"bad-{t}": [{"type": t, **args}] for t, (args, _) in FAILING.items()}}
    for cid, checks in cases.items():
        body = "\n".join(f"  - {json.dumps(c)}" for c in checks)
        project.case(cid, f"id: {cid}\ntask: write hello to out.txt\nchecks:\n{body}\n", seed={"README.md": "# demo\n"})
        calls = [("c1", "write_file", {"path": "out.txt", "content": "hello"}),
                 ("c2", "write_file", {"path": "README.md", "content": "gone"})]
        judge_server.push(chat_reply(tool_calls=calls),
                          chat_reply("done", usage={"prompt_tokens": 80, "completion_tokens": 5, "total_tokens": 85}))
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out))
    assert result.exit_code == 1, result.output + result.stderr
    runs = {r["case_id"]: r for r in json.loads(out.read_text())["runs"]}
    good = runs.pop("good")
    assert [(c["type"], c["status"]) for c in good["checks"]] == [(c["type"], "pass") for c in PASSING], good["checks"]
    got = {cid.removeprefix("bad-"): r["checks"][0]["detail"] for cid, r in runs.items()}
    assert got == {t: detail for t, (_, detail) in FAILING.items()}
    assert len(judge_server.requests) == 2 * len(cases)
