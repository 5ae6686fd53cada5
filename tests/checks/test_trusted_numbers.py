"""Issue 33.9: the budget and trajectory checks never trust numbers the agent writes.

A real hostile agent process calls the tests' loopback model API through scarbook's recorder three
times (30,126 tokens measured by the proxy), then forges its own files: `{"input_tokens": 1}` in
$SCARBOOK_USAGE and a rewritten $SCARBOOK_TRANSCRIPT. With the recorder on, max_tokens and max_turns
read the recorder's own calls and measured usage. Without it, a transcript's usage record that is
negative or not finite is ignored with a note on the run, and the check says the figure was reported."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from tests.helpers.judge_server import chat_reply, judge_server  # noqa: F401

# Three model calls through the recorder, then the forgery: the usage file says 1 token, the
# transcript is rewritten to hold one turn and a usage record of 1 token.
FORGER = r'''
import json, os, sys, urllib.request
base = os.environ["OPENAI_BASE_URL"].rstrip("/")
messages = [{"role": "user", "content": sys.argv[1]}]
for _ in range(3):
    req = urllib.request.Request(base + "/chat/completions",
        data=json.dumps({"model": "gpt-test", "messages": messages}).encode(),
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        messages.append(json.load(resp)["choices"][0]["message"])
    messages.append({"role": "user", "content": "go on"})
with open(os.environ["SCARBOOK_USAGE"], "w") as f:
    f.write(json.dumps({"model": "gpt-test", "input_tokens": 1}) + "\n")
with open(os.environ["SCARBOOK_TRANSCRIPT"], "w") as f:   # rewritten: the recorder's lines are gone
    f.write(json.dumps({"type": "task", "text": sys.argv[1]}) + "\n")
    f.write(json.dumps({"type": "usage", "model": "gpt-test", "input_tokens": 1, "output_tokens": 0}) + "\n")
open("out.txt", "w").write("done")
print("done")
'''

# No recorder: the agent writes its own transcript, one honest usage record, one that cancels it and
# one over the cap (more than any run spends).
REPORTER = r'''
import json, os
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as f:
    f.write(json.dumps({"type": "task", "text": "do it"}) + "\n")
    f.write(json.dumps({"type": "assistant", "text": "working"}) + "\n")
    f.write(json.dumps({"type": "usage", "model": "gpt-test", "input_tokens": 2500000, "output_tokens": 0}) + "\n")
    f.write('{"type": "usage", "model": "gpt-test", "input_tokens": -1999990, "output_tokens": 1e999}\n')
    f.write(json.dumps({"type": "usage", "model": "gpt-test", "input_tokens": 0, "output_tokens": 5000000000}) + "\n")
open("out.txt", "w").write("done")
print("done")
'''


def _agent(project, name: str, source: str) -> str:
    path = project.root / name
    path.write_text(source, encoding="utf-8")
    return f"[{json.dumps(sys.executable)}, {json.dumps(str(path))}, \"{{task}}\"]"


def _case(project, cid: str, check: dict) -> None:
    project.case(cid, f"id: {cid}\ntask: write out.txt\nchecks:\n  - {{type: file_exists, path: out.txt}}\n"
                      f"  - {json.dumps(check)}\n")


def _runs(project, *args: str) -> dict:
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out), *args)
    assert result.exit_code in (0, 1), result.output + result.stderr
    return {r["case_id"]: r for r in json.loads(out.read_text())["runs"]}


def test_recorded_budget_checks_read_the_recorders_calls_not_the_agents_files(project, judge_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: {_agent(project, 'forger.py', FORGER)}, env: [PATH]}}
        runs: 1
        concurrency: 1
        timeout_s: 30
        record: {{openai: {judge_server.url}/v1}}
        """))
    _case(project, "tokens", {"type": "max_tokens", "n": 1000})
    _case(project, "turns", {"type": "max_turns", "n": 1})
    for _ in range(2):  # 3 calls per run: 10,042 tokens each, 30,126 in all
        judge_server.push(*[chat_reply("ok", usage={"prompt_tokens": 10_000, "completion_tokens": 42})] * 3)
    runs = _runs(project)
    assert len(judge_server.requests) == 6
    tokens, turns = runs["tokens"], runs["turns"]
    assert tokens["status"] == "fail", tokens
    assert tokens["checks"][1]["detail"].startswith("30,126 tokens spent (30,000 in, 126 out), at most 1,000 allowed; "
                                                    "passed at model call 1"), tokens["checks"][1]
    assert turns["status"] == "fail", turns
    assert turns["checks"][1]["detail"] == "3 turns (model calls), at most 1 allowed: model call 2 went past it"


def test_unrecorded_transcript_usage_is_validated_and_said_to_be_reported(project):
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: {_agent(project, 'reporter.py', REPORTER)}, env: [PATH], transcript: true}}
        runs: 1
        concurrency: 1
        timeout_s: 30
        """))
    _case(project, "tokens", {"type": "max_tokens", "n": 1000})
    run = _runs(project)["tokens"]
    assert run["status"] == "fail", run
    assert run["checks"][1]["detail"] == ("2,500,000 tokens reported by the agent (2,500,000 in, 0 out), "
                                          "at most 1,000 allowed; passed at usage record 1")
    assert "transcript usage record 2: input_tokens -1999990 is negative; ignored" in run["notes"], run["notes"]
    assert "transcript usage record 2: output_tokens inf is not finite; ignored" in run["notes"], run["notes"]
    assert "transcript usage record 3: output_tokens 5000000000 is over 1e+09; ignored" in run["notes"], run["notes"]
