"""`scarbook eval --rerun SESSION --only fail,error,infra`: run again just the cases that had such runs.

The re-run is a new session, linked to its source (`SessionInfo.rerun_of`): the source's records and
rates never change, and the new session's report says what it re-ran and why. Each picked case runs
its full N again (fresh runs, not only the runs that failed), so the new session's rate is an honest
measurement of that case; the selection is of cases, never of runs.
A session of several agents (eval --agents) is refused: `agent:` is none of the agents whose runs it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scarbook.errors import ScarbookError
from scarbook.models.words import CAUSE_KINDS, RUN_STATUSES, RunStatus

if TYPE_CHECKING:
    from scarbook.history.store import History
    from scarbook.models import RunRecord, SessionInfo
    from scarbook.models.session_parts import RerunLink

DEFAULT_ONLY = "fail,error,infra"
ONLY_WORDS = (*(s for s in RUN_STATUSES if s != RunStatus.PASS), *CAUSE_KINDS)


@dataclass
class RerunPick:
    source: SessionInfo
    only: tuple[str, ...]
    matched: dict[str, int] = field(default_factory=dict)  # case id -> runs that matched, in the source's order

    @property
    def case_ids(self) -> list[str]:
        return list(self.matched)

    def link(self) -> RerunLink:
        """What the new session records of its source (SessionInfo.rerun_of)."""
        from scarbook.models.session_parts import RerunLink  # (the session's records: loaded when one runs)

        return RerunLink.rerun(self.source.id, tuple(self.only), self.matched)


def parse_only(text: str) -> tuple[str, ...]:
    words = tuple(dict.fromkeys(w.strip() for w in text.split(",") if w.strip()))
    bad = [w for w in words if w not in ONLY_WORDS]
    if bad or not words:
        raise ScarbookError(f"--only takes a comma-separated list of {', '.join(ONLY_WORDS)} (run statuses and "
                            f"causes), got {text!r}")
    return words


def matches(run: RunRecord, only: tuple[str, ...]) -> bool:
    return run.status in only or (run.cause is not None and run.cause.kind in only)


def pick_rerun(history: History, ref: str, only_text: str) -> RerunPick:
    """The cases of session `ref` with a run matching `--only`, or a ScarbookError saying why none."""
    only = parse_only(only_text)
    source = history.resolve(ref)
    runs = history.runs(source.id, info=source)
    pick = RerunPick(source, only)
    for cid in source.case_ids:
        n = sum(1 for r in runs if r.case_id == cid and matches(r, only))
        if n:
            pick.matched[cid] = n
    if len(source.agent_names) > 1:  # its runs are several agents': `agent:` would re-run none of them
        names, cases = ",".join(source.agent_names), " ".join(pick.matched or source.case_ids)
        raise ScarbookError(f"--rerun {ref}: session {source.id} compared the agents {', '.join(source.agent_names)}, "
                            "and --rerun runs one agent (scarbook.yaml's agent:) — to run its cases again, "
                            f"`scarbook eval --agents {names} {cases}`")
    if not pick.matched:
        raise ScarbookError(f"session {source.id} has no {' / '.join(only)} runs: nothing to re-run")
    return pick
