"""Transcript import: parse agent logs of every supported format into one `Transcript`, then
offer the pieces of a case (candidate artifacts, the task, seed files); scarbook.cases.transcript_draft writes the draft case.

Public API (what the CLI and the TUI call):
    load_transcript(path, format=None) -> Transcript        # FORMATS lists the names
    candidates(t) -> list[Candidate]; format_candidates(cands) -> str; default_artifact(cands)
    suggest_task(t, turn=None) -> str; pick_task(t, turn, exact=False) -> TaskPick (follow-ups joined); turns(t); turn_of(t, entry)
    suggest_seeds(t, start=None) -> list[SeedSuggestion] (the project as it stood when the task began at entry
    `start`: task_start(t, turn, exact)); default: the default draft's task

    preview(text, n)

May use: fs, models, errors, text. Never checks, agents or anything above: the agents
wing imports transcripts (the codex preset reads its stream with transcripts.codex).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scarbook.transcripts.case_pieces import (
        Candidate,
        TaskPick,
        candidates,
        default_artifact,
        describe_call,
        format_candidates,
        is_follow_up,
        pick_task,
        suggest_task,
        turn_of,
        turns,
    )
    from scarbook.transcripts.detect import FORMATS, load_transcript
    from scarbook.transcripts.model import FileRead, FileWritten, Message, ToolCall, ToolResult, Transcript
    from scarbook.transcripts.seeds import SeedSuggestion, suggest_seeds, task_start
    from scarbook.transcripts.text import preview

# Each name's module, loaded when the name is first asked for: importing the package (as the checks
# do, for the Transcript the trajectory checks read) does not load every reader.
_HOME = {
    **dict.fromkeys(("Candidate", "TaskPick", "candidates", "default_artifact", "describe_call", "format_candidates",
                     "is_follow_up", "pick_task", "suggest_task", "turn_of", "turns"), "case_pieces"),
    **dict.fromkeys(("FORMATS", "load_transcript"), "detect"),
    **dict.fromkeys(("FileRead", "FileWritten", "Message", "ToolCall", "ToolResult", "Transcript"), "model"),
    **dict.fromkeys(("SeedSuggestion", "suggest_seeds", "task_start"), "seeds"),
    "preview": "text",
}

__all__ = [
    "FORMATS", "Candidate", "TaskPick", "is_follow_up", "pick_task", "FileRead", "FileWritten", "Message", "SeedSuggestion", "ToolCall", "ToolResult",
    "Transcript", "candidates", "default_artifact", "describe_call", "format_candidates", "load_transcript",
    "preview", "suggest_seeds", "suggest_task", "task_start", "turn_of", "turns",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
