"""Verdicts computed in code from the validated tool input."""

from __future__ import annotations

import pytest

from scarbook.judge.verdict import ItemVerdict, MalformedReply, decide, overall, parse_tool_input, summarize


def entry(n, verdict="PASS", reason="r"):
    return {"item": n, "verdict": verdict, "reason": reason}


def test_items_come_back_in_rubric_order():
    got = parse_tool_input({"items": [entry(2, "FAIL", "two"), entry(1)]}, 2)
    assert got == [ItemVerdict(1, "PASS", "r"), ItemVerdict(2, "FAIL", "two")]


@pytest.mark.parametrize(
    ("tool_input", "why"),
    [
        ("PASS", "tool input is str, not an object"),
        ({}, "tool input has no 'items' list"),
        ({"items": ["PASS"]}, "entry 1 is not an object"),
        ({"items": [{"item": "1", "verdict": "PASS", "reason": "r"}]}, "entry 1 has no integer 'item' number"),
        ({"items": [{"item": True, "verdict": "PASS", "reason": "r"}]}, "entry 1 has no integer 'item' number"),
        ({"items": [entry(0)]}, "entry 1 grades item 0, but the rubric has 1 item"),
        ({"items": [{**entry(1), "confidence": 0.9}]}, "entry 1 has unexpected field 'confidence'"),
        ({"items": [entry(1, "pass")]}, "item 1 has verdict 'pass', not PASS or FAIL"),
        ({"items": [entry(1, reason="  ")]}, "item 1 has no reason"),
        ({"items": [entry(1), entry(1)]}, "item 1 is graded more than once"),
    ],
)
def test_malformed(tool_input, why):
    with pytest.raises(MalformedReply) as caught:
        parse_tool_input(tool_input, 1)
    assert str(caught.value) == why


def test_missing_items_are_listed():
    with pytest.raises(MalformedReply, match=r"^items 2, 3 not graded$"):
        parse_tool_input({"items": [entry(1)]}, 3)


def test_reason_is_flattened_to_one_line():
    (got,) = parse_tool_input({"items": [entry(1, reason="line one\n  line two")]}, 1)
    assert got.reason == "line one line two"


def test_majority_and_summary():
    samples = [
        [ItemVerdict(1, "PASS", "a1"), ItemVerdict(2, "FAIL", "b1"), ItemVerdict(3, "FAIL", "c1")],
        [ItemVerdict(1, "FAIL", "a2"), ItemVerdict(2, "FAIL", "b2"), ItemVerdict(3, "FAIL", "c2")],
        [ItemVerdict(1, "PASS", "a3"), ItemVerdict(2, "PASS", "b3"), ItemVerdict(3, "PASS", "c3")],
    ]
    decisions = decide(["x", "y", "z"], samples)
    assert [d.verdict for d in decisions] == ["PASS", "FAIL", "FAIL"]
    assert decisions[0].reason == "a1" and decisions[0].votes == ("PASS", "FAIL", "PASS")
    assert overall(decisions) == "fail"
    assert summarize(decisions) == "1/3 rubric items PASS; FAIL item 2: b1 (+1 more FAIL: item 3)"
    assert overall(decide(["x"], [[ItemVerdict(1, "PASS", "ok")]])) == "pass"
    assert overall([]) == "fail"
