"""A hostile agent cannot turn a run it failed into an error. Errors leave the pass rate's denominator (they
stand beside it), so an agent that knows a run went wrong and could make its check an error instead of a
fail would raise its own rate: 4 passes and 1 error read 100%, where 4 passes and 1 fail read 80%. What the
agent writes is the agent's doing: a file it made too big to read, JSON nested past what a reader takes,
or a number longer than Python converts, is a verdict, never the harness's failure. Real agent processes,
whole sessions, unconfined and sandboxed (the workspace is the agent's in both)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.helpers.recorder_upstream import sandbox_or_skip

# Runs 1-4 do the task; run 5 knows it did not and dresses its artifact up.
SPARSE = """
import os
k = int(os.environ["SCARBOOK_RUN"])
with open("out.txt", "w") as f:
    f.write("GOOD\\n" if k < 5 else "BAD\\n")
    if k == 5:
        f.truncate(30_000_000)  # sparse: 30 MB that cost the disk nothing and the agent a millisecond
"""

# Runs 1-3 write the JSON asked for; runs 4 and 5 JSON that Python's reader cannot take whole.
JSON_LIMITS = """
import os
k = int(os.environ["SCARBOOK_RUN"])
doc = '{"ok": true}' if k <= 3 else "[" * 100_000 + "]" * 100_000 if k == 4 else '{"ok": ' + "1" * 5000 + "}"
open("out.json", "w").write(doc)
"""

# What case.yaml's equals: asks for, and a value Python's == takes for it that JSON does not.
NEAR_MISSES = """
import json, os
k = int(os.environ["SCARBOOK_RUN"])
open("out.json", "w").write(json.dumps({"ok": [True, 1, False, 0, {"n": [True]}][k - 1]}))
"""


@pytest.fixture(params=["none", "sandbox"])
def isolation(request, project) -> str:
    if request.param == "sandbox":
        sandbox_or_skip(project.root)
    return request.param


def _eval(project, isolation: str, agent: str, check: str, runs: int) -> tuple[int, list[dict]]:
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', agent])}}}\n"
                   f"timeout_s: 20\nisolation: {isolation}\nthreshold: 0.9\nconcurrency: 2\n")
    project.case("c", f"id: c\ntask: t\nchecks:\n  - {check}\n")
    report = project.root / "report.json"
    result = project.cli("eval", "--runs", str(runs), "-q", "--json", str(report))
    return result.exit_code, sorted(json.loads(report.read_text())["runs"], key=lambda r: r["k"])


def test_a_sparse_file_past_the_read_cap_is_a_fail_not_an_error_that_lifts_the_rate(project, isolation) -> None:
    code, runs = _eval(project, isolation, SPARSE, "{type: not_contains, path: out.txt, text: BAD}", 5)
    assert [r["status"] for r in runs] == ["pass"] * 4 + ["fail"]
    assert runs[4]["checks"][0]["detail"] == ("out.txt is 30,000,000 bytes, more than the 20,000,000 a rule check "
                                              "reads: failed unread — raise max_read_bytes in scarbook.yaml to "
                                              "check it")
    assert runs[4]["cause"]["kind"] == "case" and runs[4]["cause"]["rule"] == "check-read-cap"
    assert code == 1  # 4/5 = 80%, below 90% (it read 4/4 = 100% and exited 0 when the big file was an error)



def test_json_past_the_readers_limits_is_a_fail_not_a_crashed_check(project, isolation) -> None:
    code, runs = _eval(project, isolation, JSON_LIMITS,
                       "{type: json_valid, path: out.json, pointer: /ok, equals: true}", 5)
    assert [(r["status"], r["checks"][0]["detail"]) for r in runs] == [("pass", "out.json/ok = true")] * 3 + [
        ("fail", "out.json nests deeper than a JSON reader here goes: failed unread (RFC 8259 lets a reader limit "
                 "nesting)"),
        ("fail", "out.json holds a number longer than a JSON reader here takes (4,300 digits): failed unread "
                 "(RFC 8259 lets a reader limit numbers)"),
    ]  # each was an error before: 'the check crashed: RecursionError: …' and 'ValueError: Exceeds the limit …'
    assert [r["cause"]["rule"] for r in runs[3:]] == ["check-fail", "check-fail"]
    assert code == 1  # 3/5 = 60%, below 90% (3 passes and 2 errors read 100%, exit 0)


def test_json_equals_true_is_not_passed_by_a_number(project, isolation) -> None:
    code, runs = _eval(project, isolation, NEAR_MISSES,
                       "{type: json_valid, path: out.json, pointer: /ok, equals: true}", 5)
    assert [(r["status"], r["checks"][0]["detail"]) for r in runs] == [
        ("pass", "out.json/ok = true"),
        ("fail", "out.json/ok is 1, expected true"),  # a pass before: 1 == True in Python
        ("fail", "out.json/ok is false, expected true"),
        ("fail", "out.json/ok is 0, expected true"),
        ("fail", 'out.json/ok is {"n": [true]}, expected true'),
    ]
    assert code == 1


def test_json_equality_keeps_bools_apart_from_numbers_at_any_depth() -> None:
    from scarbook.checks.rules import same_json

    assert same_json({"a": [1, 2.0, "x", None]}, {"a": [1.0, 2, "x", None]})
    assert not same_json({"a": [1]}, {"a": [True]})
    assert not same_json([0], [False])
    assert not same_json({"a": 1, "b": 2}, {"a": 1})
    assert not same_json([1, 2], [1])


NOT_JSON = """
import json, os
k = int(os.environ["SCARBOOK_RUN"])
open("out.json", "w").write(json.dumps({"ok": [1.5, float("nan"), float("inf"), -float("inf")][k - 1]}))
"""


def test_nan_and_infinity_are_not_valid_json(project, isolation) -> None:
    """Python's json.dumps writes a float nan as NaN and its reader takes it back; no JSON reader elsewhere does
    (JSON.parse throws). json_valid said 'out.json is valid JSON' for all four."""
    code, runs = _eval(project, isolation, NOT_JSON, "{type: json_valid, path: out.json}", 4)
    assert [(r["status"], r["checks"][0]["detail"]) for r in runs] == [("pass", "out.json is valid JSON")] + [
        ("fail", f"out.json is not valid JSON: {word} is not a JSON value (Python's json.dumps writes it for a float)")
        for word in ("NaN", "Infinity", "-Infinity")]
    assert code == 1



# Runs 1-3 report what they spent; runs 4 and 5 spent far more, and name the model as a number or a list.
BUDGET_FORGER = """
import json, os
k = int(os.environ["SCARBOOK_RUN"])
model = "claude-sonnet-4-6" if k <= 3 else [5, ["claude-sonnet-4-6"]][k - 4]
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as f:
    for line in ({"type": "task", "text": "t"}, {"type": "usage", "model": model, "input_tokens": 10 if k <= 3 else
                 1_000_000, "output_tokens": 10}, {"type": "final", "text": "done"}):
        f.write(json.dumps(line) + "\\n")
