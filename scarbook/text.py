"""Text from the agent made safe to store, print and put in XML: `clean_text(text)`.

An agent's output, stderr and file names reach run reasons, check details, terminal progress lines
and reports. Left raw, an ANSI/OSC escape rewrites the user's terminal (or its title, or a link),
and one control character makes junit.xml not well-formed. `clean_text` drops terminal escape
sequences whole and writes every other control character as a visible `\\xNN` escape, so what was
there is still readable and nothing acts on the screen. The result is valid XML 1.0 text.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

# ESC [ ... final (CSI); ESC ] ... BEL or ESC \ (OSC, also an unterminated one); ESC P/X/^/_ ... ESC \
# (DCS, SOS, PM, APC); ESC + one byte (the rest); and their 8-bit forms (CSI 0x9b, OSC 0x9d, ...).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_LINE_BREAKS = re.compile(r"[\n\t]+")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def clean_text(text: str, *, one_line: bool = False) -> str:
    """`text` with terminal escape sequences removed and other control characters escaped (`\\x07`).

    Newlines and tabs stay (a `\\r\\n` becomes `\\n`) unless `one_line`, which turns each run of them
    into one space: for progress lines and other one-line places."""
    if _UNSAFE.search(text):
        text = _ESCAPES.sub("", text.replace("\r\n", "\n"))
        text = _UNSAFE.sub(_escape, text)
    if one_line and ("\n" in text or "\t" in text):
        text = _LINE_BREAKS.sub(" ", text)
    return text


# Colour and weight only (click.style's own): an escape that hides text (8, conceal) or does anything
# but colour is dropped with the rest.
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_STYLES = {0, 1, 2, 3, 4, 22, 23, 24, 39, 49, *range(30, 38), *range(40, 48), *range(90, 98), *range(100, 108)}
# The bidirectional controls (marks, embeddings, overrides, isolates): U+202E makes a terminal show
# "gnp.exe" for "exe.png" — a name or a line that reads other than it is. Escaped where text is printed.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A GitHub Actions runner acts on a log line that starts with `::` (leading blanks aside), and on `##[`.
_CI_COMMAND = re.compile(r"^([^\S\n]*):(?=:)", re.MULTILINE)


def _style_ok(params: str) -> bool:
    return all(p.isdigit() and int(p) in _STYLES for p in params.split(";")) if params else True


def terminal_text(text: str, *, ci: bool = False, keep_colour: bool = True) -> str:
    """`text` as it may reach a terminal or a CI log, whatever the agent or a transcript put in it.

    Every control sequence (CSI, OSC, DCS, ...) is dropped and every other control character but tab
    and newline escaped, as in `clean_text`, and so is every bidirectional control (`\\u202e`); colour
    (SGR) sequences stay unless `keep_colour` is false (the CLI's writer drops them all and puts back
    only its own styles: cli/common.style). With `ci` (a CI runner's log) no line starts with `::` and
    no `##[` is left: those would be workflow commands (`::error::`, `::add-mask::`, ...); the first
    `:` or `#` becomes `\x3a` / `\x23`."""
    if "\x1b" in text or _UNSAFE.search(text):
        out, pos = [], 0
        for m in _SGR.finditer(text):
            out.append(clean_text(text[pos:m.start()]))
            if keep_colour and _style_ok(m.group(1)):
                out.append(m.group())
            pos = m.end()
        out.append(clean_text(text[pos:]))
        text = "".join(out)
    text = escape_bidi(text)
    if ci:
        text = _CI_COMMAND.sub(lambda m: m.group(1) + "\\x3a", text).replace("##[", "\\x23#[")
    return text


def escape_bidi(text: str) -> str:
    """`text` with every bidirectional control written as its escape (`\\u202e`)."""
    return _BIDI.sub(_escape, text) if _BIDI.search(text) else text


# A name an agent chose (a file in its workspace): no character of it is dropped, since a dropped escape would show
# "\x1b[0mout.txt" as "out.txt", another file's name; each control character, newline and tab included, and each
# bidirectional control is written as its escape instead.
_NAME_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_name(name: str) -> str:
    """A workspace file's name as it is stored and printed: every control character (ESC, a newline, a tab) and
    every bidirectional control written as its escape (`\\x1b`, `\\x0a`, `\\u202e`), the rest as it is —
    "\\x1b[0mout.txt", never "out.txt". Printing it twice changes nothing."""
    return _NAME_UNSAFE.sub(_escape, name) if _NAME_UNSAFE.search(name) else name


_VISIBLE_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_text(text: str) -> str:
    """`text` for a field a person edits (the TUI's editor): as escape_name, but newlines and tabs kept — every other
    control character and every bidirectional control written as its escape (ESC [2J as `\\x1b[2J`), none dropped."""
    return _VISIBLE_UNSAFE.sub(_escape, text) if _VISIBLE_UNSAFE.search(text) else text


def report_text(text: str, *, one_line: bool = False) -> str:
    """`clean_text` for a report a person reads in a browser or a CI page (HTML, the step summary, JUnit, a
    workflow annotation): bidirectional controls escaped too, as the CLI's writer does — a file the agent
    named "\\u202etxt.exe" would read "exe.txt" there."""
    return escape_bidi(clean_text(text, one_line=one_line))


def screen_text(text: str, *, one_line: bool = False) -> str:
    """`text` as a TUI screen shows it: what the CLI's writer prints (terminal_text without colour) — terminal
    escape sequences dropped, every other control character and every bidirectional control written as its escape
    (`\\x07`, `\\u202e`). Put it in a `Text`, never in markup: "[@click=app.quit]" stays those characters."""
    return report_text(text, one_line=one_line)


def _clean_any(value: Any) -> Any:
    """`value` with every text in it cleaned: strings, lists, tuples, dicts and the frozen records of
    scarbook.models (a copy, only where some text changed). State words (enums) are left as they are."""
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean_any(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_clean_any(v) for v in value)
    if isinstance(value, dict):
        return {k: _clean_any(v) for k, v in value.items()}
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):  # (dataclasses.is_dataclass)
        changed = {}
        for name in value.__dataclass_fields__:
            old = getattr(value, name)
            new = _clean_any(old)
            if new is not old and new != old:
                changed[name] = new
        if not changed:
            return value
        import dataclasses  # (here: `scarbook --help` imports this module and needs none of it)

        return dataclasses.replace(value, **changed)
    return value


def clean_record_text(record: Any) -> Any:
    """Clean, in place, every text of a RunRecord an agent could have put there (reason, output
    excerpt, check details and judge reasons; the names of changed files escaped whole: escape_name);
    returns the record."""
    record.reason = clean_text(record.reason)
    record.output_excerpt = clean_text(record.output_excerpt)
    record.notes = _clean_any(record.notes)
    record.cause = _clean_any(record.cause)  # its evidence may be a line the agent printed
    record.attempts = _clean_any(record.attempts)
    for check in record.checks:
        check.detail = clean_text(check.detail)
        check.cause = _clean_any(check.cause)
        if check.judge is not None:
            check.judge = _clean_any(check.judge)
    diff = record.diff
    diff.created, diff.modified, diff.deleted = ([escape_name(n) for n in diff.created],
                                                 [escape_name(n) for n in diff.modified],
                                                 [escape_name(n) for n in diff.deleted])
    return record


def pct(x: float | None, *, signed: bool = False, unit: str = "%", none: str = "–", width: int = 0) -> str:
    """A share as a whole percent, the one way scarbook prints one: 0.8 -> "80%". `signed` writes the
    sign of a difference ("+5%"); `unit=""` leaves the number bare (a column headed "pts"); `width`
    pads the number for a column; no value (no rate) prints `none`."""
    if x is None:
        return none
    return f"{100 * x:{'+' if signed else ''}{width or ''}.0f}{unit}"


def pct_beside(x: float | None, line: float, *, width: int = 0, none: str = "–", unit: str = "%") -> str:
    """THE rate formatter: a rate (or an interval's end) as a percent that never rounds across its
    case's threshold `line`. Whole percents, one more digit each time rounding would put it on the
    other side: 39/49 against 80% is "79.6%", not "80%" (which would read as meeting it); 0.7996 is
    "79.96%". Every face (CLI, TUI, HTML, JUnit, step summary) prints rates through it."""
    if x is None:
        return none
    for digits in range(5):
        if (round(100 * x, digits) >= round(100 * line, 9)) == (x >= line):
            return f"{100 * x:{width}.{digits}f}{unit}"
    return f"{100 * x:{width}.6f}{unit}"


def interval_beside(lo: float, hi: float, line: float, *, sep: str = "–", width: int = 0) -> str:
    """An interval "49–94%" whose ends never round across the threshold `line` (pct_beside)."""
    return f"{pct_beside(lo, line, unit='', width=width)}{sep}{pct_beside(hi, line, width=width)}"


def threshold_pct(line: float) -> str:
    """A threshold as the percent it is: 0.8 -> "80%", 0.795 -> "79.5%" (never rounded)."""
    return f"{round(100 * line, 6):g}%"


def k_note(ks: dict[str, int]) -> str:
    """The k of pass@k / pass^k (a case's judged runs, at most 5): one number when every case with a
    rate shares it, else each case's, saying why a case's k is less than its runs."""
    values = sorted(set(ks.values()))
    if not values:  # no case has a rate (every run errored or unjudged): there is no k to speak of
        return "k = – (no case has a rate)"
    if len(values) == 1:
        return f"k = {values[0]}"
    return "k per case (its judged runs, at most 5): " + ", ".join(f"{cid} {k}" for cid, k in ks.items())


# Small words that numbers and names need: "1 case" / "2 cases", a title cut at a word.

def plural(n: float, noun: str, many: str | None = None, *, grouped: bool = False) -> str:
    """"1 case", "0 cases", "3 runs": every count printed beside its noun goes through here. `many` for
    irregular nouns ("1 child", "2 children"); `grouped`: thousands separated ("1,024 bytes"); a float as
    a setting is written ("1.5 days", "1 day")."""
    shown = f"{n:,}" if grouped else f"{n:g}" if isinstance(n, float) else str(n)
    return f"{shown} {noun if n == 1 else (many or noun + 's')}"


def names_left_out(left_out: dict[str, int], kept: int) -> str:
    """What a run record's list of changed files left out (WorkspaceDiff.left_out), in one phrase: "199,500 more
    created and 3 more deleted files not kept (a run's record keeps the first 500 names of each)"; "" for none."""
    counts = [f"{n:,} more {kind}" for kind, n in left_out.items() if n]
    if not counts:
        return ""
    files = "file" if sum(left_out.values()) == 1 else "files"
    return f"{' and '.join(counts)} {files} not kept (a run's record keeps the first {kept:,} names of each)"


def with_article(noun: str) -> str:
    """"a claude-code transcript", "an openai transcript": the article the spoken word takes (by its
    first letter, which is right for the names scarbook prints: formats, agent and executor kinds)."""
    vowel = noun[:1].lower() in "aeiou" or noun.lower().startswith("http")  # "an HTTP cassette"
    return f"{'an' if vowel else 'a'} {noun}"


def cut_chars(text: str, width: int) -> str:
    """`text` in `width` characters: whole, or cut with `…` (an id has no words to cut at). 0: no limit."""
    return text if not width or len(text) <= width else text[: max(1, width - 1)] + "…"


def cut_words(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at a word boundary with "…" (never mid-word,
    unless a single word is longer than the width)."""
    if len(text) <= width:
        return text
    head = text[:width - 1]
    if text[width - 1] == " ":
        return head.rstrip(" ,;:—-") + "…"  # the cut falls between two words
    space = head.rfind(" ")
    return (head[:space] if space > width // 3 else head).rstrip(" ,;:—-") + "…"
