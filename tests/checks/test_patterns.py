"""A case's pattern on agent-written text cannot freeze the session: the match lets other threads run and
ends at its time limit as a failed check (the case's fault), never an error that would leave the pass rate's
denominator. Real workspaces, real threads, the real event loop."""

from __future__ import annotations

import asyncio
import re
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scarbook.checks import CheckContext, run_check
from scarbook.checks.backtrack import Runaway, runaway
from scarbook.checks.patterns import PatternTimedOut, search
from scarbook.models import Case, CauseKind, Check, CheckStatus

NESTED = r"^(\w+\s?)*$"  # `re` backtracks on HOSTILE for hours; regex's guards fail it at once
LAZY = r"^(\w+?\s?)*$"  # ... and a lazy inner repeat backtracks in both, past any limit
HOSTILE = "a" * 40 + "!"  # 2**39 ways to split the a's among the group's repeats, none followed by the end


def ctx_for(ws: Path, output: str = "", timeout_s: float = 0.3) -> CheckContext:
    return CheckContext(case=Case(id="c", task="t"), workspace=ws, output=output, regex_timeout_s=timeout_s)


FIX = ("rewrite the pattern so a text can match it only one way: no nested quantifiers, no alternatives that match "
       "the same text (e.g. `(\\w+\\s?)*` as `[\\w\\s]*`, `(a|aa)+` as `a+`)")


@pytest.mark.parametrize("check,where", [
    (Check("regex", {"path": "out.txt", "pattern": LAZY}), "out.txt"),
    (Check("output_regex", {"pattern": LAZY}), "the output"),
    (Check("output_regex", {"pattern": r"^(\w|\w\w)+$"}), "the output"),
])
async def test_a_runaway_match_fails_the_check_at_its_time_limit_as_the_cases_fault(tmp_path: Path, check: Check,
                                                                                    where: str) -> None:
    (tmp_path / "out.txt").write_text(HOSTILE)
    start = time.monotonic()
    result = await run_check(check, ctx_for(tmp_path, output=HOSTILE))
    assert time.monotonic() - start < 5  # (before: re matched for hours)
    assert result.status == CheckStatus.FAIL
    assert result.detail == (f"{check.type} check `{check.params['pattern']}` did not finish within 0.3 s on {where} "
                             f"(catastrophic backtracking): {FIX}")
    assert result.cause is not None and (result.cause.kind, result.cause.rule) == (CauseKind.CASE, "check-timed-out")


@pytest.mark.parametrize("ctype", ["regex", "output_regex"])
async def test_a_nested_pattern_regex_guards_fails_at_once_as_a_plain_mismatch(tmp_path: Path, ctype: str) -> None:
    (tmp_path / "out.txt").write_text(HOSTILE)
    check = Check(ctype, {"path": "out.txt", "pattern": NESTED} if ctype == "regex" else {"pattern": NESTED})
    result = await run_check(check, ctx_for(tmp_path, output=HOSTILE))
    where = "out.txt" if ctype == "regex" else "output"
    assert (result.status, result.detail) == (CheckStatus.FAIL, f"{where} does not match /^(\\w+\\s?)*$/")
    assert result.duration_s < 0.3


