"""What a check sees: the workspace after the agent ran, its final output, the diff, and (for the
trajectory checks) the run's transcript and the agent's usage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from scarbook.checks.spec import MAX_READ, REGEX_TIMEOUT_S
from scarbook.models import Case, Check, CheckResult, Usage, WorkspaceDiff

if TYPE_CHECKING:  # a run's transcript, read only for a case with trajectory checks (run/session_run.py)
    from scarbook.transcripts.model import Transcript


class CheckGrader(Protocol):
    """What an llm_judge check asks of the judge (scarbook.judge.Grader is the whole protocol)."""

    async def grade(self, check: Check, ctx: CheckContext) -> CheckResult: ...


@dataclass
class CheckContext:
    case: Case
    workspace: Path
    output: str
    diff: WorkspaceDiff = field(default_factory=WorkspaceDiff)
    judge: CheckGrader | None = None  # None when judging is skipped
    command_timeout_s: float = 60.0
    env_allow: tuple[str, ...] = ()  # the agent's allow-listed variables; a command check gets them too
    sandbox: Any = None  # the agent's scarbook.agents.sandbox.Sandbox: a command check runs in it too
    # The run's transcript, loaded when the case has a trajectory check. None with `transcript_missing`
    # saying why: the run should have had one (a trajectory check fails, the case's fault). None with
    # "" : none is expected here (verify of a good artifact): trajectory checks are skipped.
    transcript: Transcript | None = None
    transcript_missing: str = ""
    # Where an `artifact: {tool, field}` is read from instead of `transcript` (verify: the scar's artifact put
    # as the input of the last call to that tool); the trajectory checks never read it.
    artifact_calls: Transcript | None = None
    agent_usage: Usage | None = None  # what the agent reported in $SCARBOOK_USAGE (or its preset did)
    # True: `transcript` is the recorder's own list of the run's calls and its usage was measured by scarbook;
    # False: the figures are the agent's own report (its files), and the budget checks say "reported".
    measured: bool = False
    # With `measured`: the calls whose tokens the recorder could not count (a stream the agent cut off before its
    # usage came, a call unanswered when it ended). A budget is then not shown kept, whatever the rest add up to.
    unmeasured: tuple[str, ...] = ()
    price: Callable[[str, Usage], float] | None = None  # USD for tokens on a model (the judge's price table)
    max_read: int = MAX_READ  # bytes of a file a rule check reads at most (scarbook.yaml's max_read_bytes)
    regex_timeout_s: float = REGEX_TIMEOUT_S  # seconds a regex or output_regex check matches for at most
    project_tag: str = ""  # $SCARBOOK_PROJECT for a command check's program (proc/leftovers.py)
