"""`--against baseline|SESSION` as `eval` takes it: the blessed session a session is compared with, loaded
(history/baseline.py: `load_against`, also what `resume` and `report` read) and checked before any run starts."""

from __future__ import annotations

from scarbook.errors import ScarbookError
from scarbook.history.baseline import Baseline, load_against, partial_mismatch_with
from scarbook.models import Case
from scarbook.run.plan import SessionSite


def resolve_against(site: SessionSite, ref: str, cases: list[Case], skip_judge: bool) -> Baseline:
    """The baseline to gate against, checked before any run starts (exit 2 if unusable)."""
    baseline = load_against(ref, site.root, site.history)
    will_be_partial = skip_judge and any(c.judge_checks for c in cases)
    problem = partial_mismatch_with(baseline, will_be_partial)
    if problem:
        raise ScarbookError(problem)
    return baseline
