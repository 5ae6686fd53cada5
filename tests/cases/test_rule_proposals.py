"""Issue 35.1's offline proposer: rule checks from the scar's artifacts alone, each with why."""

from __future__ import annotations

from scarbook.cases.rule_proposals import propose_rule_checks


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


def test_an_answer_artifact_gets_output_checks_and_no_file_may_change() -> None:
    found = propose_rule_checks("Done.\n", "Not done yet.\n", "output", changed=["tmp.txt"])
    assert [p.check for p in found] == [
        {"type": "output_regex", "pattern": r"\A(?![\s\S]*Done\.)"},
        {"type": "output_contains", "text": "Not done yet."},
        {"type": "only_changed", "paths": []}]


def test_a_json_file_that_does_not_parse_gets_json_valid_even_without_a_good_artifact() -> None:
    assert [p.check for p in propose_rule_checks('{"a": 1', None, "config.json")] == [
        {"type": "json_valid", "path": "config.json"}]
