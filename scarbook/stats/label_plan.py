"""Where the next labels help most: allocate them to the (case, judge verdict) strata whose labels
shrink the corrected intervals most, cases whose interval spans their threshold first.

A case's corrected rate has a variance; its judge part is a sum over the case's strata of
g_v² · var(r_v) (stats/corrected.py: the delta method). One more label in stratum v shrinks
var(r_v) by about var(r_v) / (n_v + m + 1), m the labels' worth of the pool it is shrunk toward. The
allocation is greedy, one label at a time, to the stratum with the largest shrink, weighted by
NEAR_WEIGHT for a case whose interval already clears its threshold (it is decided; a few labels
keep its calibration honest). Items are drawn at random *within* a stratum, so the stratified
estimate of q0 and q1 stays unbiased whatever the allocation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scarbook.models import Vote
from scarbook.stats.corrected import Corrected, correct
from scarbook.stats.judge_error import PRIOR_LABELS, ErrorModel

NEAR_WEIGHT = 0.1  # a decided case's share of the attention of one whose interval spans its threshold

Stratum = tuple[str, str]  # (case id, judge verdict)


@dataclass(frozen=True)
class CaseTarget:
    """A judged case in its latest session: the counts stats.corrected.judged_split gives, and its threshold."""

    case_id: str
    passes: int
    judge_fails: int
    rule_fails: int
    items: int
    threshold: float

    def corrected(self, model: ErrorModel) -> Corrected | None:
        return correct(self.passes, self.judge_fails, self.rule_fails, model, items=self.items,
                       threshold=self.threshold)


def stratum_weights(target: CaseTarget, model: ErrorModel) -> dict[str, float]:
    """g_v² · var(r_v) for v in PASS, FAIL: the judge variance each stratum of the case carries
    (a case's own model has one component: W, r_P, r_F)."""
    fixed = target.corrected(model)
    if fixed is None or len(fixed.judge_parts) != 3:
        return {}
    return {Vote.PASS: fixed.judge_parts[1], Vote.FAIL: fixed.judge_parts[2]}


def allocate(targets: list[CaseTarget], models: Mapping[str, ErrorModel], labelled: Mapping[Stratum, int],
             available: Mapping[Stratum, int], sample: int) -> dict[Stratum, int]:
    """How many of the next `sample` labels go to each stratum (never more than it has unlabelled)."""
    base: dict[Stratum, float] = {}
    for t in targets:
        model = models.get(t.case_id)
        if model is None:
            continue
        fixed = t.corrected(model)
        open_ = fixed is not None and fixed.lo < t.threshold < fixed.hi
        for verdict, w in stratum_weights(t, model).items():
            base[(t.case_id, verdict)] = w * (1.0 if open_ else NEAR_WEIGHT)
    plan: dict[Stratum, int] = {}
    for _ in range(sample):
        best, gain = None, 0.0
        for key, w in base.items():
            k = plan.get(key, 0)
            if k >= available.get(key, 0):
                continue
            n0 = labelled.get(key, 0) + PRIOR_LABELS
            g = w * n0 * (1 / (n0 + k) - 1 / (n0 + k + 1))  # the variance falls as n0 / (n0 + k)
            if best is None or g > gain:
                best, gain = key, g
        if best is None:
            break
        plan[best] = plan.get(best, 0) + 1
    return plan
