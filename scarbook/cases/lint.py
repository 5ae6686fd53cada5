"""Rubric lint: deterministic advice on a case's checks. Advice only — it never blocks a run.

Rules (each `LintHint.rule`):
- `vague-item`       an item with a judgement word ("good", "high quality", "professional") and
                     nothing observable to check it against (no quote, number, file, or verb such
                     as "names", "mentions", "lists").
- `joined-criteria`  an item joining two criteria with "and"; suggests the split.
- `rule-decidable`   an item a free rule check decides (exact line count, file exists, contains
                     "X", parses as JSON); suggests the check dict, or names the check that
                     already decides it.
- `duplicate-item`   the same item twice in one case.
- `trajectory-item`  an item about what the agent did (called a tool, in an order, how many calls or
                     turns): the judge sees the artifact, not the run; suggests the trajectory check
                     that decides it from the run's transcript.
- `trajectory-vacuous` a trajectory check no run can fail (tool_called with min 0 and no max) or one
                     that says less than it seems (tool_order with one name).
- `needs-transcript` a trajectory check in a project whose agent keeps no transcript (the session would
                     refuse it): said when the caller knows the agent (`keeps_transcript=False`).
- `placeholder`      the task or a rubric item is still the import's TODO (cases/placeholders.py).
- `judge-only`       a case whose only checks are LLM judges.
- `nested-quantifier` a regex or output_regex pattern with a repeat inside a repeated group (`^(\\w+\\s?)*$`): on
                     text that almost matches it backtracks for seconds to forever, so the check fails at its time
                     limit (checks/patterns.py); names the case file and line, and the rewrite. Not said when
                     each turn of the inner repeat must end on a character it cannot match (`(\\d+\\.)+`).
- `overlapping-alternatives` a repeated choice that spells one text in two ways (`(a|aa)+`, `(aa?)+`): the
                     same runaway (checks/backtrack.py reads both).
With each item's figures across history (stats/items.py; `scarbook lint` reads them when there is history):
- `dead-item`        an item that never failed in 100+ runs over 3+ sessions: it costs and decides nothing.
- `always-fails`     an item that failed in every one of them.
- `redundant-item`   two items that agree on 98%+ of the 50+ runs both were judged in.
- `unstable-item`    an item whose repeated judgements of one artifact disagree on more than 10%.
- `judge-unreliable` an item people's labels say the judge gets wrong more than 20% of the time.
The word lists are plain data below; a new rule is one function added to RULES.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scarbook.cases.placeholders import is_placeholder_task, placeholder_items, write_it_hint
from scarbook.checks.backtrack import Runaway, runaway
from scarbook.checks.patterns import REWRITE
from scarbook.checks.spec import REGEX_TIMEOUT_S, TRAJECTORY_CHECKS, needs_transcript
from scarbook.models import Case, ItemFlag
from scarbook.stats.items import ItemFigures
from scarbook.transcripts.tool_input import artifact_words, tool_input_of

VAGUE_TERMS = (
    "good", "bad", "great", "fine", "nice", "quality", "high-quality", "professional",
    "professionally", "well written", "well-written", "well structured", "well-structured",
    "clean", "appropriate", "appropriately", "reasonable", "acceptable", "adequate",
    "satisfactory", "sensible", "helpful", "correct", "correctly", "proper", "properly",
    "polished", "robust", "elegant", "thorough", "comprehensive", "makes sense", "ok", "okay",
)
# Words that point at something a reader can see in the artifact.
OBSERVABLE = frozenset(
    ["names", "name", "mentions", "mention", "lists", "list", "includes", "include", "contains", "contain", "states", "state", "says", "say", "quotes", "quote", "cites", "cite", "claims", "claim", "reports", "report", "returns", "return", "matches", "match", "equals", "equal", "exactly", "least", "most", "refers", "identifies", "identify", "exists", "exist", "prints", "print", "ends", "starts", "begins", "uses", "use", "calls", "call", "removes", "deletes", "creates", "writes", "asks", "admits", "refuses", "apologizes"]
)
VERBS = frozenset(
    ["is", "are", "was", "were", "be", "does", "do", "did", "has", "have", "had", "can", "cannot", "must", "should", "will", "contains", "contain", "mentions", "names", "lists", "includes", "states", "says", "claims", "uses", "returns", "exits", "writes", "creates", "deletes", "modifies", "keeps", "explains", "matches", "passes", "fails", "exists", "gives", "shows", "reports", "refers", "quotes", "cites", "describes", "identifies", "points", "ends", "starts", "begins", "follows", "avoids", "changes", "leaves", "answers", "asks", "apologizes", "admits", "refuses", "prints", "calls", "removes", "sets", "adds"]
)
NUMBERS = {"one": 1, "a single": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10}
PATH = r"(?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{1,7}"
_PATH_RE = re.compile(rf"(?<![\w/.-])({PATH})(?![\w/-])")
_QUOTED = re.compile(r"[\"“'`]([^\"”'`]+)[\"”'`]")
_COUNT = r"(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten|a single|single)"
_LINES_RE = re.compile(
    rf"\b(?:contains|contain|has|have|is|are|be|of)\s+(?P<bound>exactly|at most|at least|no more than|no fewer than)?\s*{_COUNT}\s+lines?\b"
    rf"|\b(?:is|be)\s+{_COUNT.replace('?P<n>', '?P<n2>')}\s+lines?\s+long\b"
)
_EXISTS_RE = re.compile(rf"(?P<path>{PATH})\s+(?:exists|is created|was created|is present|is written)\b"
                        rf"|\b(?:creates|created|writes|wrote)\s+(?:a\s+file\s+(?:named|called)\s+)?(?P<path2>{PATH})\b")
_ABSENT_RE = re.compile(rf"(?P<path>{PATH})\s+(?:does not exist|doesn't exist|is deleted|was deleted|is removed|is absent)\b")
_CONTAINS_RE = re.compile(
    r"\b(?P<neg>does not |doesn't |never )?(?:contains?|includes?|mentions?|says|has|have)\s+(?:the\s+)?"
    r"(?:(?:exact\s+)?(?:text|string|phrase|word|line|heading|words)\s+)?[\"“'`](?P<text>[^\"”'`]+)[\"”'`]"
)
# A tool, as a rubric names one: quoted or in backticks, or followed by "tool"; after "call" or
# "invoke" a bare name will do when it looks like one ("never calls Bash", "calls read_file"), after
# "use" or "run" it will not ("uses the word").
_NAME = r"[A-Za-z_][\w.:*-]*"
_TOOL = (r"(?:[`'\"“](?P<{0}q>" + _NAME + r")[`'\"”](?:\s+tool)?|(?P<{0}t>" + _NAME + r")\s+tool\b"
         r"|(?P<{0}b>" + _NAME + r"))")
_TOOLISH = re.compile(r"[A-Z][\w.:-]*|\w+_[\w.:-]+")  # Bash, WebSearch, read_file: a bare word that is a tool
_NEG = r"\b(?:never|does not|doesn't|do not|don't|must not|should not|without)\s+"
_VERB = r"(?P<verb>call|invok|us|runn|run)(?:s|es|e|ed|ing)?\s+(?:the\s+)?"
_NEVER_CALLS_RE = re.compile(_NEG + _VERB + _TOOL.format("name"), re.IGNORECASE)
_ORDER_RE = re.compile(r"\b" + _VERB + _TOOL.format("first") + r"\s+before\s+(?:calling\s+|using\s+|running\s+)?"
                       r"(?:the\s+)?" + _TOOL.format("then"), re.IGNORECASE)
_CALLS_RE = re.compile(r"\b" + _VERB + _TOOL.format("name"), re.IGNORECASE)
_AT_MOST_RE = re.compile(rf"\b(?:at most|no more than|fewer than|under|within)\s+{_COUNT}\s+"
                         r"(?P<what>tool calls?|turns?|steps?|calls?|tokens?)\b", re.IGNORECASE)
_JSON_RE = re.compile(r"\bvalid json\b|\bparses? as json\b|\bis (?:well-formed )?json\b|\bparseable json\b")


@dataclass
class LintHint:
    case_id: str
    check_index: int | None  # position in case.checks; None for a hint about the whole case
    item_index: int | None  # position in that check's rubric
    rule: str
    message: str
    suggestion: str
    suggested_check: dict[str, Any] | None = None  # rule-decidable: the check to add
    suggested_items: list[str] | None = None  # joined-criteria: the split


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9'-]+", text.lower())


def _has_term(text: str, terms: tuple[str, ...]) -> str | None:
    low = " " + " ".join(_words(text)) + " "
    return next((t for t in terms if f" {t} " in low), None)


def _vague(item: str, artifact: str | dict) -> tuple[str, str, dict | None, list | None] | None:
    term = _has_term(item, VAGUE_TERMS)
    if term is None:
        return None
    observable = (_QUOTED.search(item) or re.search(r"\d", item) or _PATH_RE.search(item)
                  or OBSERVABLE & set(_words(item)))
    if observable:
        return None
    return (f"{item!r} has no observable criterion: {term!r} is a judgement, not something to look for",
            "say what a reader would see in the artifact when it is right, e.g. 'the review names the "
            "bug on line 12' or 'the answer quotes the error message'", None, None)


def _has_verb(part: str) -> bool:
    return bool(VERBS & set(_words(part)))


def _split_criteria(item: str) -> list[str]:
    parts: list[str] = []
    for part in re.split(r",?\s+and\s+", item.strip().rstrip(".")):
        inside_between = parts and "between" in _words(parts[-1])[-4:]
        if parts and (inside_between or not _has_verb(part) or not _has_verb(parts[-1])):
            parts[-1] += " and " + part
        else:
            parts.append(part)
    if len(parts) < 2:
        return parts
    first = parts[0].split()
    verb_at = next((i for i, w in enumerate(first) if w.lower() in VERBS), 0)
    subject = " ".join(first[:verb_at])
    out = [parts[0]]
    for part in parts[1:]:
        starts_with_verb = part.split()[0].lower() in VERBS
        out.append(f"{subject} {part}".strip() if starts_with_verb and subject else part)
    return out


def _joined(item: str, artifact: str | dict) -> tuple[str, str, dict | None, list | None] | None:
    parts = _split_criteria(item)
    if len(parts) < 2:
        return None
    return (f"{item!r} joins {len(parts)} criteria: when it fails you will not know which",
            "split it into: " + " | ".join(parts), None, parts)


def _at(where: str | dict) -> dict[str, Any]:
    """What a file rule reads: a workspace path, or (the judge's artifact is one) a tool call's input."""
    return {"path": where} if isinstance(where, str) else {"artifact": where}


def _rule_check(item: str, artifact: str | dict) -> dict[str, Any] | None:
    """The free rule check that decides this item, if one does."""
    low = item.lower()
    named = _PATH_RE.search(item)
    path = named.group(1) if named else (artifact if artifact != "output" else None)
    if m := _LINES_RE.search(low):
        n = m.group("n") or m.group("n2")
        count = int(n) if n.isdigit() else NUMBERS[n]
        key = {"at most": "max", "no more than": "max", "at least": "min", "no fewer than": "min"}.get(m.group("bound") or "", "equals")
        if path:
            return {"type": "line_count", **_at(path), key: count}
    if (m := _ABSENT_RE.search(item)) and m.group("path"):
        return {"type": "file_absent", "path": m.group("path")}
    if m := _EXISTS_RE.search(item):
        return {"type": "file_exists", "path": m.group("path") or m.group("path2")}
    if m := _CONTAINS_RE.search(item):
        text, negated = m.group("text"), bool(m.group("neg"))
        target = _PATH_RE.search(item[: m.start()])
        where = target.group(1) if target else (artifact if artifact != "output" else None)
        if where:
            return {"type": "not_contains" if negated else "contains", **_at(where), "text": text}
        if not negated:
            return {"type": "output_contains", "text": text}
    if _JSON_RE.search(low) and path:
        return {"type": "json_valid", **_at(path)}
    return None


def _tool(m: re.Match[str], group: str, bare: bool) -> str | None:
    """The tool name the match holds; a bare word counts only when `bare` (after "call", "invoke")."""
    word = m.group(f"{group}b") if bare else None
    if word and not (_TOOLISH.fullmatch(word) and not m.string[m.end(f"{group}b"):].startswith("(")):
        word = None  # "calls out the bug", "calls helper()": not a tool
    return m.group(f"{group}q") or m.group(f"{group}t") or word


def _calls(m: re.Match[str]) -> bool:
    return m.group("verb").lower() in ("call", "invok")


def _trajectory_check(item: str) -> dict[str, Any] | None:
    """The trajectory check that decides this item from the run's transcript, if one does."""
    if m := _AT_MOST_RE.search(item):
        n = m.group("n").lower()
        count = int(n) if n.isdigit() else NUMBERS[n]
        count -= 1 if item[m.start():m.start() + 5].lower() in ("fewer", "under") else 0
        what = m.group("what").lower()
        kind = "max_turns" if what.startswith(("turn", "step")) else "max_tokens" if what.startswith("token") \
            else "max_tool_calls"
        return {"type": kind, "n": max(count, 0)}
    if (m := _ORDER_RE.search(item)) and (first := _tool(m, "first", _calls(m))):
        then = _tool(m, "then", True)
        if then is None or (then.endswith("ing") and then.islower() and not m.group("thenq")):
            return {"type": "tool_called", "name": first}  # "before answering": a verb, not a tool
        return {"type": "tool_order", "names": [first, then]}
    if (m := _NEVER_CALLS_RE.search(item)) and (name := _tool(m, "name", _calls(m))):
        return {"type": "tool_not_called", "name": name}
    m = _CALLS_RE.search(item)
    if m and not re.search(_NEG + r"$", item[: m.start()]) and (name := _tool(m, "name", _calls(m))):
        return {"type": "tool_called", "name": name}
    return None


def _lint_trajectory(case: Case) -> list[LintHint]:
    hints = []
    for ci, check in enumerate(case.checks):
        p = check.params
        if check.type == "tool_called" and p.get("min", 1) == 0 and "max" not in p:
            hints.append(LintHint(case.id, ci, None, "trajectory-vacuous",
                                  f"tool_called {p.get('name')!r} with min 0 and no max passes every run",
                                  "give it a max (max: 0 is tool_not_called), or drop it", None, None))
        elif check.type == "tool_order" and len(p.get("names") or []) == 1:
            name = p["names"][0]
            hints.append(LintHint(case.id, ci, None, "trajectory-vacuous",
                                  f"tool_order with one name only says {name!r} was called",
                                  f"name the tool that must come before or after it, or write "
                                  f"{{type: tool_called, name: {name}}}", {"type": "tool_called", "name": name}, None))
    return hints


def _covered_by(case: Case, suggested: dict[str, Any]) -> int | None:
    for i, check in enumerate(case.checks):
        if check.type == suggested["type"] and all(check.params.get(k) == v for k, v in suggested.items() if k != "type"):
            return i
    return None


def _lint_items(case: Case) -> list[LintHint]:
    hints: list[LintHint] = []
    seen: dict[str, tuple[int, int]] = {}
    for ci, check in enumerate(case.checks):
        if not check.is_judge:
            continue
        raw = check.params.get("artifact", "output")
        artifact: str | dict = raw if tool_input_of(raw) is not None else str(raw)
        for ii, item in enumerate(check.params.get("rubric") or []):
            item = str(item)
            for rule, fn in (("vague-item", _vague), ("joined-criteria", _joined)):
                if found := fn(item, artifact):
                    message, suggestion, chk, items = found
                    hints.append(LintHint(case.id, ci, ii, rule, message, suggestion, chk, items))
            if trajectory := _trajectory_check(item):
                covered = _covered_by(case, trajectory)
                shown = "{" + ", ".join(f"{k}: {v}" for k, v in trajectory.items()) + "}"
                hints.append(LintHint(
                    case.id, ci, ii, "trajectory-item",
                    f"{item!r} is about what the agent did, which the judge does not see (it grades the artifact)",
                    f"drop it from the rubric: check {covered + 1} ({trajectory['type']}) decides it from the run's "
                    "transcript" if covered is not None else
                    f"add {shown}: it decides this from the run's transcript, free",
                    None if covered is not None else trajectory, None))
            elif suggested := _rule_check(item, artifact):
                covered = _covered_by(case, suggested)
                if covered is not None:
                    hints.append(LintHint(case.id, ci, ii, "rule-decidable",
                                          f"{item!r} is already decided by check {covered + 1} ({suggested['type']}) for free",
                                          "drop it from the rubric, or keep it only if the judge must see it", None, None))
                else:
                    shown = "{" + ", ".join(f"{k}: {artifact_words(v) if k == 'artifact' else v}"
                                            for k, v in suggested.items()) + "}"
                    hints.append(LintHint(case.id, ci, ii, "rule-decidable",
                                          f"{item!r} can be decided by a {suggested['type']} check, with no judge call",
                                          f"add {shown} before the judge", suggested, None))
            norm = " ".join(_words(item))
            if norm in seen:
                first_check, first_item = seen[norm]
                hints.append(LintHint(case.id, ci, ii, "duplicate-item",
                                      f"{item!r} repeats check {first_check + 1} item {first_item + 1}",
                                      "remove one copy: a duplicate doubles its weight and its cost", None, None))
            else:
                seen[norm] = (ci, ii)
    return hints


def _lint_placeholders(case: Case) -> list[LintHint]:
    hints = [LintHint(case.id, ci, ii, "placeholder", "this item is still the import's TODO: the judge would grade "
                      "it as written, which says nothing of the incident, and it can certify nothing",
                      write_it_hint(case), None, None) for ci, ii in placeholder_items(case)]
    if is_placeholder_task(case.task):
        hints.insert(0, LintHint(case.id, None, None, "placeholder", "the task is still the import's TODO: each run "
                                 "would send it to the agent as written",
                                 f"write the instruction the agent was given as task: in "
                                 f"{case.root / 'case.yaml' if case.root else 'its case.yaml'}", None, None))
    return hints


def _lint_judge_only(case: Case) -> list[LintHint]:
    if case.checks and all(c.is_judge for c in case.checks):
        return [LintHint(case.id, None, None, "judge-only",
                         "every check of this case is an LLM judge: each run costs a judge call, and the verdict is only as good as the judge",
                         "add a rule check that fails on the scar (file_exists, contains, line_count, json_valid, only_changed) "
                         "before the judge — or, when the scar is what the agent did, a trajectory check "
                         "(tool_not_called, max_tool_calls, no_writes_outside)",
                         None, None)]
    return []


def _lint_needs_transcript(case: Case) -> list[LintHint]:
    return [LintHint(case.id, i, None, "needs-transcript",
                     f"{check.type} reads each run's transcript, but the project's agent keeps none: the session "
                     "will refuse this case",
                     "turn on record: in scarbook.yaml, use a preset (claude-code, codex), or set transcript: true "
                     "under agent: if the agent writes $SCARBOOK_TRANSCRIPT itself", None, None)
            for i, check in enumerate(case.checks) if check.type in TRAJECTORY_CHECKS] + [
        LintHint(case.id, i, None, "needs-transcript", f"{needs_transcript(case, i, check)}, but the project's "
                 "agent keeps none: the session will refuse this case",
                 "use a preset (claude-code, codex), turn on record: in scarbook.yaml, or set transcript: true under "
                 "agent: if the agent writes $SCARBOOK_TRANSCRIPT itself", None, None)
        for i, check in enumerate(case.checks) if tool_input_of(check.params.get("artifact")) is not None]


def _lint_patterns(case: Case) -> list[LintHint]:
    hints = []
    for i, check in enumerate(case.checks):
        pattern = str(check.params.get("pattern", "")) if check.type in ("regex", "output_regex") else ""
        way = runaway(pattern) if pattern else None
        if way is None:
            continue
        where = f"{case.root / 'case.yaml'}{f':{check.line}' if check.line else ''}: " if case.root else ""
        what = ("nests quantifiers (a repeated group holds a repeat)" if way == Runaway.NESTED else
                "repeats alternatives that can match the same text (`a|aa`: \"aa\" is one turn or two)")
        hints.append(LintHint(case.id, i, None, str(way),
                              f"{where}{check.type} pattern `{pattern}` {what}: on text that almost matches it can "
                              f"backtrack for seconds to forever, and the check fails after {REGEX_TIMEOUT_S:g} s",
                              REWRITE, None, None))
    return hints


_FIGURE_RULES: dict[ItemFlag, tuple[str, str]] = {
    ItemFlag.DEAD: ("dead-item", "delete it (the editor's d on a dead item), or rewrite it so it can fail"),
    ItemFlag.ALWAYS_FAILS: ("always-fails", "check it against a good artifact (scarbook verify): it may fail "
                                            "right results too"),
    ItemFlag.REDUNDANT: ("redundant-item", "merge the two (the editor's m), or drop one: each costs a judgement"),
    ItemFlag.UNSTABLE: ("unstable-item", "make it observable (quote what to look for), or raise judge.samples"),
    ItemFlag.JUDGE_UNRELIABLE: ("judge-unreliable", "reword it, turn it into a rule check, or label more "
                                                    "(scarbook calibrate) if the labels are few"),
}


def _lint_figures(case: Case, figures: list[ItemFigures]) -> list[LintHint]:
    """Hints from what each item did across history."""
    where = {ident: (ci, ii) for ci, check in enumerate(case.checks) if check.is_judge
             for ii, ident in enumerate(check.rubric_ids)}
    hints = []
    for f in figures:
        if f.item_id not in where:
            continue
        ci, ii = where[f.item_id]
        for flag, why in f.reasons.items():
            rule, fix = _FIGURE_RULES[flag]
            hints.append(LintHint(case.id, ci, ii, rule, f"{f.tally.text!r} is {flag}: {why}", fix, None, None))
    return hints


def lint_case(case: Case, *, keeps_transcript: bool = True, figures: list[ItemFigures] | None = None) -> list[LintHint]:
    """All hints for one case, in check and item order; the case-level hint last. `keeps_transcript`:
    whether the project's agent leaves a transcript the trajectory checks can read; `figures`: its items'
    figures across history (stats/items.py), when there is history."""
    missing = [] if keeps_transcript else _lint_needs_transcript(case)
    measured = _lint_figures(case, figures) if figures else []
    return (_lint_placeholders(case) + _lint_items(case) + measured + _lint_trajectory(case) + _lint_patterns(case) + missing
            + _lint_judge_only(case))


def lint_cases(cases: list[Case], *, keeps_transcript: bool = True,
               figures: dict[str, list[ItemFigures]] | None = None) -> list[LintHint]:
    return [hint for case in cases for hint in lint_case(case, keeps_transcript=keeps_transcript,
                                                         figures=(figures or {}).get(case.id))]


def format_hints(hints: list[LintHint]) -> str:
    if not hints:
        return "no lint hints"
    lines = []
    for h in hints:
        where = h.case_id
        if h.check_index is not None:
            where += f" check {h.check_index + 1}"
        if h.item_index is not None:
            where += f" item {h.item_index + 1}"
        lines += [f"{where} [{h.rule}] {h.message}", f"    -> {h.suggestion}"]
    cases = len({h.case_id for h in hints})
    lines.append(f"{len(hints)} hint{'s' * (len(hints) != 1)} in {cases} case{'s' * (cases != 1)} (advice, not errors)")
    return "\n".join(lines)

