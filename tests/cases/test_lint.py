"""Rubric lint: each rule fires on its example and stays quiet on a sharp item."""

from __future__ import annotations

import pytest

from scarbook.cases.lint import format_hints, lint_case, lint_cases
from scarbook.models import Case, Check

SHARP = "the summary names the function that was renamed"


def judge(*items: str, artifact: str = "output") -> Check:
    return Check("llm_judge", {"rubric": list(items), "artifact": artifact})


def case(*checks: Check, case_id: str = "c") -> Case:
    return Case(id=case_id, task="t", checks=list(checks))


def with_rule(*items: str, artifact: str = "output") -> Case:
    # a rule check up front so the judge-only hint stays out of the way
    return case(Check("file_exists", {"path": "anything.txt"}), judge(*items, artifact=artifact))


def rules(hints) -> list[tuple[str, int | None, int | None]]:
    return [(h.rule, h.check_index, h.item_index) for h in hints]


def test_seed_story_rubric_is_flagged_vague_and_judge_only():
    hints = lint_case(case(judge("Evaluate whether this review output is good"), case_id="review-bug"))
    assert rules(hints) == [("vague-item", 0, 0), ("judge-only", None, None)]
    assert hints[0].message == ("'Evaluate whether this review output is good' has no observable criterion: "
                                "'good' is a judgement, not something to look for")


@pytest.mark.parametrize("item,term", [("is the output good", "good"), ("the code is high quality", "quality"),
                                        ("the reply sounds professional", "professional")])
def test_vague_items(item, term):
    hints = lint_case(with_rule(item))
    assert rules(hints) == [("vague-item", 1, 0)]
    assert f"{term!r} is a judgement" in hints[0].message


def test_judgement_word_with_an_observable_anchor_is_not_vague():
    # "correct" is anchored by "names line 12"; the "and" still joins two criteria
    assert [h.rule for h in lint_case(with_rule("the review is correct about the bug and names line 12"))] == ["joined-criteria"]
    assert rules(lint_case(with_rule("a good summary names the renamed function"))) == []


def test_sharp_judge_only_item_stays_quiet():
    assert lint_case(with_rule(SHARP)) == []
    assert lint_case(with_rule("the final answer does not claim anything that is false about tmp.txt")) == []
    assert lint_case(with_rule("the summary names the old and the new function name")) == []
    assert lint_case(with_rule("the count is between 3 and 5")) == []


def test_joined_criteria_suggests_the_split():
    hints = lint_case(with_rule("the tone is polite and the summary names the renamed function"))
    assert rules(hints) == [("joined-criteria", 1, 0)]
    assert hints[0].suggested_items == ["the tone is polite", "the summary names the renamed function"]
    assert hints[0].suggestion == "split it into: the tone is polite | the summary names the renamed function"


def test_joined_criteria_carries_the_subject_into_the_second_part():
    hints = lint_case(with_rule("the answer admits the failure and apologizes once"))
    assert hints[0].suggested_items == ["the answer admits the failure", "the answer apologizes once"]


@pytest.mark.parametrize(
    "item,artifact,expected",
    [
        ("tmp.txt contains exactly one line", "output", {"type": "line_count", "path": "tmp.txt", "equals": 1}),
        ("the notes have at most 3 lines", "notes.md", {"type": "line_count", "path": "notes.md", "max": 3}),
        ("report.md exists", "output", {"type": "file_exists", "path": "report.md"}),
        ("build.log was deleted", "output", {"type": "file_absent", "path": "build.log"}),
        ('the answer mentions "tiny-agent"', "output", {"type": "output_contains", "text": "tiny-agent"}),
        ('CHANGELOG.md contains the text "v2.0"', "output", {"type": "contains", "path": "CHANGELOG.md", "text": "v2.0"}),
        ('notes.txt does not contain "TODO"', "output", {"type": "not_contains", "path": "notes.txt", "text": "TODO"}),
        ("out.json is valid JSON", "output", {"type": "json_valid", "path": "out.json"}),
        ("the file parses as JSON", "data/out.json", {"type": "json_valid", "path": "data/out.json"}),
    ],
)
def test_rule_decidable_items_suggest_the_check(item, artifact, expected):
    hints = lint_case(with_rule(item, artifact=artifact))
    assert rules(hints) == [("rule-decidable", 1, 0)]
    assert hints[0].suggested_check == expected


def test_rule_decidable_item_already_covered_names_the_check():
    c = case(Check("line_count", {"path": "tmp.txt", "equals": 1}), judge("tmp.txt contains exactly one line", SHARP))
    hints = lint_case(c)
    assert rules(hints) == [("rule-decidable", 1, 0)]
    assert hints[0].message == "'tmp.txt contains exactly one line' is already decided by check 1 (line_count) for free"
    assert hints[0].suggested_check is None


def test_duplicate_items_across_judge_checks():
    c = case(Check("file_exists", {"path": "a.txt"}), judge(SHARP), judge("The summary names the function that was renamed."))
    hints = lint_case(c)
    assert rules(hints) == [("duplicate-item", 2, 0)]
    assert hints[0].message == "'The summary names the function that was renamed.' repeats check 2 item 1"


