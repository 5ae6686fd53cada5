"""Issue 35.1's offline proposer: rule checks from the scar's artifacts alone, each with why."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from scarbook.cases.rule_proposals import MAX_PER_RULE, _lines, _only_in, propose_rule_checks


def test_lines_only_in_one_artifact_become_not_contains_and_contains_longest_first() -> None:
    found = propose_rule_checks("# tiny\nmore text here\nok\n", "# tiny\nthe right line\n", "tmp.txt")
    assert [(p.check, p.why) for p in found] == [
        ({"type": "not_contains", "path": "tmp.txt", "text": "more text here"},
         "'more text here' is in the failed artifact only"),
        ({"type": "contains", "path": "tmp.txt", "text": "the right line"}, "'the right line' is in the good artifact only")]


def test_files_the_incident_also_changed_become_only_changed_on_the_artifact() -> None:
    [p] = propose_rule_checks("x", None, "out.txt", changed=["out.txt", "README.md", "notes.md"])
    assert p.check == {"type": "only_changed", "paths": ["out.txt"]}
    assert p.why == "the incident also changed README.md, notes.md (its transcript); a right result changes out.txt"


def test_an_answer_artifact_gets_output_checks_and_no_only_changed() -> None:
    """The incident is the answer: the files its run wrote say nothing of it, and `only_changed: []` (a right run
    changes no file) would fail every right run of a task that also edits files — as for a tool call's input."""
    found = propose_rule_checks("Done.\n", "Not done yet.\n", "output", changed=["tmp.txt"])
    assert [p.check for p in found] == [
        {"type": "output_regex", "pattern": r"\A(?![\s\S]*Done\.)"},
        {"type": "output_contains", "text": "Not done yet."}]
    assert propose_rule_checks("Done.\n", None, "output", changed=["tmp.txt", "notes.md"]) == []


def test_a_json_file_that_does_not_parse_gets_json_valid_even_without_a_good_artifact() -> None:
    assert [p.check for p in propose_rule_checks('{"a": 1', None, "config.json")] == [
        {"type": "json_valid", "path": "config.json"}]


def test_two_long_logs_are_compared_in_linear_time() -> None:
    """Two logs of 20,000 lines each (a long run filed whole, a good run's log beside it): every line of one was
    searched through the whole other, 7 s of CPU here (44 s at 50,000 lines, the import waiting on it)."""
    failed = "".join(f"2026-11-20 10:00:{i % 60:02d} INFO step {i} ok\n" for i in range(20_000)) + "Agent: all passed\n"
    good = "".join(f"2026-11-21 11:00:{i % 60:02d} INFO step {i} done\n" for i in range(20_000)) + "Agent: 3 failed\n"
    start = time.process_time()
    found = propose_rule_checks(failed, good, "run.log")
    assert time.process_time() - start < 1.0
    assert [p.check for p in found] == [
        {"type": "not_contains", "path": "run.log", "text": "2026-11-20 10:00:40 INFO step 10000 ok"},
        {"type": "not_contains", "path": "run.log", "text": "2026-11-20 10:00:41 INFO step 10001 ok"},
        {"type": "contains", "path": "run.log", "text": "2026-11-21 11:00:40 INFO step 10000 done"},
        {"type": "contains", "path": "run.log", "text": "2026-11-21 11:00:41 INFO step 10001 done"}]


_LINE = st.sampled_from(["alpha", "alpha beta", "beta", " gamma ", "gamma delta", "x", "delta", ""])


@given(st.lists(_LINE, max_size=8), st.lists(_LINE, max_size=8))
def test_the_lines_proposed_are_those_the_line_by_line_search_found(failed, good) -> None:
    """The search that stops early finds what searching every line found: the longest lines not in the other
    text (a part of one of its lines counts as in it), in the same order."""
    text, other = "\n".join(failed), "\n".join(good)
    slow = sorted((line for line in _lines(text) if line not in other), key=len, reverse=True)[:MAX_PER_RULE]
    assert _only_in(text, other) == slow