"""
NO_COST = ("the run recorded 1,000,010 tokens but no cost (no model named): add its price under judge.prices, have "
           "the agent write cost_usd to $SCARBOOK_USAGE, or check max_tokens")


def _eval_transcript(project, isolation: str, agent: str, check: str) -> tuple[int, list[dict]]:
    """5 runs of an agent that writes its own transcript (`transcript: true`), the case's threshold 80%."""
    project.config(f"agent: {{type: command, transcript: true, argv: {json.dumps([sys.executable, '-c', agent])}}}\n"
                   f"timeout_s: 20\nisolation: {isolation}\nthreshold: 0.8\ngate: {{mode: point}}\nconcurrency: 2\n")
    project.case("c", f"id: c\ntask: t\nchecks:\n  - {check}\n")
    report = project.root / "report.json"
    result = project.cli("eval", "--runs", "5", "-q", "--json", str(report))
    return result.exit_code, sorted(json.loads(report.read_text())["runs"], key=lambda r: r["k"])


def test_a_transcript_naming_its_model_with_no_text_fails_the_budget_check(project, isolation) -> None:
    """Every transcript reader took the log's model as written; a number or a list there crashed max_cost_usd's
    price lookup ("AttributeError: 'int' object has no attribute 'startswith'", "unhashable type: 'list'"): an
    error, so 3 passes and 2 errors read 100%. Only a text is a model now: the rest is none, and a cost that
    cannot be priced breaks the check as any unpriced model does (a fail, the case's)."""
    code, runs = _eval_transcript(project, isolation, BUDGET_FORGER, "{type: max_cost_usd, usd: 0.01}")
    assert [r["status"] for r in runs] == ["pass"] * 3 + ["fail"] * 2, [r["reason"] for r in runs]
    assert [r["checks"][0]["detail"] for r in runs[3:]] == [NO_COST] * 2
    assert [r["cause"]["rule"] for r in runs[3:]] == ["check-no-usage"] * 2
    assert code == 1  # 3/5 = 60%, below 80% (3/3 with 2 errors before: exit 0)


# A Claude Code log line whose cwd is an object: no_writes_outside read it as a folder.
ODD_CWD = """
import json, os
line = {"type": "assistant", "cwd": {"a": 1}, "sessionId": "s", "uuid": "a1", "parentUuid": None,
        "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                    "content": [{"type": "text", "text": "done"}], "usage": {"input_tokens": 1, "output_tokens": 1}}}
open(os.environ["SCARBOOK_TRANSCRIPT"], "a").write(json.dumps(line) + "\\n")
"""


def test_a_transcript_naming_its_cwd_with_no_text_is_checked_without_one(project, isolation) -> None:
    """no_writes_outside crashed on it ("unhashable type: 'dict'"): each run an error. The log wrote nothing."""
    code, runs = _eval_transcript(project, isolation, ODD_CWD, "{type: no_writes_outside, paths: [out.txt]}")
    assert [(r["status"], r["checks"][0]["detail"]) for r in runs] == [("pass", "no file-writing tool calls")] * 5
    assert code == 0
