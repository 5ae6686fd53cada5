"""The nouns of scarbook, as plain data: Case, Check, Scar, Run, Session, and the words their states take.

Everything here is pure data (no I/O) so the CLI, the TUI, history and the judge share one shape. Each
record is defined once, in the module named for what it is about; import them from `scarbook.models`.

    words.py      the state words (StrEnums): RunStatus, CheckStatus, Decision, CauseKind, GateMode, Isolation, ...
    case.py       Case, Check, Scar
    rubric.py     a rubric item's stable id
    run.py        CheckResult, Cause, Attempt, WorkspaceDiff, AgentResult, RunRecord
    judge_detail.py  JudgeDetail (CheckResult.judge): JudgeItem, JudgedArtifact, CacheUse, BatchUse
    usage.py      Usage
    session.py    SessionInfo
"""

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