def test_judge_only_case():
    assert rules(lint_case(case(judge(SHARP)))) == [("judge-only", None, None)]
    assert lint_case(case(Check("file_exists", {"path": "a.txt"}))) == []


def test_format_hints():
    hints = lint_cases([case(judge("is the output good"), case_id="a"), with_rule(SHARP)])
    text = format_hints(hints)
    lines = text.splitlines()
    assert lines[0].startswith("a check 1 item 1 [vague-item] 'is the output good' has no observable criterion")
    assert lines[1].startswith("    -> say what a reader would see")
    assert lines[2].startswith("a [judge-only] every check of this case is an LLM judge")
    assert lines[-1] == "2 hints in 1 case (advice, not errors)"
    assert format_hints([]) == "no lint hints"


def test_design_example_case_only_hints_the_repeated_line_count():
    c = case(
        Check("file_exists", {"path": "tmp.txt"}),
        Check("contains", {"path": "tmp.txt", "text": "# tiny-agent"}),
        Check("line_count", {"path": "tmp.txt", "equals": 1}),
        Check("only_changed", {"paths": ["tmp.txt"]}),
        judge("tmp.txt contains exactly one line", "the final answer does not claim anything that is false about tmp.txt"),
        case_id="write-one-line",
    )
    assert rules(lint_case(c)) == [("rule-decidable", 4, 0)]


@pytest.mark.parametrize("item,check", [
    ("the agent calls the search tool before answering", {"type": "tool_called", "name": "search"}),
    ("it runs `read_file` before `write_file`", {"type": "tool_order", "names": ["read_file", "write_file"]}),
    ("the agent never calls Bash", {"type": "tool_not_called", "name": "Bash"}),
    ("uses at most 12 tool calls", {"type": "max_tool_calls", "n": 12}),
    ("fewer than 10 tool calls", {"type": "max_tool_calls", "n": 9}),
    ("finishes in no more than five turns", {"type": "max_turns", "n": 5}),
    ("it calls the `web_search` tool", {"type": "tool_called", "name": "web_search"}),
])
def test_items_about_what_the_agent_did_suggest_a_trajectory_check(item, check):
    [hint] = lint_case(with_rule(item))
    assert (hint.rule, hint.suggested_check) == ("trajectory-item", check)
    assert hint.message == f"{item!r} is about what the agent did, which the judge does not see (it grades the artifact)"
    shown = "{" + ", ".join(f"{k}: {v}" for k, v in check.items()) + "}"
    assert hint.suggestion == f"add {shown}: it decides this from the run's transcript, free"


def test_a_trajectory_item_already_checked_says_which_check_decides_it():
    c = case(Check("max_tool_calls", {"n": 12}), judge("uses at most 12 tool calls"))
    [hint] = lint_case(c)
    assert hint.suggestion == "drop it from the rubric: check 1 (max_tool_calls) decides it from the run's transcript"
    assert hint.suggested_check is None


def test_trajectory_checks_that_cannot_fail_or_say_little_are_flagged():
    c = case(Check("tool_called", {"name": "search", "min": 0}), Check("tool_order", {"names": ["search"]}),
             Check("tool_called", {"name": "search", "min": 0, "max": 2}))
    assert [(h.rule, h.check_index, h.message) for h in lint_case(c)] == [
        ("trajectory-vacuous", 0, "tool_called 'search' with min 0 and no max passes every run"),
        ("trajectory-vacuous", 1, "tool_order with one name only says 'search' was called"),
    ]


@pytest.mark.parametrize("item", ["the summary uses the word 'foo'", "never uses passive voice",
                                  "the review calls out the bug", "the function calls helper() twice",
                                  "the agent runs the tests before answering"])
def test_items_that_only_look_like_tool_use_get_no_trajectory_hint(item):
    assert [h.rule for h in lint_case(with_rule(item)) if h.rule == "trajectory-item"] == []


def test_the_judge_only_hint_names_the_trajectory_checks_too():
    [hint] = lint_case(case(judge(SHARP)))
    assert hint.suggestion == ("add a rule check that fails on the scar (file_exists, contains, line_count, json_valid, "
                               "only_changed) before the judge — or, when the scar is what the agent did, a trajectory "
                               "check (tool_not_called, max_tool_calls, no_writes_outside)")


def test_a_trajectory_check_where_the_agent_keeps_no_transcript_is_flagged():
    c = case(Check("file_exists", {"path": "a"}), Check("max_tool_calls", {"n": 3}))
    assert lint_case(c) == []  # the agent unknown (the default): nothing to say
    [hint] = lint_case(c, keeps_transcript=False)
    assert (hint.rule, hint.check_index) == ("needs-transcript", 1)
    assert hint.message == ("max_tool_calls reads each run's transcript, but the project's agent keeps none: the "
                            "session will refuse this case")
    assert hint.suggestion == ("turn on record: in scarbook.yaml, use a preset (claude-code, codex), or set "
                               "transcript: true under agent: if the agent writes $SCARBOOK_TRANSCRIPT itself")


