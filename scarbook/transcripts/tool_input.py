"""A case's artifact that is the input of a tool call: `artifact: {tool: NAME, field: FIELD}`.

Many incidents' bad artifact is what the agent SENT through a tool — a PR body given to
`mcp__github__create_pull_request`, a message to Slack, `gh pr create --body ...` run through Bash — not its
final answer or a file. `{tool, field}` names "the FIELD of the input of the LAST call the agent made to
NAME in the run", read from the run's transcript (`last_tool_input`). A run that made no such call fails the
check that reads it (the agent did not do the thing); it is never an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scarbook.text import plural

if TYPE_CHECKING:  # reading a case loads this module: no reader, not even the transcript model (cli/test_startup)
    from scarbook.transcripts.model import ToolCall, Transcript

KEYS = ("tool", "field")
WRITTEN = "{tool: mcp__github__create_pull_request, field: body}"  # how the form is shown in every fix


@dataclass(frozen=True)
class ToolInput:
    """The FIELD of the input of the last call to TOOL."""

    tool: str
    field: str

    @property
    def label(self) -> str:
        """How a check's detail and the judge's record name it."""
        return f"the {self.field} of the last {self.tool} call"

    @property
    def source(self) -> str:
        """One string for it (what the judge's record keeps as the artifact's source; rejudge compares it)."""
        return f"tool:{self.tool}:{self.field}"


def tool_input_of(value: Any) -> ToolInput | None:
    """The tool input an `artifact:` value names (a mapping with `tool` and `field`), or None for "output" or a
    workspace path. The value is a validated case's (checks/spec.py refuses a malformed mapping)."""
    if isinstance(value, dict) and isinstance(value.get("tool"), str) and isinstance(value.get("field"), str):
        return ToolInput(value["tool"], value["field"])
    return None


def mapping_problem(value: dict[str, Any]) -> str | None:
    """Why a mapping written as an artifact is not `{tool: NAME, field: FIELD}`, or None."""
    unknown = [k for k in value if k not in KEYS]
    if unknown:
        return f"unknown key {str(unknown[0])!r} (an artifact mapping takes tool and field)"
    for key in KEYS:
        if key not in value:
            return f"the mapping has no {key!r}"
        if not isinstance(value[key], str) or not value[key].strip():
            return f"{key} must be a non-empty string"
    return None


def artifact_words(value: str | dict[str, str] | None) -> str:
    """An artifact as one line of text (a form's field): "output", the path, or `{tool: NAME, field: FIELD}`."""
    ref = tool_input_of(value)
    return f"{{tool: {ref.tool}, field: {ref.field}}}" if ref is not None else str(value or "")


class NoToolInput(Exception):
    """The run holds no text where the artifact points (no such call, or no such field): the detail says why."""


def last_call(t: Transcript, ref: ToolInput) -> tuple[int, ToolCall] | None:
    """(its 1-based number among the run's tool calls, the last call to `ref.tool`), or None."""
    found = None
    for n, call in enumerate(t.tool_calls, 1):
        if call.name == ref.tool:
            found = (n, call)
    return found


def last_tool_input(t: Transcript, ref: ToolInput) -> str:
    """The text of `ref.field` in the input of the run's last call to `ref.tool` (a value that is not text is
    written as JSON); raises NoToolInput saying what the run did instead."""
    found = last_call(t, ref)
    if found is None:
        raise _no_call(t, ref)
    number, call = found
    if ref.field not in call.input:
        fields = ", ".join(map(str, list(call.input)[:8])) or "none"
        raise NoToolInput(f"the agent's last {ref.tool} call (call {number}) has no {ref.field!r} in its input "
                          f"(its fields: {fields})")
    return input_text(call.input[ref.field])


def _no_call(t: Transcript, ref: ToolInput) -> NoToolInput:
    made = len(t.tool_calls)
    did = f"its {plural(made, 'tool call')} went to other tools" if made else "it made no tool call at all"
    return NoToolInput(f"the agent never called {ref.tool}, so there is no {ref.field} to check ({did})")


def input_text(value: Any) -> str:
    """A tool input's value as the checks and the judge read it: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