async def test_the_event_loop_runs_while_a_pattern_backtracks(tmp_path: Path) -> None:
    """The other runs, the live screen and Ctrl-C live on the loop: `re` held the GIL for the whole match, so
    the loop stood still until it ended."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.05)
    before = ticks
    result = await run_check(Check("output_regex", {"pattern": LAZY}), ctx_for(tmp_path, HOSTILE, timeout_s=1))
    during = ticks - before
    ticker.cancel()
    assert result.status == CheckStatus.FAIL and result.cause is not None
    assert during >= 20, f"the loop ticked {during} times in the match's second or more"


NEST, ALT = Runaway.NESTED, Runaway.ALTERNATIVES


@pytest.mark.parametrize("pattern,way", [
    (NESTED, NEST),
    (LAZY, NEST),
    (r"(a+)+b", NEST),
    (r"^(?:\d+,?)*$", NEST),
    (r"(x|(ab)*)+", NEST),
    (r"(?=(a*)*)", NEST),
    (r"(\d+\.\d+)+", NEST),  # the last \d+ and the next turn's first meet with nothing between them
    (r"(a{2,3})+", NEST),
    (r"\w+\s?", None),
    (r"^[\w\s]*$", None),
    (r"(ab)+c", None),
    (r"(a+)?", None),
    (r"(\w++\s?)*", None),  # possessive: it never gives back, so it cannot backtrack
    (r"contains (one|1) line", None),
    (r"(", None),  # invalid: said by the case's validation, not here
    # each turn of the inner repeat must end on a character it cannot match: one way to split any text
    (r"(\d+\.)+", None),
    (r"^(\w+\.)+\w+$", None),
    (r"(\w+\s)*", None),
    (r"(\.\d+)+", None),
    (r"(a+b+)*", None),
    (r"(\s*,\s*\w+)*", None),
    (r"((\d+)\.)+", None),
    # a repeated choice that spells one text in two ways
    (r"^(a|aa)+$", ALT),
    (r"(a|a)+", ALT),
    (r"^(\w|\w\w)+$", ALT),
    (r"(aa?)+", ALT),
    (r"^(?:ab|a)+c?$", None),  # "ab" cannot be two turns: no turn starts with b
    (r"(\w|\d)+", None),  # a choice of categories: regex matches it without backtracking (measured below)
    # re's parser merges one-character branches into one set, hiding them; regex tries each branch in turn
    (r"^([a-z]|[m-p])+$", ALT),
    (r"(?:m|[a-z])*", ALT),
    (r"(\d|[0-5])+", ALT),
    (r"([a-z]|[0-9])+", None),  # no character is both: one way only
    (r"[a-zm-p]+", None),  # one set written as one: nothing to choose
    (r"((a|b)+c)*", None),  # the c ends each turn of the inner repeat
])
def test_patterns_that_can_run_away_are_spotted(pattern: str, way: Runaway | None) -> None:
    assert runaway(pattern) == way


def test_a_choice_re_merged_into_one_set_is_flagged_and_does_run_away() -> None:
    """`([a-z]|[m-p])+`: `re` reads the two branches as the one set [a-zm-p] and the reading saw no choice; the
    matcher (regex) keeps the branches and tries both for each m, 2**40 ways on this text."""
    pattern = r"^([a-z]|[m-p])+$"
    assert runaway(pattern) == ALT
    start = time.monotonic()
    with pytest.raises(PatternTimedOut):
        search(pattern, "m" * 40 + "!", 0.5)
    assert time.monotonic() - start >= 0.5
    start = time.monotonic()  # its one-set twin, and a choice of categories, end at once on the same kind of text
    assert search(r"^[a-zm-p]+$", "m" * 40 + "!", 10.0) is None
    assert search(r"^(\w|\d)+$", "1" * 40 + "!", 10.0) is None
    assert time.monotonic() - start < 5.0


@pytest.mark.parametrize("pattern,text", [
    (r"^(\d+\.)+$", "1." * 5000 + "x"),
    (r"^(\s*,\s*\w+)*$", ", ab" * 5000 + "!"),
    (r"^(a+b+)*$", "ab" * 5000 + "a!"),
])
def test_what_is_not_flagged_does_not_run_away(pattern: str, text: str) -> None:
    """The patterns the reading lets through end at once on the text that makes their nested twins run away."""
    assert runaway(pattern) is None
    start = time.monotonic()
    assert search(pattern, text, 10.0) is None
    assert time.monotonic() - start < 5.0


# Patterns as cases write them (README, the bundled cases, rule_proposals, the tests): the matcher must find
# what `re` finds, at the same place, on any text.
WRITTEN = [r"contains (one|1) line", r"^A \w+ AI", r"^v\d+$", r"\A(?![\s\S]*secret)", r"(?i)done\b.*\bone line",
           r"^\s*$", r"\d{3,}", r"(?P<n>\d+) lines?", r"[^a-z]+$", r"a.*?b", r"^(?:ab|a)+c?$", r"\bx\B", r"(a)(?=b)\1?",
           r"[\[\]-]", r"\Z", r"^$", r"[\u00e9\w]+"]
TEXT = st.text(alphabet=st.sampled_from("ab xyzAB1 23\n-[]édone secretlines"), max_size=40)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(text=TEXT)
def test_the_matcher_finds_what_re_finds(text: str) -> None:
    for pattern in WRITTEN:
        old = re.search(pattern, text, re.MULTILINE)
        new = search(pattern, text, 2.0)
        assert (new and (new.span(), new.group(0))) == (old and (old.span(), old.group(0))), pattern


@pytest.mark.parametrize("pattern,text,found", [
    (r'print\(f"{e}"\)', 'print(f"{x}")', None),  # regex read {e} as "one edit of the quote": it matched
    (r'print\(f"{e}"\)', 'print(f"{e}")', 'print(f"{e}")'),
    (r"colou?r{e<=1}", "colouX", None),
    (r"colou?r{e<=1}", "color{e<=1}", "color{e<=1}"),
    (r"x{1<=e<=2}|y{i<=1,d<=1}", "xq y", None),
    (r"[{e}]+", "e}{", "e}{"),  # a brace in a set is a brace in both
    (r"a{2}", "aa", "aa"),
])
def test_braces_re_reads_as_text_are_text_to_the_matcher(pattern: str, text: str, found: str | None) -> None:
    """The `regex` package reads `{e<=1}` after an item as fuzzy matching; case.yaml's patterns are `re`'s, where
    it is the text `{e<=1}`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = re.search(pattern, text, re.MULTILINE)
    assert (old and old.group(0)) == found
    new = search(pattern, text, 2.0)
    assert (new and new.group(0)) == found


