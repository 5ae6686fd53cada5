"""No state word is compared as a bare string outside scarbook/models/words.py (issue 32.2).

The package is read as Python (ast), not run: every comparison (==, !=, in, not in) and every match case
one of whose sides is a string literal — or a tuple, list or set of them — that spells one of the state
words (a member of a StrEnum in scarbook.models.words) is listed. A state compared that way escapes mypy:
a misspelt word, or a word the enum no longer has, is then never equal and nothing says so. Written with
the enum (`s.gate == Decision.BELOW`) it is checked. OTHER_WORDS names the few comparisons whose words
are another vocabulary that happens to share a spelling (a transcript's event kinds, a dictionary key).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path

import scarbook
import scarbook.models.words as words_module

PACKAGE = Path(scarbook.__file__).parent
WORDS_FILE = Path(words_module.__file__)

# (module relative to the package's folder, the comparison as ast.unparse writes it): why it is no state.
OTHER_WORDS: dict[tuple[str, str], str] = {
    ("agents/codex.py", "kind == 'error'"): "a Codex JSON event's type",
    ("transcripts/codex.py", "kind == 'error'"): "a Codex JSON event's type",
    ("transcripts/codex.py", "item.get('status') in ('failed', 'declined')"): "a Codex item's status",
    ("transcripts/codex_rollout.py", "payload.get('type') in ('error', 'stream_error')"): "a rollout event's type",
    ("transcripts/anthropic_api.py", "kind == 'error'"): "a Messages API stream event's type",
    ("reports/inspect_log.py", "log['status'] == 'error'"): "Inspect's eval log status (its own words)",
    ("reports/inspect_log.py", "'error' not in s"): "a key of an Inspect sample",
    ("record/proxy.py", "'error' not in call"): "a key of a recorded call",
    ("config.py", "'agent' in data"): "a key of scarbook.yaml",
    ("cases/seed_folder.py", "name == 'seed'"): "a folder of a case (seed/, scar/)",
    ("session/plan.py", "runs == 'auto'"): "--runs' word for adaptive runs (a count, not a state)",
    ("session/plan.py", "asked == 'auto'"): "--runs' word for adaptive runs (a count, not a state)",
    ("tui/screens/launch.py", "name == 'all'"): "the launch form's scope of cases",
    ("tui/screens/review.py", "self.filter == 'all'"): "the run review's filter: every run shown",
    ("transcripts/langchain.py", "m.get('status') == 'error'"): "a LangChain tool message's status",
    ("transcripts/openhands.py", "extras.get('agent_state') == 'error'"): "an OpenHands agent state",
    ("transcripts/openhands.py", "kind in ('error', 'user_rejected')"): "an OpenHands observation's kind",
    ("transcripts/web_export.py", "recipient != 'all'"): "a ChatGPT message's recipient: everyone, not a tool",
}


def state_words() -> dict[str, list[str]]:
    """Each word a state enum of scarbook.models.words spells -> the members that spell it."""
    found: dict[str, list[str]] = {}
    for name, obj in vars(words_module).items():
        if inspect.isclass(obj) and issubclass(obj, StrEnum) and obj.__module__ == words_module.__name__:
            for member in obj:
                if member.value:  # AgentStage.RAN is "": no comparison against "" is a state's
                    found.setdefault(member.value, []).append(f"{name}.{member.name}")
    return found


def _literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def bare_comparisons(source: str, words: dict[str, list[str]]) -> Iterator[tuple[int, str]]:
    """(line, the comparison) for each comparison or match case of `source` against a bare state word."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            if any(w in words for side in (node.left, *node.comparators) for w in _literals(side)):
                yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.match_case):
            values = [p.value for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
            if any(w in words for v in values for w in _literals(v)):
                yield node.pattern.lineno, f"case {ast.unparse(node.pattern)}"


def package_comparisons() -> list[tuple[str, int, str]]:
    words = state_words()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == WORDS_FILE:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        found += [(rel, line, text) for line, text in bare_comparisons(path.read_text(encoding="utf-8"), words)]
    return found


def test_no_state_word_is_compared_as_a_bare_string():
    bare = [f"scarbook/{rel}:{line}: {text}" for rel, line, text in package_comparisons()
            if (rel, text) not in OTHER_WORDS]
    assert bare == [], "compare with the enum member (scarbook/models/words.py), not the bare word"


def test_every_other_vocabulary_named_is_still_there():
    """An entry of OTHER_WORDS whose comparison is gone is removed with it, so none hides a later one."""
    seen = {(rel, text) for rel, _line, text in package_comparisons()}
    assert sorted(set(OTHER_WORDS) - seen) == []


def test_the_reading_finds_each_form_of_a_bare_comparison():
    words = state_words()
    source = (
        "if run.status == 'pass': pass\n"
        "if info.state not in ('running', 'judging'): pass\n"
        "if 'below' != s.gate: pass\n"
        "match policy.mode:\n"
        "    case 'point': pass\n"
        "if run.status == RunStatus.PASS or s.gate in (Decision.BELOW,): pass\n"
        "if name == 'seeds' or x == '': pass\n"
    )
    assert [line for line, _ in bare_comparisons(source, words)] == [1, 2, 3, 5]
