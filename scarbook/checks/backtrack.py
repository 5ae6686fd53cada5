"""Whether a case's pattern can backtrack without end: advice for lint's `nested-quantifier` and
`overlapping-alternatives` hints (a match that does run away is stopped by `patterns.search`'s time limit).

A backtracking matcher runs away when a repeat can split the same text among its turns in many ways:
- a repeat inside a repeated group, `^(\\w+\\s?)*$`: "aaaa" is one turn of `\\w+` or four, or any split in
  between. Unless each turn of the inner repeat must end on a character it cannot match itself — `(\\d+\\.)+`,
  `(\\w+\\s)*`: the `.` or the space fixes where a turn ends, so there is one split only;
- a repeated choice whose branches spell the same text, `(a|aa)+`: "aa" is `aa` or `a`,`a`.

Read from the parse tree `re` compiles with (private: when it moves, nothing is said — this only feeds advice).
That parser merges a choice of one-character branches into one set (`([a-z]|[m-p])+` reads as `[a-zm-p]+`), while
the matcher, the `regex` package, keeps the branches: the pattern is read with an empty group, `(?-i:)`, after
each `|`, which keeps every branch a branch and matches the same. Then the choice is read as regex compiles it: what
every branch starts with is moved out (`a|a` is `a` then two empty branches: still two ways), and each run of
adjacent branches of one plain character — a character, a set, a category, not a lone range `[a-c]` nor `.` — is
merged into one set, which matches without choosing (`a|[ab]`, `\\w|\\d`): only the choices regex keeps can run away
(tests/checks/test_patterns.py measures both kinds).
Characters are compared on a sample (ASCII and a few letters, digits and spaces beyond it), so two classes that
share no sampled character are taken as disjoint.
"""

from __future__ import annotations

import enum
import importlib
import re
from typing import Any

from scarbook.checks.patterns import unescaped


class Runaway(enum.StrEnum):
    NESTED = "nested-quantifier"
    ALTERNATIVES = "overlapping-alternatives"


_MAX_SPELLINGS = 64
_SAMPLE = [chr(c) for c in range(128)] + list("\u00a0\u00e9\u00df\u03a9\u0661\u2028\u3000\u4e2d\U0001f600")
_CATEGORY = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
             "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}


def runaway(pattern: str) -> Runaway | None:
    """Which way the pattern can backtrack without end, or None (also for an invalid pattern: said elsewhere)."""
    try:
        parser = importlib.import_module("re._parser")
        constants = importlib.import_module("re._constants")
        parser.parse(pattern, re.MULTILINE)  # (what re refuses is refused here, not read with the groups added)
        parsed = parser.parse(_branches_kept(pattern), re.MULTILINE)
        return _Reader(constants, bool(parsed.state.flags & re.IGNORECASE)).seq(list(parsed), inside_repeat=False)
    except Exception:  # noqa: BLE001 — an invalid pattern is said elsewhere; a moved parser gives no advice
        return None


def _branches_kept(pattern: str) -> str:
    """The pattern with an empty group after each `|` that is an alternation's (`(?-i:)`, a group of flags: re's parser
    unpacks an empty `(?:)`): the parser then merges no branches into a set, nor moves a prefix they share out."""
    for i in reversed([i for i, ch, in_set in unescaped(pattern) if ch == "|" and not in_set]):
        pattern = pattern[:i + 1] + "(?-i:)" + pattern[i + 1:]
    return pattern


