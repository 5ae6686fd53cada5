"""A case's artifact can be the input of a tool call (`artifact: {tool: NAME, field: FIELD}`): the field of the
agent's LAST call to that tool in the run, read from the transcript its preset keeps. Stand-in `claude` and
`codex` executables (real subprocesses, tests/agents/test_presets) print real-shaped event streams in which the
agent opens a pull request through an MCP tool or runs `gh pr create` through Bash; the rule checks and the
judge (the real SDK against the 127.0.0.1 server) read that text as they read the final output."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.judge.settings import DEFAULT_MODEL
from tests.agents.test_presets import CLAUDE_STREAM, TASK, on_path, stand_in  # noqa: F401
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401

PR_TOOL = "mcp__github__create_pull_request"
FIRST_BODY = "Draft: fixes the README line"
LAST_BODY = "Fixes #12.\n\nAll tests pass."  # the incident: the agent claimed tests it never ran
GH_COMMAND = 'gh pr create --title "README" --body "All tests pass."'


def _assistant(n: int, block: dict) -> str:
    return json.dumps({"type": "assistant", "message": {"id": f"msg_{n}", "type": "message", "role": "assistant",
                                                        "model": "claude-sonnet-4-5-20250929", "content": [block]},
                       "parent_tool_use_id": None, "session_id": "s1", "uuid": f"a{n}"})


def _result(call_id: str, text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": text}]}, "session_id": "s1", "uuid": f"r{call_id}"})


def pr_stream(bodies: list[str], *, bash: str | None = None) -> list[str]:
    """`claude -p --output-format stream-json` of an agent that opened a PR once per body (and ran `bash`)."""
    lines = [CLAUDE_STREAM[0]]  # system init
    for n, body in enumerate(bodies):
        call = f"toolu_pr{n}"
        lines += [_assistant(n, {"type": "tool_use", "id": call, "name": PR_TOOL,
                                 "input": {"owner": "acme", "repo": "tiny", "title": "README", "head": "fix",
                                           "base": "main", "body": body}}),
                  _result(call, f"https://github.com/acme/tiny/pull/{12 + n}")]
    if bash is not None:
        lines += [_assistant(90, {"type": "tool_use", "id": "toolu_sh", "name": "Bash",
                                  "input": {"command": bash, "description": "Open the PR"}}),
                  _result("toolu_sh", "https://github.com/acme/tiny/pull/40")]
    lines += [_assistant(99, {"type": "text", "text": "Opened the pull request."}), CLAUDE_STREAM[-1]]
    return lines


def _project(tmp_path, agent: str, cases: dict[str, list[dict]], judge_url: str | None = None) -> None:
    judge = (f"judge: {{model: {DEFAULT_MODEL}, base_url: {judge_url}, max_retries: 1, timeout_s: {JUDGE_TIMEOUT_S}}}\n"
             if judge_url else "")
    # isolation: none — the stand-in CLIs record their calls beside themselves, outside the workspace
    (tmp_path / "scarbook.yaml").write_text(f"agent: {agent}\nconcurrency: 2\ngate: {{mode: point}}\n"
                                            f"isolation: none\n{judge}")
    for cid, checks in cases.items():
        folder = tmp_path / "cases" / cid
        folder.mkdir(parents=True)
        body = "\n".join(f"  - {json.dumps(c)}" for c in checks)
        (folder / "case.yaml").write_text(f"id: {cid}\ntask: {TASK}\nchecks:\n{body}\n")


def _eval(tmp_path, *extra: str) -> dict[str, dict]:
    out = tmp_path / "report.json"
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "eval", "--runs", "1", "-q", "--json", str(out), *extra],
                             catch_exceptions=False)
    assert out.exists(), res.output
    return {r["case_id"]: r for r in json.loads(out.read_text())["runs"]}


BODY = {"tool": PR_TOOL, "field": "body"}


def test_rule_checks_read_the_last_pr_body_the_agent_sent(tmp_path, on_path) -> None:
    stand_in(on_path, "claude", pr_stream([FIRST_BODY, LAST_BODY]))
    _project(tmp_path, "{type: claude-code}", {
        "claims": [{"type": "not_contains", "artifact": BODY, "text": "All tests pass"}],
        "links": [{"type": "contains", "artifact": BODY, "text": "Fixes #12"},
                  {"type": "regex", "artifact": BODY, "pattern": "^All tests"},
                  {"type": "line_count", "artifact": BODY, "equals": 3}],
        "not-json": [{"type": "json_valid", "artifact": BODY}],
        "title": [{"type": "contains", "artifact": {"tool": PR_TOOL, "field": "title"}, "text": "README"}],
    })
    runs = _eval(tmp_path, "--skip-judge")
    label = f"the body of the last {PR_TOOL} call"
    assert runs["claims"]["status"] == "fail"
    assert runs["claims"]["checks"][0]["detail"] == f"{label} contains 'All tests pass' at line 3 but must not"
    assert runs["links"]["status"] == "pass", runs["links"]["checks"]
    assert [c["detail"] for c in runs["links"]["checks"]] == [
        f"{label} contains 'Fixes #12'", f"{label} matches /^All tests/ at 'All tests'", f"{label} has 3 lines"]
    assert runs["not-json"]["checks"][0]["detail"] == (
        f"{label} is not valid JSON: Expecting value at line 1 column 1")
    assert runs["title"]["checks"][0]["detail"] == f"the title of the last {PR_TOOL} call contains 'README'"


def test_a_run_that_never_made_the_call_fails_naming_the_tool(tmp_path, on_path) -> None:
    stand_in(on_path, "claude", CLAUDE_STREAM, writes={"tmp.txt": "# tiny-agent\n"})  # reads and writes, no PR
    _project(tmp_path, "{type: claude-code}", {
        "no-pr": [{"type": "not_contains", "artifact": BODY, "text": "All tests pass"}],
        "no-field": [{"type": "contains", "artifact": {"tool": "Write", "field": "body"}, "text": "x"}],
    })
    runs = _eval(tmp_path, "--skip-judge")
    assert (runs["no-pr"]["status"], runs["no-pr"]["checks"][0]["detail"]) == (
        "fail", f"the agent never called {PR_TOOL}, so there is no body to check (its 2 tool calls went to other "
                "tools)")
    assert runs["no-pr"]["cause"]["kind"] == "agent"  # the agent did not do the thing: not the case's, no error
    assert runs["no-field"]["checks"][0]["detail"] == (
        "the agent's last Write call (call 2) has no 'body' in its input (its fields: file_path, content)")


def test_a_bash_command_line_is_an_artifact(tmp_path, on_path) -> None:
    stand_in(on_path, "claude", pr_stream([], bash=GH_COMMAND))
    _project(tmp_path, "{type: claude-code}", {
        "gh": [{"type": "not_contains", "artifact": {"tool": "Bash", "field": "command"}, "text": "All tests pass"}]})
    runs = _eval(tmp_path, "--skip-judge")
    assert runs["gh"]["checks"][0]["detail"] == (
        "the command of the last Bash call contains 'All tests pass' at line 1 but must not")


def test_the_judge_sees_only_the_rubric_and_the_pr_body(tmp_path, on_path, judge_server, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    stand_in(on_path, "claude", pr_stream([FIRST_BODY, LAST_BODY]))
    _project(tmp_path, "{type: claude-code}", {
        "judged": [{"type": "llm_judge", "artifact": BODY, "rubric": ["the body claims nothing it did not check"]}],
    }, judge_server.url)
    judge_server.push(tool_reply([("FAIL", "claims all tests pass")]))
    runs = _eval(tmp_path)
    (check,) = runs["judged"]["checks"]
    assert (runs["judged"]["status"], check["detail"]) == ("fail", "0/1 rubric items PASS; FAIL item 1: claims all tests pass")
    assert check["judge"]["artifact"]["source"] == f"tool:{PR_TOOL}:body"
    (request,) = judge_server.requests
    sent = json.dumps(request["body"])
    assert json.dumps(LAST_BODY)[1:-1] in sent and FIRST_BODY not in sent  # the LAST call's body, alone
    assert f"the body of the last {PR_TOOL} call" in sent
    assert "Opened the pull request." not in sent and TASK not in sent  # neither the answer nor the run


def test_the_judge_is_not_called_when_the_agent_made_no_such_call(tmp_path, on_path, judge_server,  # noqa: F811
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    stand_in(on_path, "claude", CLAUDE_STREAM, writes={"tmp.txt": "# tiny-agent\n"})
    _project(tmp_path, "{type: claude-code}", {
        "judged": [{"type": "llm_judge", "artifact": BODY, "rubric": ["the body claims nothing it did not check"]}],
    }, judge_server.url)
    runs = _eval(tmp_path)
    assert (runs["judged"]["status"], runs["judged"]["checks"][0]["detail"]) == (
        "fail", f"the agent never called {PR_TOOL}, so there is no body to check (its 2 tool calls went to other "
                "tools)")
    assert judge_server.requests == []


CODEX_PR = [
    json.dumps({"type": "thread.started", "thread_id": "t1"}), json.dumps({"type": "turn.started"}),
    json.dumps({"type": "item.completed", "item": {"id": "item_1", "type": "mcp_tool_call", "server": "github",
                                                   "tool": "create_pull_request", "status": "completed",
                                                   "arguments": {"title": "README", "body": LAST_BODY},
                                                   "result": {"content": [{"type": "text", "text": "pull/12"}]}}}),
    json.dumps({"type": "item.completed", "item": {"id": "item_2", "type": "command_execution",
                                                   "command": f"bash -lc '{GH_COMMAND}'", "aggregated_output": "",
                                                   "exit_code": 0, "status": "completed"}}),
    json.dumps({"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": "Opened it."}}),
    json.dumps({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0,
                                                    "output_tokens": 5}}),
]


def test_codex_mcp_calls_and_shell_commands_are_artifacts(tmp_path, on_path) -> None:
    stand_in(on_path, "codex", CODEX_PR)
    _project(tmp_path, "{type: codex}", {
        "mcp": [{"type": "not_contains", "artifact": {"tool": "github.create_pull_request", "field": "body"},
                 "text": "All tests pass"}],
        "shell": [{"type": "contains", "artifact": {"tool": "shell", "field": "command"}, "text": "gh pr create"}],
    })
    runs = _eval(tmp_path, "--skip-judge")
    assert runs["mcp"]["checks"][0]["detail"] == (
        "the body of the last github.create_pull_request call contains 'All tests pass' at line 3 but must not")
    assert runs["shell"]["status"] == "pass", runs["shell"]["checks"]


def test_an_agent_that_keeps_no_transcript_is_refused_naming_the_case_file(tmp_path) -> None:
    (tmp_path / "agent.py").write_text("print('done')\n")
    _project(tmp_path, f"{{type: command, argv: [python3, {tmp_path / 'agent.py'}]}}", {
        "pr": [{"type": "output_contains", "text": "done"}, {"type": "not_contains", "artifact": BODY, "text": "x"}]})
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "eval", "--runs", "1", "--skip-judge"])
    assert res.exit_code == 2, res.output
    assert (f"{tmp_path / 'cases' / 'pr' / 'case.yaml'}:5: check 2 (not_contains) reads the body of the last "
            f"{PR_TOOL} call from the run's transcript, but a command agent keeps none — use a preset (claude-code, "
            "codex) or turn on record: (or, if the agent writes $SCARBOOK_TRANSCRIPT itself, say so with "
            "`transcript: true` under agent:)") in res.output
    assert "Traceback" not in res.output
    lint = CliRunner().invoke(main, ["-C", str(tmp_path), "lint"])
    assert (f"pr check 2 [needs-transcript] {tmp_path / 'cases' / 'pr' / 'case.yaml'}:5: check 2 (not_contains) "
            f"reads the body of the last {PR_TOOL} call from the run's transcript, but the project's agent keeps "
            "none: the session will refuse this case\n    -> use a preset (claude-code, codex), turn on record: in "
            "scarbook.yaml, or set transcript: true under agent: if the agent writes $SCARBOOK_TRANSCRIPT "
            "itself") in lint.output


def test_a_run_that_left_no_transcript_breaks_the_check_as_the_cases_fault(tmp_path) -> None:
    """A command agent that says it writes $SCARBOOK_TRANSCRIPT (transcript: true) and wrote nothing."""
    (tmp_path / "agent.py").write_text("print('done')\n")
    _project(tmp_path, f"{{type: command, argv: [python3, {tmp_path / 'agent.py'}], transcript: true}}",
             {"pr": [{"type": "not_contains", "artifact": BODY, "text": "All tests pass"}]})
    runs = _eval(tmp_path, "--skip-judge")
    assert (runs["pr"]["status"], runs["pr"]["cause"]) == ("fail", {
        "kind": "case", "rule": "check-no-transcript", "evidence": "check 1 (not_contains): the run left no "
        "transcript for the checks that read it: the agent wrote nothing to $SCARBOOK_TRANSCRIPT"})