@pytest.mark.parametrize("pattern,text", [
    (r"^(a|[ab])+$", "a" * 40 + "!"),
    (r"^(\d|[0-9a-f])+$", "1" * 40 + "!"),
    (r"^(x|y|[xy])+$", "x" * 40 + "!"),
    (r"^(a|a|b)+$", "a" * 40 + "!"),
    (r"^(?:ab|a[bc])+$", "ab" * 20 + "!"),
])
def test_a_choice_the_matcher_merges_is_not_flagged_and_ends_at_once(pattern: str, text: str) -> None:
    """regex moves out what every branch starts with and merges adjacent branches of one plain character (a
    character, a set, a category) into one set: these overlap on paper, yet the matcher never chooses (lint
    flagged them as overlapping alternatives)."""
    assert runaway(pattern) is None
    start = time.monotonic()
    assert search(pattern, text, 10.0) is None
    assert time.monotonic() - start < 5.0


@pytest.mark.parametrize("pattern,text", [
    (r"^(a|a)+$", "a" * 40 + "!"),  # the same branch twice: regex moves the a out and keeps two empty branches
    (r"^([ab]|[ab])+$", "a" * 40 + "!"),
    (r"^(a|[a-c])+$", "a" * 40 + "!"),  # a lone range is not merged: the matcher tries both for each a
    (r"^(\w|[^\W])+$", "a" * 40 + "!"),  # [^\W] is \w to regex: the same branch twice
    # `.` and a lone negated range are kept as branches too: these seemed to end at once on `(.|a)+b` and
    # `(x|[^a-c])+b`, where regex fails at once on the required `b` missing from the text; with nothing required
    # they run away (measured: 2**n, n = 10..24)
    (r"^(?:.|a)+\d", "a" * 40),
    (r"^(x|[^a-c])+$", "x" * 40 + "a"),
])
def test_a_choice_the_matcher_keeps_is_flagged_and_does_run_away(pattern: str, text: str) -> None:
    assert runaway(pattern) == ALT
    start = time.monotonic()
    with pytest.raises(PatternTimedOut):
        search(pattern, text, 0.5)
    assert time.monotonic() - start >= 0.5
