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
import warnings
from collections.abc import Iterator
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


def syntax_error(pattern: str, flags: int = re.MULTILINE) -> str | None:
    """Why the pattern is not one scarbook can match as Python's `re` reads it (re's own words), or None.
    A POSIX class in a set, `[[:alpha:]]` (grep's syntax), is refused: `re` reads it as the characters `[:alph`
    and a `]` (with only a FutureWarning), the `regex` package as the class, and which one the author meant
    cannot be told — so it is said, with the rewrite."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "Possible nested set": said below, in words
            re.compile(pattern, flags)
    except re.error as exc:
        return str(exc)
    for i, ch, in_set in unescaped(pattern):
        if in_set and ch == "[" and (m := _POSIX.match(pattern, i)):
            name = m.group(2)
            return (f"`{m.group(0)}` is a POSIX class (grep's syntax), which Python's re does not have (re reads "
                    f"its [, : and letters as characters of the set): write {_POSIX_IN_RE[name]} for [{m.group(0)}], "
                    "and \\[ for a [ in a set")
    return None


_POSIX_IN_RE = {"alnum": "`[^\\W_]`", "alpha": "`[^\\W\\d_]`", "ascii": "`[\\x00-\\x7f]`", "blank": "`[ \\t]`",
                "cntrl": "`[\\x00-\\x1f\\x7f]`", "digit": "`\\d`", "graph": "`[\\x21-\\x7e]`",
                "lower": "`[a-z]`", "print": "`[\\x20-\\x7e]`", "punct": "`[!-/:-@[-`{-~]`", "space": "`\\s`",
                "upper": "`[A-Z]`", "word": "`\\w`", "xdigit": "`[0-9A-Fa-f]`"}
_POSIX = re.compile(r"\[:(\^?)(" + "|".join(_POSIX_IN_RE) + r"):\]")
# regex's fuzzy constraints, `x{e<=1}` (x or one edit of it), are text in re: `{e<=1}` is matched as written
_FUZZY = re.compile(r"\{(?:\d+<=?)?[eids](?:<=?\d+)?(?:,(?:\d+<=?)?[eids](?:<=?\d+)?)*(?::[^}]*)?\}"
                    r"|\{\d*[eids](?:\+\d*[eids])*<=?\d+\}")


def unescaped(pattern: str) -> Iterator[tuple[int, str, bool]]:
    """Each character the pattern does not escape, with whether it stands in a set (`[...]`)."""
    i, in_set, first = 0, False, -1
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        yield i, ch, in_set
        if in_set and ch == "]" and i > first:
            in_set = False
        elif not in_set and ch == "[":
            in_set, first = True, i + 1 + (pattern[i + 1:i + 2] == "^")
        i += 1


def as_re_reads_it(pattern: str) -> str:
    """The pattern for the `regex` package, so that it matches what `re` would: regex's fuzzy braces escaped."""
    cuts = [i for i, ch, in_set in unescaped(pattern) if ch == "{" and not in_set and _FUZZY.match(pattern, i)]
    for i in reversed(cuts):
        pattern = pattern[:i] + "\\" + pattern[i:]
    return pattern


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    """The pattern compiled once per process (regex's own cache costs ~8 µs a look-up: more than a search)."""
    import regex  # (21 ms to import: loaded by the first match, not by reading cases or lint)

    if (why := syntax_error(pattern)) is not None:
        raise re.error(why)
    try:
        return regex.compile(as_re_reads_it(pattern), regex.MULTILINE | regex.VERSION0)
    except regex.error as exc:
        raise re.error(str(exc)) from None
