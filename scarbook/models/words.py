"""The state words of scarbook as StrEnums: a run's status, a session's state, the gate's words, the
settings' words. A StrEnum is its string: history, JSON, YAML and messages keep the plain words, while
mypy checks every comparison.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal


class RunStatus(StrEnum):
    """A run's one status. String values: history, JSON and reports hold the plain words."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # no verdict could be reached (agent or harness trouble, the judge failed)
    # the rule checks passed but a judge check that bears on the verdict was skipped
    # (--skip-judge, or no API key in the TUI): no verdict, counted apart, never in a rate.
    UNJUDGED = "unjudged"

    def __repr__(self) -> str:  # reads as the string it is in messages that quote it ({status!r})
        return repr(self.value)


CheckStatus = Literal["pass", "fail", "error", "skipped"]
RUN_STATUSES: tuple[RunStatus, ...] = tuple(RunStatus)

# The one glyph of each status, run or check (the strip of a case's runs, a run's checks), shared by
# the CLI table, the reports and the TUI.
STATUS_GLYPH: dict[str, str] = {RunStatus.PASS: "✓", RunStatus.FAIL: "✗", RunStatus.ERROR: "!",
                                RunStatus.UNJUDGED: "?", "skipped": "-"}
# Whose fault a run that did not pass is (scarbook.run.causes): the agent's, the machine's, the
# judge's or the case's own.
CAUSE_KINDS = ("agent", "infra", "judge", "case")


class _Word(StrEnum):
    """A word of scarbook.yaml or the command line: reads as the string it is in messages ({x!r})."""

    def __repr__(self) -> str:
        return repr(self.value)


# The words scarbook.yaml's settings take (scarbook/config.py declares where each is used); the order of
# the members is the order messages list them in.
class GateMode(_Word):
    """gate.mode / --gate: how pass rates become the exit code (scarbook.stats.decisions)."""

    EVIDENCE = "evidence"  # a case is red only when its runs show it below its threshold
    POINT = "point"  # red when its rate is below (the seed's rate >= threshold rule)


class Undecided(_Word):
    """gate.undecided / --undecided: what a case the evidence cannot decide does to the gate."""

    FAIL = "fail"  # no verdict: exit 3 (release gates)
    PASS = "pass"  # passes with a warning
    MORE = "more"  # runs again, up to --max-runs, until it decides


class Isolation(_Word):
    """isolation / --isolation: what confines the agent (scarbook.run.session.choose_isolation)."""

    NONE = "none"  # unconfined
    SANDBOX = "sandbox"  # refuse to run without it
    AUTO = "auto"  # the sandbox where it starts, else unconfined and said


class Keep(_Word):
    """keep: which runs' workspaces stay after the session."""

    FAILED = "failed"  # failed and errored runs
    ALL = "all"  # every run (--keep-all)


class SessionState(StrEnum):
    """How a session ended (or that it is still running). Only FINISHED can gate green."""

    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"  # Ctrl-C / Escape: finished runs kept, the rest never ran
    STOPPED_BUDGET = "stopped: budget"  # --max-cost reached
    ABORTED = "aborted"  # the same error would hit every run (the judge rejected the key)
    CRASHED = "crashed"  # an unexpected exception in the runner itself; traceback in crash.txt
    INTERRUPTED = "interrupted"  # its process died without finishing it (read from history)
    # its runs are done, its judge's requests wait in a Message Batch (eval --judge-batch): no verdict
    # until the results are in (`scarbook resume SESSION`); never read by a gate
    JUDGING = "judging"

    def __repr__(self) -> str:  # reads as the string it is in messages that quote it ({state!r})
        return repr(self.value)

    @classmethod
    def parse(cls, value: Any) -> SessionState | str:
        """A known state as the enum; anything else kept as the string it is (old or foreign history)."""
        try:
            return cls(value)
        except ValueError:
            return value
