"""`--against baseline|SESSION`: the blessed session a session is compared with, loaded and checked before
any run starts (`eval`), or once the verdicts are in (`resume`, `report`)."""

from __future__ import annotations

from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.history.baseline import Baseline, baseline_from_session, load_baseline, partial_mismatch_with
from scarbook.history.store import History
from scarbook.models import Case, SessionInfo, SessionState
from scarbook.run.plan import SessionSite


def load_against(ref: str, root: Path, history: History) -> Baseline:
    """`baseline` (the committed file in the project folder `root`) or a past session of `history` (id,
    label, latest, previous) as a baseline."""
    if ref == "baseline":
        return load_baseline(root)
    info = history.resolve(ref)
    refuse_judging(info)
    baseline = baseline_from_session(info, history.runs(info.id), info.finished_at or info.started_at)
    baseline.source = "session"
    return baseline


def refuse_judging(info: SessionInfo) -> None:
    """A session whose judge batch is not collected has no verdicts: no gate or baseline reads it."""
    if info.state == SessionState.JUDGING:
        raise ScarbookError(f"session {info.id} is still judging (its judge batch is not collected): it has no "
                            f"verdicts yet — `scarbook resume {info.id}` collects them")


def resolve_against(site: SessionSite, ref: str, cases: list[Case], skip_judge: bool) -> Baseline:
    """The baseline to gate against, checked before any run starts (exit 2 if unusable)."""
    baseline = load_against(ref, site.root, site.history)
    will_be_partial = skip_judge and any(c.judge_checks for c in cases)
    problem = partial_mismatch_with(baseline, will_be_partial)
    if problem:
        raise ScarbookError(problem)
    return baseline
