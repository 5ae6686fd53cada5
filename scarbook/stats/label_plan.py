"""Where the next labels help most: first what the calibration needs to be used at all, then every
stratum's first few labels, then the (case, judge verdict) strata whose labels shrink the corrected
intervals most, cases whose interval spans their threshold first.

1. Short of labels of one class (fewer than judge.calibration_min_per_class person-FAILs, say), the
   strata likeliest to give it go first: the judge's FAILs for FAIL labels (q0 rests on them), the
   judge's PASSes for PASS labels — all of their unlabelled items, as far as the batch goes.
2. Every stratum with items gets FLOOR labels (the judge's FAILs first): an estimate needs some
   labels in each stratum, or the other stratum's share stands in for it (q0 read 1.0 with an
   interval of [0, 1] when no judge-FAIL item was labelled).
3. The rest by precision:

A case's corrected rate has a variance; its judge part is a sum over the case's strata of
g_v² · var(r_v) (stats/corrected.py: the delta method). One more label in stratum v shrinks
var(r_v) by about var(r_v) / (n_v + m + 1), m the labels' worth of the pool it is shrunk toward. The
allocation is greedy, one label at a time, to the stratum with the largest shrink, weighted by
NEAR_WEIGHT for a case whose interval already clears its threshold (it is decided; a few labels
keep its calibration honest). Items are drawn at random *within* a stratum, so the stratified
estimate of q0 and q1 stays unbiased whatever the allocation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scarbook.models import Vote
from scarbook.stats.corrected import Corrected, correct
from scarbook.stats.judge_error import PRIOR_LABELS, ErrorModel

NEAR_WEIGHT = 0.1  # a decided case's share of the attention of one whose interval spans its threshold
FLOOR = 5  # labels every stratum gets before precision decides (the weight each case borrows from the pool)

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


@dataclass(frozen=True)
class LabelNeeds:
    """What the calibration must have to be used: the person's labels per class so far, and the
    least of each (judge.calibration_min_per_class)."""

    human_pass: int
    human_fail: int
    min_per_class: int


def _give(plan: dict[Stratum, int], keys: Sequence[Stratum], available: Mapping[Stratum, int], count: int,
          upto: Mapping[Stratum, int] | None = None) -> int:
    """Hand out up to `count` labels round-robin over `keys` (each up to what it has unlabelled and,
    with `upto`, up to that many); returns how many were given."""
    given = 0
    while given < count:
        moved = False
        for key in keys:
            cap = min(available.get(key, 0), upto[key] if upto is not None else available.get(key, 0))
            if given < count and plan.get(key, 0) < cap:
                plan[key] = plan.get(key, 0) + 1
                given += 1
                moved = True
        if not moved:
            break
    return given


def allocate(targets: list[CaseTarget], models: Mapping[str, ErrorModel], labelled: Mapping[Stratum, int],
             available: Mapping[Stratum, int], sample: int, needs: LabelNeeds | None = None) -> dict[Stratum, int]:
    """How many of the next `sample` labels go to each stratum (never more than it has unlabelled)."""
    plan: dict[Stratum, int] = {}
    keys = sorted(k for k, n in available.items() if n > 0)
    fails, passes = [k for k in keys if k[1] == Vote.FAIL], [k for k in keys if k[1] == Vote.PASS]
    left = sample
    if needs is not None:
        short_fail = needs.human_fail < needs.min_per_class
        short_pass = needs.human_pass < needs.min_per_class
        if short_fail and short_pass:
            left -= _give(plan, fails, available, (left + 1) // 2)
            left -= _give(plan, passes, available, left)
        elif short_fail:
            left -= _give(plan, fails, available, left)
        elif short_pass:
            left -= _give(plan, passes, available, left)
    floor = {k: max(0, FLOOR - labelled.get(k, 0)) for k in keys}
    left -= _give(plan, fails + passes, available, left, floor)
    base: dict[Stratum, float] = {}
    for t in targets:
        model = models.get(t.case_id)
        if model is None:
            continue
        fixed = t.corrected(model)
        open_ = fixed is not None and fixed.lo < t.threshold < fixed.hi
        for verdict, w in stratum_weights(t, model).items():
            base[(t.case_id, verdict)] = w * (1.0 if open_ else NEAR_WEIGHT)
    for _ in range(left):
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
