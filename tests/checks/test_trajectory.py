"""Trajectory checks (issue 28.4): rules over the run's transcript, each failing result naming the call
that broke it. The check functions are tested on transcripts parsed from real files in the documented
format (docs/transcript-format.md); a few real evals run a Python `command` agent that writes
$SCARBOOK_TRANSCRIPT, and the session refuses the checks for an agent that keeps no transcript."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import pytest

from scarbook.checks import CheckContext, parse_check, run_check
from scarbook.errors import CaseError
from scarbook.models import Case, Cause, CauseKind, Usage
from scarbook.transcripts import load_transcript

# What the agent below does (and what the fixture transcript holds): read, search, write two files
# (README.md whole), answer; 1,200 tokens, $0.03.
RECORDS = [
    {"type": "task", "text": "put the summary in out.txt"},
    {"type": "tool_call", "id": "c1", "name": "read_file", "input": {"path": "README.md"}},
    {"type": "tool_result", "id": "c1", "output": "# demo\n", "is_error": False},
    {"type": "tool_call", "id": "c2", "name": "search", "input": {"query": "summary style"}},
    {"type": "tool_result", "id": "c2", "output": "short", "is_error": False},
    {"type": "assistant", "text": "writing both files"},
    {"type": "tool_call", "id": "c3", "name": "write_file", "input": {"path": "out.txt", "content": "a summary\n"}},
    {"type": "tool_call", "id": "c4", "name": "write_file", "input": {"path": "README.md", "content": "# gone\n"}},
    {"type": "tool_result", "id": "c3", "output": "ok", "is_error": False},
    {"type": "tool_result", "id": "c4", "output": "ok", "is_error": False},
    {"type": "final", "text": "done"},
    {"type": "usage", "model": "m", "input_tokens": 1000, "output_tokens": 200},
]
README_CALL = 'call 4 (write_file {"path": "README.md", "content": "# gone\\n"})'

# One check of each type that this trajectory passes, and one it fails (with the failing detail).
PASSING = [
    {"type": "tool_called", "name": "read_file"},
    {"type": "tool_not_called", "name": "Bash"},
    {"type": "tool_order", "names": ["read_file", "write_file"]},
    {"type": "max_tool_calls", "n": 4},
    {"type": "max_turns", "n": 4},
    {"type": "max_tokens", "n": 1200},
    {"type": "max_cost_usd", "usd": 0.05},
    {"type": "no_writes_outside", "paths": ["out.txt", "README.md"]},
]
FAILING = [
    ({"type": "tool_called", "name": "Bash"},
     "Bash was called 0 times, expected at least 1 (calls: read_file ×1, search ×1, write_file ×2); "
     f"the last call was {README_CALL}"),
    ({"type": "tool_not_called", "name": "write_file"},
     'call 3 (write_file {"path": "out.txt", "content": "a summary\\n"}) called write_file, which must not be '
     "called (2 calls in all)"),
    ({"type": "tool_order", "names": ["search", "read_file"]},
     'no read_file call after search at call 2 (search {"query": "summary style"}); it was called before, '
     'at call 1 (read_file {"path": "README.md"})'),
    ({"type": "max_tool_calls", "n": 3},
     f"4 tool calls, at most 3 allowed: {README_CALL} went past it (calls: read_file ×1, search ×1, write_file ×2)"),
    ({"type": "max_turns", "n": 2},
     "4 turns, at most 2 allowed: turn 3 began with "
     "call 3 (write_file {\"path\": \"out.txt\", \"content\": \"a summary\\n\"})"),
    ({"type": "max_tokens", "n": 1000}, "1,200 tokens reported by the agent (1,000 in, 200 out), at most 1,000 allowed"),
    ({"type": "max_cost_usd", "usd": 0.02}, "$0.0300 reported by the agent, at most $0.02 allowed"),
    ({"type": "no_writes_outside", "paths": ["out.txt"]}, f"{README_CALL} wrote README.md, outside out.txt"),
]


def _write_transcript(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _check(data: dict, ctx: CheckContext):
    check = parse_check(data, Path("case.yaml"), 3)
    return asyncio.run(run_check(check, ctx))


@pytest.fixture
def ctx(tmp_path: Path) -> CheckContext:
    t = load_transcript(_write_transcript(tmp_path / "t.jsonl", RECORDS))
    return CheckContext(case=Case(id="c", task="t"), workspace=tmp_path / "ws", output="done", transcript=t,
                        agent_usage=Usage(input_tokens=1000, output_tokens=200, cost_usd=0.03))


@pytest.mark.parametrize("data", PASSING, ids=[d["type"] for d in PASSING])
def test_each_trajectory_check_passes_on_a_trajectory_within_it(ctx, data) -> None:
    result = _check(data, ctx)
    assert (result.status, result.type) == ("pass", data["type"]), result.detail


@pytest.mark.parametrize(("data", "detail"), FAILING, ids=[d["type"] for d, _ in FAILING])
def test_each_trajectory_check_fails_naming_the_call_that_broke_it(ctx, data, detail) -> None:
    result = _check(data, ctx)
    assert (result.status, result.detail) == ("fail", detail)


README_REF = {"index": 4, "tool": "write_file", "input": '{"path": "README.md", "content": "# gone\\n"}'}
OUT_REF = {"index": 3, "tool": "write_file", "input": '{"path": "out.txt", "content": "a summary\\n"}'}


def test_the_call_that_broke_a_check_is_kept_as_data_too(ctx) -> None:
    """CheckResult.call: what the detail names, for the JSON report and the history."""
    calls = {d["type"]: _check(d, ctx).call for d, _ in FAILING}
    assert calls == {"tool_called": None, "tool_not_called": OUT_REF,  # never called: no call to name
                     "tool_order": {"index": 2, "tool": "search", "input": '{"query": "summary style"}'},
                     "max_tool_calls": README_REF, "max_turns": OUT_REF, "max_tokens": None, "max_cost_usd": None,
                     "no_writes_outside": README_REF}
    assert all(_check(d, ctx).call is None for d in PASSING)


def test_pass_details_say_what_was_counted(ctx) -> None:
    assert _check(PASSING[0], ctx).detail == "read_file was called 1 time, first at call 1"
    assert _check(PASSING[2], ctx).detail == "called in order: read_file (call 1), write_file (call 3)"
    assert _check(PASSING[4], ctx).detail == "4 turns (at most 4)"
    assert _check(PASSING[7], ctx).detail == "2 writes, all inside out.txt, README.md"


def test_tool_called_max_names_the_first_call_past_it_and_names_may_be_globs(ctx) -> None:
    result = _check({"type": "tool_called", "name": "write_*", "max": 1}, ctx)
    assert result.detail == f"{README_CALL} is write_* call 2; at most 1 allowed (2 calls in all)"
    assert _check({"type": "tool_called", "name": "write_file", "min": 2, "max": 2}, ctx).status == "pass"
    assert _check({"type": "tool_called", "name": "Bash", "max": 0}, ctx).detail == "Bash was called 0 times"


def test_no_writes_outside_sees_absolute_paths_in_the_workspace_and_skips_failed_writes(tmp_path) -> None:
    ws = tmp_path / "ws"
    records = [
        {"type": "tool_call", "id": "a", "name": "Write", "input": {"file_path": f"{ws}/src/x.py", "content": "x"}},
        {"type": "tool_result", "id": "a", "output": "ok"},
        {"type": "tool_call", "id": "b", "name": "Write", "input": {"file_path": f"{ws}/tests/t.py", "content": "y"}},
        {"type": "tool_result", "id": "b", "output": "permission denied", "is_error": True},
        {"type": "tool_call", "id": "c", "name": "Edit",
         "input": {"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}},
        {"type": "tool_result", "id": "c", "output": "ok"},
    ]
    t = load_transcript(_write_transcript(tmp_path / "t.jsonl", records))
    ctx = CheckContext(case=Case(id="c", task="t"), workspace=ws, output="", transcript=t)
    result = _check({"type": "no_writes_outside", "paths": ["src/*"]}, ctx)
    assert result.detail == ('call 3 (Edit {"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}) '
                             "wrote /etc/hosts, outside the workspace")
    t.entries = t.entries[:4]
    assert _check({"type": "no_writes_outside", "paths": ["src/*"]}, ctx).detail == "1 write, all inside src/*"
    detail = _check({"type": "no_writes_outside", "paths": []}, ctx).detail
    assert detail.startswith('call 1 (Write {"file_path": "') and "…) wrote src/x.py, and no writes are allowed" in detail


def test_usage_comes_from_the_transcript_when_the_agent_reported_none(ctx) -> None:
    ctx.agent_usage = Usage()
    assert _check({"type": "max_tokens", "n": 1199}, ctx).detail == (
        "1,200 tokens reported by the agent (1,000 in, 200 out), at most 1,199 allowed")
    result = _check({"type": "max_cost_usd", "usd": 1}, ctx)  # tokens but no dollars: the case cannot be checked so
    assert (result.status, result.cause.rule) == ("fail", "check-no-usage")
    assert result.detail == ("the run recorded 1,200 tokens but no cost (no price for m): add its price under "
                             "judge.prices, have the agent write cost_usd to $SCARBOOK_USAGE, or check max_tokens")


def test_a_run_without_its_transcript_fails_the_check_as_the_cases_fault_and_verify_skips_it(ctx) -> None:
    ctx.transcript, ctx.transcript_missing = None, "the run left no transcript"
    result = _check(PASSING[0], ctx)
    assert (result.status, result.detail, result.cause) == (
        "fail", "the run left no transcript",
        Cause(CauseKind.CASE, "check-no-transcript", "the run left no transcript"))
    ctx.transcript_missing = ""  # none expected (verify of a good artifact): nothing to check
    result = _check(PASSING[0], ctx)
    assert result.status == "skipped"
    assert result.detail == "not run: no transcript to check here (a trajectory check reads a run's transcript)"


@pytest.mark.parametrize(("data", "message", "fix"), [
    ({"type": "tool_called", "name": "x", "tool": "y"}, "unknown key 'tool' in tool_called check",
     "tool_called takes: name, min, max"),
    ({"type": "max_tool_calls", "n": -1}, "max_tool_calls.n must be 0 or more, got -1", "write e.g. n: 12"),
    ({"type": "max_turns", "n": 2.5}, "max_turns.n must be an integer, got float", "write n as an integer"),
    ({"type": "tool_called", "name": "x", "min": 3, "max": 1},
     "tool_called.min (3) is more than max (1): no run could pass", "make min at most max"),
    ({"type": "tool_order", "names": []}, "tool_order.names needs at least one tool name",
     "write names: [read_file, write_file]"),
    ({"type": "tool_not_called", "name": " "}, "tool_not_called.name: a tool name is empty",
     "name the tool as the agent calls it, e.g. write_file or Bash"),
    ({"type": "max_cost_usd", "usd": -0.5}, "max_cost_usd.usd must be a number of dollars, 0 or more, got -0.5",
     "write e.g. usd: 0.50"),
    ({"type": "no_writes_outside", "paths": ["src/[ab.py"]},
     "no_writes_outside.paths: 'src/[ab.py' is not a valid glob: the '[' at position 5 is never closed "
     "(write [[] for a literal '[')", "write globs as only_changed does: src/*.py, docs/** ('*' also matches '/')"),
    ({"type": "no_writes_outside", "paths": ["../x"]},
     "no_writes_outside.paths: path '../x' contains '..' and would leave the workspace",
     "use a path relative to the workspace root, inside it"),
])
def test_bad_arguments_are_refused_with_the_exact_message(data, message, fix) -> None:
    with pytest.raises(CaseError) as err:
        parse_check(data, Path("case.yaml"), 3)
    assert message in str(err.value) and fix in str(err.value), str(err.value)


# --- real runs: a Python command agent that writes $SCARBOOK_TRANSCRIPT --------------------------------

AGENT = """\
import json, os
from pathlib import Path
records = json.loads({records!r})
Path("out.txt").write_text("a summary\\n")
Path("README.md").write_text("# gone\\n")
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as fh:
    for r in records:
        fh.write(json.dumps(r) + "\\n")
