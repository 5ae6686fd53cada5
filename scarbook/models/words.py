"""The state words of scarbook as StrEnums: a run's status, a session's state, the gate's words, the
settings' words. A StrEnum is its string: history, JSON, YAML text and messages keep the plain words,
while mypy checks every comparison and assignment. Outside the enum definitions no state word is
compared or assigned as a bare string (tests/models/test_state_words.py greps for them).

Words only one wing speaks are defined in that wing (the demo agent's draws, the recorder's mode, a
Message Batch's state); the words here cross wings.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

# the words that pick a session by its place in the history (newest first), before any id or label: no
# session id or label may be one of them
SELECTORS = ("latest", "previous")


class _Word(StrEnum):
    """A state word: reads as the string it is in messages that quote it ({x!r})."""

    def __repr__(self) -> str:
        return repr(self.value)


class RunStatus(_Word):
    """A run's one status. String values: history, JSON and reports hold the plain words."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # no verdict could be reached (agent or harness trouble, the judge failed)
    # the rule checks passed but a judge check that bears on the verdict was skipped
    # (--skip-judge, or no API key in the TUI): no verdict, counted apart, never in a rate.
    UNJUDGED = "unjudged"


RUN_STATUSES: tuple[RunStatus, ...] = tuple(RunStatus)


class CheckStatus(_Word):
    """One check's result. A check after the first failure is SKIPPED (short-circuit, cost order)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the check could not reach a verdict (the judge failed, the check broke)
    SKIPPED = "skipped"


# The one glyph of each status, run or check (the strip of a case's runs, a run's checks), shared by
# the CLI table, the reports and the TUI.
STATUS_GLYPH: dict[str, str] = {RunStatus.PASS: "✓", RunStatus.FAIL: "✗", RunStatus.ERROR: "!",
                                RunStatus.UNJUDGED: "?", CheckStatus.SKIPPED: "-"}


class Vote(_Word):
    """The judge's verdict on one rubric item (upper case, as the judge's tool call gives it)."""

    PASS = "PASS"
    FAIL = "FAIL"


class ItemFinding(_Word):
    """What certifying one rubric item (or rule check) against the scar found (issue 35.2): judged K times
    on the failed artifact and K times on the good one."""

    CATCHING = "catching"  # fails the failed artifact every time, passes the good one every time
    BLIND = "blind"  # passes the failed artifact: it does not see the incident
    STRICT = "strict"  # fails the good artifact: it would fail a right result too
    SPLIT = "split"  # its K verdicts on one artifact disagree
    UNDECIDED = "no verdict"  # the judge could not be asked (no key, an error): nothing is known of it


class ItemFlag(_Word):
    """What a rubric item's figures across history say about it (issue 35.3; stats/items.py has the rules)."""

    DEAD = "dead"  # never failed in enough runs over enough sessions
    ALWAYS_FAILS = "always fails"
    REDUNDANT = "redundant"  # agrees with another item on almost every run both were judged in
    UNSTABLE = "unstable"  # the judge's repeated judgements of one artifact disagree
    JUDGE_UNRELIABLE = "judge unreliable"  # people's labels say the judge is often wrong on it


class CauseKind(_Word):
    """Whose fault a run that did not pass is (scarbook.run.causes); only INFRA is retried."""

    AGENT = "agent"
    INFRA = "infra"  # the machine's: rate limits, 5xx, OOM, a lost worker
    JUDGE = "judge"
    CASE = "case"  # the case's own: a check that broke, a seed that could not be laid


CAUSE_KINDS: tuple[CauseKind, ...] = tuple(CauseKind)


class AgentStage(_Word):
    """Where a run stopped short of the agent's end (scarbook.run.causes.AgentFacts.stage)."""

    RAN = ""  # it ran to its end (whatever it did)
    SEED = "seed"  # the workspace could not be laid
    START = "start"  # the agent could not be started
    DIFF = "diff"  # its workspace could not be read back
    WORKER_LOST = "worker-lost"  # a cluster lost the run's worker
    SCARBOOK = "scarbook"  # scarbook's own code failed inside the run
    SLOT = "slot"  # its sandbox slot failed (isolation: slot): its launcher died, or the slot did not start
    SLOT_CHANGED = "slot-changed"  # the run changed its sandbox slot (its launcher's limits, what cannot be wiped)


class Decision(_Word):
    """The gate's word for a case against its threshold (scarbook.stats.decisions, the SPRT's first three)."""

    ABOVE = "above"
    BELOW = "below"
    UNDECIDED = "undecided"
    NO_VERDICT = "no verdict"  # too few judged runs: none, whatever its few runs say


class Versus(_Word):
    """A candidate agent's call against the baseline on a case or the suite (scarbook.stats.head_to_head)."""

    BETTER = "better"
    WORSE = "worse"
    SAME = "same"  # within ±margin, shown by two one-sided tests
    UNDECIDED = "undecided"
    NO_VERDICT = "no verdict"  # a side with too few judged runs


class MarginCall(_Word):
    """The comparison gate's call (gate.compare): is a candidate worse than the baseline by more than the margin?"""

    INFERIOR = "inferior"  # shown worse by more than the margin: the gate goes red
    NON_INFERIOR = "non-inferior"  # shown not worse by more than the margin
    UNDECIDED = "undecided"
    NO_VERDICT = "no verdict"


class Band(_Word):
    """The colour band of a pass rate: green at or above bands.green, yellow at or above the threshold."""

    GREEN = "green"
    YELLOW = "yellow"
    RED = "red"
    NONE = "none"  # no rate to colour (no verdict)



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
    SANDBOX = "sandbox"  # refuse to run without it; one bwrap per run
    AUTO = "auto"  # the sandbox where it starts (in slots where they run), else unconfined and said
    SLOT = "slot"  # the sandbox, its runs in slots: one bwrap per concurrency slot (README: Threat model)


class Keep(_Word):
    """keep: which runs' workspaces stay after the session."""

    FAILED = "failed"  # failed and errored runs
    ALL = "all"  # every run (--keep-all)


class ExecutorType(_Word):
    """executor.type: where runs execute."""

    LOCAL = "local"  # an asyncio pool on this machine
    RAY = "ray"  # a Ray cluster (scarbook.run.ray)


class SessionState(_Word):
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

    @classmethod
    def parse(cls, value: Any) -> SessionState | str:
        """A known state as the enum; anything else kept as the string it is (old or foreign history)."""
        try:
            return cls(value)
        except ValueError:
            return value