class _Reader:
    def __init__(self, c: Any, ignore_case: bool) -> None:
        self.c = c
        self.ignore_case = ignore_case
        # (a possessive repeat, `\w++`, never gives back what it took: it cannot backtrack, so it is not counted)
        self.repeats = (c.MAX_REPEAT, c.MIN_REPEAT)

    def seq(self, items: list[Any], inside_repeat: bool) -> Runaway | None:
        for op, av in items:
            if op in self.repeats and av[1] > 1:
                found = self.repeated(list(av[2]), inside_repeat)
            else:
                found = next((f for sub in _parts(av) if (f := self.seq(list(sub), inside_repeat))), None)
            if found:
                return found
        return None

    def repeated(self, body: list[Any], inside_repeat: bool) -> Runaway | None:
        """A repeat's body: a repeat in it that no character of its own can end is a runaway, as is a body that
        spells the same text in two ways (`a|aa`, `aa?`)."""
        if inside_repeat:
            return Runaway.NESTED
        body = self._flat(body)
        for i, (op, av) in enumerate(body):
            if op in self.repeats and av[1] > 1:
                if not self._delimited(body, i) or self.seq(list(av[2]), inside_repeat=True):
                    return Runaway.NESTED
            elif found := self.seq([(op, av)], inside_repeat=True):
                return found
        spellings = self._spellings(body)
        if spellings is not None and _ambiguous(spellings):
            return Runaway.ALTERNATIVES
        return None

    def _flat(self, items: list[Any]) -> list[Any]:
        """The items with their groups opened: a group matches as its items in a row (captures change nothing)."""
        out = []
        for op, av in items:
            if op == self.c.SUBPATTERN:
                out.extend(self._flat(list(av[-1])))
            else:
                out.append((op, av))
        return out

    def _delimited(self, body: list[Any], i: int) -> bool:
        """Whether the repeat at body[i] matches one character class and what follows it (round to the body's
        start: the next turn) must show a character it cannot match before it could go on: `(\\d+\\.)+`,
        `(\\s*,\\s*\\w+)*`, `(a+b+)*`; not `(\\w+\\s?)*`, where nothing must come between two turns."""
        _, av = body[i]
        mine = self._chars(self._flat(list(av[2])))
        if mine is None:
            return False
        for j in range(i + 1, i + len(body)):
            op, av = body[j % len(body)]
            if op == self.c.AT:
                continue
            optional = op in self.repeats and av[0] == 0
            one = self._flat(list(av[2])) if op in self.repeats else [(op, av)]
            theirs = self._chars(one)
            if theirs is None or theirs & mine:
                return False
            if not optional:
                return True
        return False

    def _spellings(self, items: list[Any]) -> list[list[frozenset[str]]] | None:
        """Every way the items can spell a text, one character class a character (`a|aa` -> [a], [a, a]); None
        when they hold a repeat of more than one, or more than a few dozen ways."""
        ways: list[list[frozenset[str]]] = [[]]
        for op, av in items:
            if op == self.c.AT:
                continue  # an anchor spells nothing
            if op == self.c.SUBPATTERN:
                options = self._spellings(list(av[-1]))
            elif op == self.c.BRANCH:
                options = self._choice(av[1])
            elif op in self.repeats and av[1] <= 1:
                inner = self._spellings(list(av[2]))
                options = None if inner is None else ([[]] if av[0] == 0 else []) + inner
            else:
                chars = self._chars([(op, av)])
                options = None if chars is None else [[chars]]
            if options is None or len(ways) * len(options) > _MAX_SPELLINGS:
                return None
            ways = [w + o for w in ways for o in options]
        return ways

    def _choice(self, branches: list[Any]) -> list[list[frozenset[str]]] | None:
        """The ways a choice spells a text, as the matcher keeps it. regex moves out what every branch starts with
        (`ab|a[bc]` is `a` then `b|[bc]`; `a|a` is `a` then a choice of two empty branches: two ways still), then
        merges each run of adjacent branches of one plain character into one set, which matches without choosing
        (`a|[ab]`, `\\w|\\d`: one way)."""
        flats = [self._flat(list(b)) for b in branches]
        keys = [[self._key(item) for item in f] for f in flats]
        n = 0
        while all(len(k) > n and k[n] == keys[0][n] for k in keys):
            n += 1
        shared = self._spellings(flats[0][:n])
        rest = self._merged([f[n:] for f in flats])
        if shared is None or rest is None or len(shared) * len(rest) > _MAX_SPELLINGS:
            return None
        return [s + r for s in shared for r in rest]

    def _merged(self, flats: list[list[Any]]) -> list[list[frozenset[str]]] | None:
        """The ways of branches whose adjacent plain characters are one set, as regex merges them."""
        ways: list[list[frozenset[str]]] = []
        run: list[frozenset[str]] = []
        for flat in flats:
            chars = self._chars(flat) if self._plain(flat) else None
            if chars is not None:
                run.append(chars)
                continue
            if run:
                ways.append([frozenset().union(*run)])
                run = []
            spelled = self._spellings(flat)
            if spelled is None:
                return None
            ways.extend(spelled)
        if run:
            ways.append([frozenset().union(*run)])
        return ways

    def _key(self, item: Any) -> Any:
        """An item as regex compares it when it moves a shared start out of a choice: `[^\\W]` is `\\w`."""
        op, av = item
        if op == self.c.IN and len(av) == 2 and av[0][0] == self.c.NEGATE and av[1][0] == self.c.CATEGORY \
                and "_NOT_" in str(av[1][1]):
            return op, [(self.c.CATEGORY, getattr(self.c, str(av[1][1]).replace("_NOT_", "_")))]
        return item

    def _plain(self, items: list[Any]) -> bool:
        """One item regex merges with its plain neighbours into a set: a character (`a`, `[^a]`), a set of
        characters or categories (`[ab]`, `\\w`, `[0-9a-f]`); not a lone range (`[a-c]`, `[^a-c]`) nor `.`."""
        if len(items) != 1:
            return False
        op, av = items[0]
        if op in (self.c.LITERAL, self.c.NOT_LITERAL):
            return True
        if op != self.c.IN:
            return False
        members = [m for m in av if m[0] != self.c.NEGATE]
        return not (len(members) == 1 and members[0][0] == self.c.RANGE)

    def _chars(self, items: list[Any]) -> frozenset[str] | None:
        """The sampled characters one single-character item matches; None for anything longer or optional."""
        if len(items) != 1:
            return None
        op, av = items[0]
        c = self.c
        if op == c.LITERAL:
            return frozenset(ch for ch in _SAMPLE if self._same(ch, chr(av)))
        if op == c.NOT_LITERAL:
            return frozenset(ch for ch in _SAMPLE if not self._same(ch, chr(av)))
        if op == c.ANY:
            return frozenset(ch for ch in _SAMPLE if ch != "\n")
        if op == c.IN:
            return self._set(av)
        if op == c.BRANCH:  # a choice of single characters is one character too (`(a|b)+c`'s repeat ends on c)
            sets = [self._chars(self._flat(list(b))) for b in av[1]]
            return None if any(x is None for x in sets) else frozenset().union(*(x for x in sets if x is not None))
        return None

    def _set(self, members: list[Any]) -> frozenset[str] | None:
        c = self.c
        negate = bool(members) and members[0][0] == c.NEGATE
        members = members[1:] if negate else members
        if any(op not in (c.LITERAL, c.RANGE) and not (op == c.CATEGORY and str(av) in _CATEGORY)
               for op, av in members):
            return None
        return frozenset(ch for ch in _SAMPLE if any(self._member(ch, op, av) for op, av in members) != negate)

    def _member(self, ch: str, op: Any, av: Any) -> bool:
        if op == self.c.LITERAL:
            return self._same(ch, chr(av))
        if op == self.c.RANGE:
            return any(av[0] <= ord(x) <= av[1] for x in ({ch, ch.lower(), ch.upper()} if self.ignore_case else {ch}))
        return re.match(_CATEGORY[str(av)], ch) is not None

    def _same(self, ch: str, literal: str) -> bool:
        return ch == literal or (self.ignore_case and ch.lower() == literal.lower())


def _ambiguous(spellings: list[list[frozenset[str]]]) -> bool:
    """Whether one text has two spellings: two ways of one length that share a text (`a|a`, `\\w|\\w`), or
    a way that shorter ways, one turn after another, spell too (`aa` as `a`,`a`)."""
    ways = [w for w in spellings if w]
    for i, word in enumerate(ways):
        if any(len(other) == len(word) and _overlap(word, other) for other in ways[i + 1:]):
            return True
        reachable = {0}
        for start in range(len(word)):
            if start in reachable:
                reachable |= {start + len(o) for o in ways
                              if len(o) < len(word) and start + len(o) <= len(word)
                              and _overlap(word[start:start + len(o)], o)}
        if len(word) in reachable:
            return True
    return False


def _overlap(a: list[frozenset[str]], b: list[frozenset[str]]) -> bool:
    return all(x & y for x, y in zip(a, b, strict=True))


def _parts(av: Any) -> list[Any]:
    """The sub-patterns an item holds (a group's body, an alternation's branches, a lookaround's body)."""
    if hasattr(av, "data"):
        return [av]
    if isinstance(av, (tuple, list)):
        return [part for x in av for part in _parts(x)]
    return []