with open(os.environ["SCARBOOK_USAGE"], "a") as fh:
    fh.write(json.dumps({{"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.03}}) + "\\n")
print("done")
"""


def _command_agent(project, *, transcript: bool) -> None:
    script = project.root / "agent.py"
    script.write_text(AGENT.format(records=json.dumps(RECORDS)))
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, -I, -S, {json.dumps(str(script))}],"
                   f" transcript: {'true' if transcript else 'false'}}}\n"
                   "runs: 1\nconcurrency: 4\ntimeout_s: 30\nthreshold: 0.8\n")


def _case(project, cid: str, checks: list[dict]) -> None:
    body = "\n".join(f"  - {json.dumps(c)}" for c in checks)
    project.case(cid, f"id: {cid}\ntask: put the summary in out.txt\nchecks:\n{body}\n", seed={"README.md": "# demo\n"})


def test_real_runs_pass_and_fail_each_trajectory_check_naming_the_call(project) -> None:
    """One session: a case holding every passing check, and one case per failing check (a failing
    check stops the rest, so each failure gets its own run)."""
    _command_agent(project, transcript=True)
    _case(project, "good", PASSING)
    for data, _ in FAILING:
        _case(project, f"bad-{data['type'].replace('_', '-')}", [data])
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out))
    assert result.exit_code == 1, result.output
    runs = {r["case_id"]: r for r in json.loads(out.read_text())["runs"]}
    good = runs.pop("good")
    assert good["status"] == "pass", good["reason"]
    assert [c["status"] for c in good["checks"]] == ["pass"] * len(PASSING)
    expected = {f"bad-{d['type'].replace('_', '-')}": (d["type"], detail) for d, detail in FAILING}
    got = {cid: (r["checks"][0]["type"], r["checks"][0]["detail"]) for cid, r in runs.items()}
    assert got == expected
    assert all(r["status"] == "fail" and r["cause"]["rule"] == "check-fail" for r in runs.values())
    assert runs["bad-no-writes-outside"]["checks"][0]["call"] == README_REF
    from scarbook.project import Project

    history = Project.at(project.root).history
    [kept] = [r for r in history.runs(history.sessions()[0].id) if r.case_id == "bad-no-writes-outside"]
    assert kept.checks[0].call == README_REF  # the history keeps it


def test_an_agent_that_keeps_no_transcript_is_refused_before_the_first_run(project) -> None:
    _command_agent(project, transcript=False)
    _case(project, "good", PASSING[:2])
    _case(project, "plain", [{"type": "file_exists", "path": "out.txt"}])
    result = project.cli("eval", "-q")
    assert result.exit_code == 2, result.output
    assert ("trajectory checks read the run's transcript, but a command agent keeps none: good (check 1, "
            "tool_called), good (check 2, tool_not_called) — turn on record: or use a preset (claude-code, codex) "
            "(or, if the agent writes $SCARBOOK_TRANSCRIPT itself, say so with `transcript: true` under agent:)"
            ) in result.stderr
    assert not list(project.workspaces.glob("*/good")), "no run started"
    assert project.cli("eval", "-q", "plain").exit_code == 0  # a case without them runs as before


def test_a_run_whose_agent_wrote_no_transcript_fails_its_trajectory_check_as_the_cases_fault(project) -> None:
    script = project.root / "agent.py"
    script.write_text("print('done')\n")
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, -I, -S, {json.dumps(str(script))}],"
                   " transcript: true}\nruns: 1\nconcurrency: 1\ntimeout_s: 30\nthreshold: 0.8\n")
    _case(project, "c", [{"type": "max_tool_calls", "n": 3}])
    out = project.root / "report.json"
    project.cli("eval", "-q", "--json", str(out))
    [run] = json.loads(out.read_text())["runs"]
    assert run["status"] == "fail"
    assert run["cause"] == {"kind": "case", "rule": "check-no-transcript", "evidence": (
        "check 1 (max_tool_calls): the run left no transcript for the checks that read it: the agent wrote "
        "nothing to $SCARBOOK_TRANSCRIPT")}


def test_agent_transcript_must_be_a_boolean(project) -> None:
    project.config(textwrap.dedent("""\
        agent: {type: command, argv: [x], transcript: yes please}
        """))
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: x}\n")
    result = project.cli("eval", "-q")
    assert "agent.transcript must be true or false, got 'yes please'" in result.stderr


def test_tokens_without_dollars_are_priced_from_the_judge_price_table(ctx) -> None:
    from scarbook.judge.pricing import DEFAULT_PRICES, priced

    ctx.agent_usage = Usage()
    ctx.price = lambda model, usage: priced(usage, model, DEFAULT_PRICES).cost_usd
    result = _check({"type": "max_cost_usd", "usd": 1}, ctx)  # the transcript's model "m" has no price
    assert (result.status, result.cause.rule, result.detail) == (
        "fail", "check-no-usage", "the run recorded 1,200 tokens but no cost (no price for m): add its price under "
        "judge.prices, have the agent write cost_usd to $SCARBOOK_USAGE, or check max_tokens")
    ctx.transcript.model = "claude-sonnet-4-5"  # $3 in, $15 out per million
    assert _check({"type": "max_cost_usd", "usd": 0.005}, ctx).detail == (
        "$0.0060 reported by the agent (1,200 tokens at claude-sonnet-4-5's price), at most $0.005 allowed")


def test_recorded_model_calls_are_the_turns(tmp_path) -> None:
    """Two model calls with no tool result between them (the second continues the first): the timeline
    shows one turn, the recorder's model_call records say two."""
    call = {"type": "model_call", "n": 1, "api": "anthropic.messages", "request": {}, "response": {}}
    records = [call, {"type": "task", "call": 1, "text": "go"},
               {"type": "assistant", "call": 1, "text": "part one"}, {**call, "n": 2},
               {"type": "assistant", "call": 2, "text": "part two"}]
    t = load_transcript(_write_transcript(tmp_path / "t.jsonl", records))
    assert t.model_calls == 2
    ctx = CheckContext(case=Case(id="c", task="t"), workspace=tmp_path, output="", transcript=t)
    assert _check({"type": "max_turns", "n": 1}, ctx).detail == (
        "2 turns (model calls), at most 1 allowed: model call 2 went past it")
    assert _check({"type": "max_turns", "n": 2}, ctx).detail == "2 turns (model calls) (at most 2)"


def test_usage_records_of_two_models_are_each_priced_at_their_own_model(tmp_path) -> None:
    from scarbook.judge.pricing import DEFAULT_PRICES, priced

    records = [{"type": "usage", "model": "claude-haiku-4-5", "input_tokens": 1_000_000, "output_tokens": 0},
               {"type": "usage", "model": "claude-sonnet-4-5", "input_tokens": 1_000_000, "output_tokens": 0}]
    t = load_transcript(_write_transcript(tmp_path / "t.jsonl", [{"type": "task", "text": "x"}, *records]))
    ctx = CheckContext(case=Case(id="c", task="t"), workspace=tmp_path, output="", transcript=t,
                       price=lambda model, usage: priced(usage, model, DEFAULT_PRICES).cost_usd)
    assert _check({"type": "max_cost_usd", "usd": 2}, ctx).detail == (  # $1 (haiku) + $3 (sonnet), not 2 x $3
        "$4.0000 reported by the agent (2,000,000 tokens at the prices of claude-haiku-4-5, claude-sonnet-4-5), at most $2 allowed; "
        "passed at usage record 2")


def test_scarbook_lint_says_when_the_agent_keeps_no_transcript(project) -> None:
    _command_agent(project, transcript=False)
    _case(project, "good", [{"type": "max_turns", "n": 4}])
    result = project.cli("lint")
    assert result.stdout.startswith("good check 1 [needs-transcript] max_turns reads each run's transcript, but the "
                                    "project's agent keeps none: the session will refuse this case\n")
    _command_agent(project, transcript=True)
    assert project.cli("lint").stdout == "no hints for 1 case\n"


def test_a_write_outside_to_a_name_with_control_characters_names_it_escaped(project) -> None:
    """no_writes_outside quotes the name the agent wrote to escaped whole (text.escape_name), in history and in
    `show`: before, the run's reason said "wrote out.txt" (the terminal escape dropped: the name of another file),
    and a bidirectional control in the call's input reached the record raw."""
    records = [{"type": "tool_call", "id": "c1", "name": "write_file",
                "input": {"path": "\x1b[0mout.txt", "content": "x"}},
               {"type": "tool_call", "id": "c2", "name": "write_file", "input": {"path": "\u202etxt.exe"}},
               {"type": "final", "text": "done"}]
    script = project.root / "agent.py"
    script.write_text(f"import json, os\nwith open(os.environ['SCARBOOK_TRANSCRIPT'], 'a') as fh:\n"
                      f"    fh.write(''.join(json.dumps(r) + '\\n' for r in {records!r}))\n")
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, -I, -S, {json.dumps(str(script))}],"
                   " transcript: true}\nruns: 1\ntimeout_s: 30\n")
    _case(project, "one", [{"type": "no_writes_outside", "paths": ["out.txt"]}])
    _case(project, "two", [{"type": "no_writes_outside", "paths": ["out.txt", "?[[]0mout.txt"]}])  # (? is the ESC)
    assert project.cli("eval", "-q").exit_code == 1
    from scarbook.project import Project

    history = Project.at(project.root).history
    runs = {r.case_id: r for r in history.runs(history.sessions()[0].id)}
    one = 'call 1 (write_file {"path": "\\u001b[0mout.txt", "content": "x"}) wrote \\x1b[0mout.txt, outside out.txt'
    two = 'call 2 (write_file {"path": "\\u202etxt.exe"}) wrote \\u202etxt.exe, outside out.txt, ?[[]0mout.txt'
    assert (runs["one"].checks[0].detail, runs["one"].reason) == (one, f"check 1 (no_writes_outside): {one}")
    assert (runs["two"].checks[0].detail, runs["two"].reason) == (two, f"check 1 (no_writes_outside): {two}")
    shown = project.cli("show", "one").output.splitlines()
    assert any(line.startswith(f"run 1: FAIL — check 1 (no_writes_outside): {one}  (") for line in shown)
    assert f"  [   fail] 1. no_writes_outside: {one}" in shown
