"""The nouns of scarbook, as plain data: Case, Check, Scar, Run, Session, and the words their states take.

Everything here is pure data (no I/O) so the CLI, the TUI, history and the judge share one shape. Each
record is defined once, in the module named for what it is about; import them from `scarbook.models`.

    words.py      the state words (StrEnums): RunStatus, CheckStatus, Decision, CauseKind, GateMode, Isolation, ...
    case.py       Case, Check, Scar
    rubric.py     a rubric item's stable id
    label.py      a session's label: MAX_LABEL_CHARS, derived_label
    run.py        CheckResult, Cause, Attempt, WorkspaceDiff, AgentResult, RunRecord
    judge_detail.py  JudgeDetail (CheckResult.judge): JudgeItem, JudgedArtifact, CacheUse, BatchUse
    usage.py      Usage
    session.py    SessionInfo
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scarbook.models.case import Case, Check, Scar
    from scarbook.models.judge_detail import BatchUse, CacheUse, JudgedArtifact, JudgeDetail, JudgeItem
    from scarbook.models.run import AgentResult, Attempt, Cause, CheckResult, RunRecord, WorkspaceDiff
    from scarbook.models.session import SessionInfo
    from scarbook.models.usage import Usage
    from scarbook.models.words import (
        CAUSE_KINDS,
        RUN_STATUSES,
        STATUS_GLYPH,
        AgentStage,
        Band,
        CauseKind,
        CheckStatus,
        Decision,
        ExecutorType,
        GateMode,
        Isolation,
        ItemFinding,
        ItemFlag,
        Keep,
        MarginCall,
        RunStatus,
        SessionState,
        Undecided,
        Versus,
        Vote,
    )

__all__ = [
    "CAUSE_KINDS", "RUN_STATUSES", "STATUS_GLYPH", "AgentResult", "AgentStage", "Attempt", "Band", "BatchUse", "CacheUse",
    "Case", "Cause", "CauseKind", "Check", "CheckResult", "JudgeDetail", "JudgeItem", "JudgedArtifact", "CheckStatus", "Decision", "ExecutorType", "GateMode", "Isolation", "ItemFinding",
    "ItemFlag", "Keep", "MarginCall", "RunRecord", "RunStatus", "Scar", "SessionInfo", "SessionState", "Undecided", "Usage", "Versus", "Vote",
    "WorkspaceDiff",
]

# Each name's module, loaded on first use (PEP 562): reading scarbook.yaml and the cases needs the words and
# Case, not the run and session records (a dozen dataclasses: ~10 ms of `scarbook eval --dry-run`, issue 38.6).
_HOME = {
    **dict.fromkeys(("Case", "Check", "Scar"), "case"),
    **dict.fromkeys(("BatchUse", "CacheUse", "JudgedArtifact", "JudgeDetail", "JudgeItem"), "judge_detail"),
    **dict.fromkeys(("AgentResult", "Attempt", "Cause", "CheckResult", "RunRecord", "WorkspaceDiff"), "run"),
    **dict.fromkeys(("SessionInfo",), "session"),
    **dict.fromkeys(("Usage",), "usage"),
    **dict.fromkeys(("CAUSE_KINDS", "RUN_STATUSES", "STATUS_GLYPH", "AgentStage", "Band", "CauseKind", "CheckStatus", "Decision", "ExecutorType", "GateMode", "Isolation", "ItemFinding", "ItemFlag", "Keep", "MarginCall", "RunStatus", "SessionState", "Undecided", "Versus", "Vote"), "words"),
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value  # the next look-up is a plain attribute's
    return value
