"""Trajectory checks an incident suggests: what `scarbook import` offers besides the draft's checks.

Read from the transcript, not the artifact, because many incidents are about what the agent did:
  - it wrote files besides the artifact (README.md rewritten whole) -> no_writes_outside {paths: [the artifact]}
  - it looped (many tool calls, or the same call again and again)  -> max_tool_calls {n}
Each suggestion says why, naming the calls. They are advice: a trajectory check needs an agent whose
runs keep a transcript (record:, a preset, or `transcript: true`), so none is added to the draft unasked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from scarbook.text import plural
from scarbook.transcripts.case_pieces import Candidate, turn_of, turns
from scarbook.transcripts.files import file_operation, relative_path
from scarbook.transcripts.model import ToolCall, Transcript

MANY_CALLS = 20  # an incident with at least this many tool calls suggests a bound
REPEATS = 3  # the same call (tool and input) this many times is a loop
MIN_BOUND = 10  # a suggested max_tool_calls is never tighter than this


@dataclass
class TrajectoryHint:
    check: dict[str, Any]
    why: str

    def yaml(self) -> str:
        """The check as a case.yaml flow mapping: `{type: max_tool_calls, n: 20}`."""
        parts = []
        for key, value in self.check.items():
            shown = "[" + ", ".join(json.dumps(v) for v in value) + "]" if isinstance(value, list) else value
            parts.append(f"{key}: {shown}")
        return "{" + ", ".join(parts) + "}"


def suggest_trajectory_checks(t: Transcript, artifact: Candidate | None = None) -> list[TrajectoryHint]:
    """The trajectory checks that would catch this incident, most telling first. In a multi-turn
    session only the artifact's turn counts (its prompt is the case's task; what earlier prompts
    asked for is not the incident)."""
    start, end = _turn_span(t, artifact)
    calls = [(i, e) for i, e in enumerate(t.entries) if isinstance(e, ToolCall)]
    return [h for h in (_writes(t, artifact, calls, start, end), _loop([c for i, c in calls if start <= i < end]))
            if h is not None]


def _turn_span(t: Transcript, artifact: Candidate | None) -> tuple[int, int]:
    """The timeline indexes [start, end) of the turn that produced the artifact (all of it: no turns)."""
    all_turns = turns(t)
    number = turn_of(t, artifact.entry, all_turns) if artifact is not None and artifact.entry >= 0 else None
    if number is None:
        return 0, len(t.entries)
    end = all_turns[number].entry if number < len(all_turns) else len(t.entries)
    return all_turns[number - 1].entry, end


def _writes(t: Transcript, artifact: Candidate | None, calls: list[tuple[int, ToolCall]], start: int,
            end: int) -> TrajectoryHint | None:
    if artifact is not None and artifact.kind not in ("file", "final_answer"):
        return None  # a tool's output is the artifact: which files the agent should write is not said
    keep = artifact.path if artifact is not None and artifact.kind == "file" and artifact.path else None
    failed = {r.call_id for r in t.tool_results if r.is_error}
    read_before: set[str] = set()
    others: dict[str, str] = {}  # path -> how it was written
    for index, call in calls:
        op = file_operation(call)
        if op is None or (call.id and call.id in failed) or index >= end:
            continue  # not a file tool, the tool refused (nothing changed), or a later turn
        path = relative_path(op.path, t.root)
        if op.kind == "read":
            read_before.add(path)
        elif op.kind in ("write", "edit", "insert") and path != keep and index >= start:
            whole = op.kind == "write" and path in read_before
            others[path] = others.get(path) or ("rewrote it whole" if whole else "")
    if not others:
        return None
    named = [f"{p} ({how})" if how else p for p, how in list(others.items())[:4]]
    more = f" and {len(others) - 4} more" if len(others) > 4 else ""
    besides = f" besides the artifact {keep}" if keep else " (the artifact is its answer)"
    return TrajectoryHint({"type": "no_writes_outside", "paths": [keep] if keep else []},
                          f"the incident wrote {', '.join(named)}{more}{besides}")


def _loop(calls: list[ToolCall]) -> TrajectoryHint | None:
    seen: dict[str, int] = {}
    for c in calls:
        key = c.name + json.dumps(c.input, sort_keys=True, default=str)
        seen[key] = seen.get(key, 0) + 1
    top_key, top = max(seen.items(), key=lambda kv: kv[1], default=("", 0))
    if len(calls) < MANY_CALLS and top < REPEATS:
        return None
    n = max(MIN_BOUND, len(calls) // 2)
    if n >= len(calls):
        n = len(calls) - 1
    why = f"the incident made {plural(len(calls), 'tool call')}"
    if top >= REPEATS:
        name = next(c.name for c in calls if c.name + json.dumps(c.input, sort_keys=True, default=str) == top_key)
        why += f", the same {name} call {top} times (a loop)"
    return TrajectoryHint({"type": "max_tool_calls", "n": n}, why + f"; a run past {n} fails")