def test_a_repeated_choice_that_spells_a_text_twice_is_flagged_and_a_delimited_nest_is_not(project) -> None:
    project.case("alt", "id: alt\ntask: t\nchecks:\n  - {type: output_regex, pattern: '^(a|aa)+$'}\n"
                        "  - {type: regex, path: out.txt, pattern: '^(\\d+\\.)+\\d+$'}\n")
    result = project.cli("lint")
    assert result.stdout == (
        f"alt check 1 [overlapping-alternatives] {project.cases_dir / 'alt' / 'case.yaml'}:4: output_regex pattern "
        "`^(a|aa)+$` repeats alternatives that can match the same text (`a|aa`: \"aa\" is one turn or two): on text "
        "that almost matches it can backtrack for seconds to forever, and the check fails after 2 s\n"
        "    -> rewrite the pattern so a text can match it only one way: no nested quantifiers, no alternatives that "
        "match the same text (e.g. `(\\w+\\s?)*` as `[\\w\\s]*`, `(a|aa)+` as `a+`)\n"
        "1 hint in 1 case (advice, not errors)\n")
    assert result.exit_code == 0


def test_a_pattern_with_nested_quantifiers_is_flagged_with_its_file_line_and_rewrite(project) -> None:
    project.case("slow", "id: slow\ntask: t\nchecks:\n  - {type: file_exists, path: out.txt}\n"
                         "  - {type: output_regex, pattern: '^(\\w+\\s?)*$'}\n"
                         "  - {type: regex, path: out.txt, pattern: '^[\\w\\s]*$'}\n")
    result = project.cli("lint")
    assert result.stdout == (
        f"slow check 2 [nested-quantifier] {project.cases_dir / 'slow' / 'case.yaml'}:5: output_regex pattern "
        "`^(\\w+\\s?)*$` nests quantifiers (a repeated group holds a repeat): on text that almost matches it can "
        "backtrack for seconds to forever, and the check fails after 2 s\n"
        "    -> rewrite the pattern so a text can match it only one way: no nested quantifiers, no alternatives that "
        "match the same text (e.g. `(\\w+\\s?)*` as `[\\w\\s]*`, `(a|aa)+` as `a+`)\n"
        "1 hint in 1 case (advice, not errors)\n")
    assert result.exit_code == 0


def test_a_choice_re_reads_as_one_set_is_flagged_as_overlapping_alternatives(project) -> None:
    """`([a-z]|[m-p])+`: re's parser merges the branches into one set, and lint said nothing; the matcher tries
    both branches for each of m..p (tests/checks/test_patterns.py measures it run away)."""
    project.case("alt", "id: alt\ntask: t\nchecks:\n  - {type: output_regex, pattern: '^([a-z]|[m-p])+$'}\n"
                        "  - {type: output_regex, pattern: '^[a-zm-p]+$'}\n")
    result = project.cli("lint")
    assert result.stdout.splitlines()[0] == (
        f"alt check 1 [overlapping-alternatives] {project.cases_dir / 'alt' / 'case.yaml'}:4: output_regex pattern "
        "`^([a-z]|[m-p])+$` repeats alternatives that can match the same text (`a|aa`: \"aa\" is one turn or two): on "
        "text that almost matches it can backtrack for seconds to forever, and the check fails after 2 s")
    assert result.stdout.endswith("1 hint in 1 case (advice, not errors)\n") and result.exit_code == 0


def test_a_choice_the_matcher_merges_into_one_set_is_not_flagged_and_real_overlaps_still_are(project) -> None:
    """`(a|[ab])+` was flagged as overlapping alternatives, yet the matcher (regex) merges adjacent branches of one
    plain character into one set and matches it without choosing (tests/checks/test_patterns.py measures it end at
    once); a lone range (`[a-c]`), a branch said twice (`a|a`) and a nested repeat (`(a+)+`) still run away."""
    project.case("fast", "id: fast\ntask: t\nchecks:\n  - {type: output_regex, pattern: '^(a|[ab])+$'}\n"
                         "  - {type: output_regex, pattern: '^(\\d|[0-9a-f])+$'}\n"
                         "  - {type: output_regex, pattern: '^(?:ab|a[bc])+$'}\n")
    project.case("slow", "id: slow\ntask: t\nchecks:\n  - {type: output_regex, pattern: '^(a|a)+$'}\n"
                         "  - {type: output_regex, pattern: '^(a+)+$'}\n"
                         "  - {type: output_regex, pattern: '^(a|[a-c])+$'}\n")
    result = project.cli("lint")
    flagged = [line.split()[:4] for line in result.stdout.splitlines() if not line.startswith(" ")][:-1]
    assert flagged == [["slow", "check", "1", "[overlapping-alternatives]"], ["slow", "check", "2", "[nested-quantifier]"],
                       ["slow", "check", "3", "[overlapping-alternatives]"]], result.stdout
    assert result.stdout.endswith("3 hints in 1 case (advice, not errors)\n") and result.exit_code == 0
