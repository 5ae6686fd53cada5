"""The stderr/transcript patterns that name a cause: the table and the matching of a text against it.

The patterns are data: the built-in ones below, and a project's own in scarbook.yaml (`causes: {infra: [regex,
...], case: [...]}`, validated by scarbook.config), which are tried first. They are matched line by line against
the tail of the agent's stderr and of its transcript (TAIL_BYTES); the evidence is the matching line. Where a
pattern's match decides a run's cause is the rules' (run/cause_matching.py), in their order (run/causes.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scarbook.checks.patterns import PatternTimedOut, search
from scarbook.checks.spec import REGEX_TIMEOUT_S
from scarbook.models import CauseKind

TAIL_BYTES = 16_384  # how much of the end of stderr / the transcript the patterns look at


@dataclass(frozen=True)
class Pattern:
    """One stderr/transcript pattern: a line matching `regex` puts the run in `kind`, named `rule`."""

    kind: CauseKind
    rule: str
    regex: str


# Written for the lines programs really print: the Anthropic/OpenAI SDKs ("Error code: 529 -
# {'type': 'error', 'error': {'type': 'overloaded_error'...", "RateLimitError", "429 Too Many
# Requests"), curl/HTTP clients ("HTTP 503", "status code 502"), the kernel and libc.
_HTTP = r"(?:HTTP(?:/\d(?:\.\d)?)?|[Ss]tatus(?:[ _]?code)?|[Ee]rror[ _]code|code|returned error)[\s:=]*"
BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    Pattern(CauseKind.INFRA, "api-overloaded", r"(?i)\boverloaded(?:_error)?\b|" + _HTTP + r"529\b"),
    Pattern(CauseKind.INFRA, "api-rate-limited", r"(?i)\brate[ _-]?limit(?:ed|_error)?\b|RateLimitError|"
                                         r"\b429 Too Many Requests\b|" + _HTTP + r"429\b"),
    Pattern(CauseKind.INFRA, "api-server-error", r"(?i)InternalServerError|\b50[0234] (?:Internal Server Error|"
                                         r"Bad Gateway|Service Unavailable|Gateway Time-?out)\b|"
                                         + _HTTP + r"5\d\d\b|\bapi_error\b"),
    Pattern(CauseKind.INFRA, "out-of-memory", r"\bMemoryError\b|(?i:\bout of memory\b)|Cannot allocate memory|"
                                      r"std::bad_alloc|\bOOM[- ]?kill"),
    Pattern(CauseKind.INFRA, "disk-full", r"No space left on device|\bENOSPC\b|(?i:\bdisk (?:is )?full\b)|"
                                  r"Disk quota exceeded"),
    Pattern(CauseKind.INFRA, "sandbox-failed", r"^bwrap: "),
)


def project_patterns(pairs: Iterable[tuple[str, str]]) -> tuple[Pattern, ...]:
    """scarbook.yaml's `causes:` ((kind, regex) in order, validated by scarbook.config) as patterns,
    each named by where it is written: causes.infra[0], causes.infra[1], causes.case[0]..."""
    seen: dict[str, int] = {}
    out = []
    for kind, regex in pairs:
        i = seen[kind] = seen.get(kind, -1) + 1
        out.append(Pattern(CauseKind(kind), f"causes.{kind}[{i}]", regex))
    return tuple(out)


def all_patterns(project_patterns: Iterable[Pattern] = ()) -> tuple[Pattern, ...]:
    """The project's patterns (scarbook.yaml `causes:`) first, then the built-in ones."""
    return (*project_patterns, *BUILTIN_PATTERNS)


def matching_line(patterns: Iterable[Pattern], text: str) -> tuple[Pattern, str] | None:
    """The first pattern a line of `text` matches, and that line; None when none does. Bounded: a project's
    pattern that backtracks on the agent's text must not freeze the session (it is passed over: no evidence)."""
    for p in patterns:
        try:
            m = search(p.regex, text, REGEX_TIMEOUT_S)
        except PatternTimedOut:
            continue
        if m:
            return p, _line_at(text, m.start())
    return None


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start:end if end >= 0 else len(text)].strip()


def tail_text(data: bytes) -> str:
    return data[-TAIL_BYTES:].decode("utf-8", "replace")
