"""A case's regular expression on agent-written text, bounded: the `regex` and `output_regex` checks match
here (lint's advice on patterns that can run away is backtrack.py's).

Python's `re` holds the GIL for the whole match and cannot be stopped, so a pattern such as `^(\\w+\\s?)*$`
on text the agent chose backtracks for seconds to forever while every other run, the event loop, the live
screen and Ctrl-C wait. The `regex` package (mrab-regex; its default VERSION0 reads patterns as `re` does)
matches with a time limit and lets go of the GIL while it matches (`concurrent=True`), so the other runs
go on and a runaway match ends at its time limit (`spec.REGEX_TIMEOUT_S`; its clock is read now and then,
so a match may run a second past it). Its guards end many such patterns at once (`^(\\w+\\s?)*$` fails
"aaa…!" in microseconds), not all: a bounded or lazy repeat (`(\\w+?\\s?)*`), or alternatives that match
the same text (`(a|aa)+`), still backtrack to the limit.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# How to write a pattern that cannot backtrack without end: said by a check that timed out, and by lint.
REWRITE = ("rewrite the pattern so a text can match it only one way: no nested quantifiers, no alternatives that "
           "match the same text (e.g. `(\\w+\\s?)*` as `[\\w\\s]*`, `(a|aa)+` as `a+`)")


class PatternTimedOut(Exception):
    """The match did not end within its time limit (catastrophic backtracking)."""


def search(pattern: str, text: str, timeout_s: float) -> Any:
    """`re.search(pattern, text, re.MULTILINE)` that gives up after `timeout_s` (PatternTimedOut) and lets other
    threads run meanwhile. A pattern `re` refuses raises its `re.error` (case.yaml's patterns are `re`'s syntax,
    and its words say what is wrong); one only `regex` refuses raises `re.error` with regex's words."""
    try:
        return _compiled(pattern).search(text, concurrent=True, timeout=timeout_s)
    except TimeoutError:
        raise PatternTimedOut(pattern) from None


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    """The pattern compiled once per process (regex's own cache costs ~8 µs a look-up: more than a search)."""
    import regex  # (21 ms to import: loaded by the first match, not by reading cases or lint)

    re.compile(pattern, re.MULTILINE)
    try:
        return regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except regex.error as exc:
        raise re.error(str(exc)) from None
