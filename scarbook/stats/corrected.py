"""A judged pass rate corrected for the judge's measured error (Rogan–Gladen), with its 95% interval.

Runs whose rule checks failed are fails whatever the judge says; only the rest — the *judged part*,
whose verdict the judge decided — is corrected. With p the judge's PASS share in the judged part,
s the judged part's share of the case's runs, and the judge's run-level error rates q0, q1:

    theta = (p + q0 − 1) / (q0 + q1 − 1), clipped to [0, 1];  corrected rate = s · theta

The 95% interval is the delta method over p, s and the calibration's own inputs (see
stats/judge_error.py), so it widens with the judge's uncertainty as well as the runs'. p uses the
Agresti–Coull adjusted proportion for its variance and the interval is centred on the adjusted
estimate (as Lang & Reiczigel 2014 do for prevalence corrected by an imperfect test).

The variance splits into the runs' part (p, s) and the judge's part (the calibration inputs). A
case whose interval spans its threshold mainly through the judge's part is *judge-limited*: more
runs will not decide it, more labels will; `labels_to_decide` estimates how many.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scarbook.models import CheckStatus, RunRecord, RunStatus
from scarbook.stats.judge_error import ErrorModel, Param, cells, gradient, proportion, q0_of, q1_of
from scarbook.stats.rates import Z95


@dataclass(frozen=True)
class Corrected:
    rate: float
    lo: float
    hi: float
    q0: float  # run-level, as used
    q1: float
    labels: int
    calibrated_at: str
    var_runs: float
    var_judge: float
    judge_limited: bool = False
    labels_to_decide: int | None = None  # about this many more labels would decide the threshold
    centre: float = math.nan  # the interval's centre (at the adjusted p, unclipped)
    judge_parts: tuple[float, ...] = ()  # g² · var of each calibration input (ErrorModel.params order)

    @property
    def evidence(self) -> tuple[float, float]:
        """(estimate, standard error) for stats.decisions.CaseEvidence.corrected: the interval's
        centre and spread, so a decision agrees with the interval printed beside it."""
        return self.centre, self.se

    @property
    def se(self) -> float:
        """The standard error the interval is built on (runs' and judge's variance together)."""
        return math.sqrt(self.var_runs + self.var_judge)

    def to_dict(self) -> dict:
        return {"rate": round(self.rate, 4), "ci": [round(self.lo, 4), round(self.hi, 4)],
                "q0": round(self.q0, 4), "q1": round(self.q1, 4), "labels": self.labels,
                "calibrated_at": self.calibrated_at, "judge_limited": self.judge_limited,
                "labels_to_decide": self.labels_to_decide}


def theta(p: float, q0: float, q1: float, clip: bool = True) -> float:
    """Rogan–Gladen: the true PASS share behind a judge PASS share p, clipped to [0, 1] (the
    interval is built on the unclipped value: at a clipped point every slope would read 0); NaN
    when q0 + q1 <= 1."""
    den = q0 + q1 - 1
    if den <= 1e-9:
        return math.nan
    value = (p + q0 - 1) / den
    return min(1.0, max(0.0, value)) if clip else value


def correct(passes: int, judge_fails: int, rule_fails: int, model: ErrorModel, *, items: int = 1,
            threshold: float | None = None, calibrated_at: str = "", z: float = Z95) -> Corrected | None:
    """The corrected rate of a case: `passes` and `judge_fails` are the judged part's runs,
    `rule_fails` the runs a rule check failed. `items`: rubric items a run's verdict needs.
    None when nothing was judged or the judge is no better than chance (q0 + q1 <= 1)."""
    judged = passes + judge_fails
    if not judged:
        return None
    decided = judged + rule_fails
    weights = [c.weight for c in model.components]
    m = max(1, items)

    def run_rates(x: Sequence[float]) -> tuple[float, float]:
        table = cells(x, weights)
        return q0_of(table), q1_of(table) ** m

    def rate(x: Sequence[float], clip: bool = True) -> float:
        q0, q1 = run_rates(x[2:])
        t = theta(x[0], q0, q1, clip) if not (math.isnan(q0) or math.isnan(q1)) else math.nan
        return x[1] * t

    def unclipped(x: Sequence[float]) -> float:
        return rate(x, clip=False)

    p_hat = proportion(passes, judged)
    adj = (passes + z * z / 2) / (judged + z * z)
    s = proportion(judged, decided) if rule_fails else Param(1.0, 0.0)
    calib = model.params
    point = [p_hat.value, s.value] + [c.value for c in calib]
    value = rate(point)
    if math.isnan(value):
        return None
    q0, q1 = run_rates(point[2:])
    centre_x = [adj, s.value] + point[2:]
    centre = unclipped(centre_x)
    grads = gradient(unclipped, centre_x)
    var_runs = grads[0] ** 2 * p_hat.var + grads[1] ** 2 * s.var
    parts = tuple(g * g * c.var for g, c in zip(grads[2:], calib, strict=True))
    var_judge = sum(parts)
    half = z * math.sqrt(var_runs + var_judge)
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    limited, more = False, None
    if threshold is not None and lo < threshold < hi:
        limited = var_judge > var_runs
        more = labels_to_decide(value, threshold, var_runs, var_judge, model.labels, z)
    return Corrected(value, lo, hi, q0, q1, model.labels, calibrated_at, var_runs, var_judge, limited, more, centre, parts)


def labels_to_decide(rate: float, threshold: float, var_runs: float, var_judge: float, labels: int,
                     z: float = Z95) -> int | None:
    """About how many more labels would shrink the interval off the threshold, if the runs' own
    noise allows it (the judge's variance taken to fall as 1/labels); None when no number of
    labels will (more runs are needed first)."""
    room = ((rate - threshold) / z) ** 2 - var_runs
    if room <= 0 or var_judge <= 0 or labels <= 0:
        return None
    needed = labels * var_judge / room
    return max(1, math.ceil(needed - labels))


def judged_split(runs: Iterable[RunRecord]) -> tuple[int, int, int, int] | None:
    """(passes, judge fails, rule fails, rubric items a run needs) of a case whose verdict depends on
    an LLM judge; None when no run was graded by one. A fail is the judge's when every other check
    passed; a run a rule check failed is a fail whatever the judge says."""
    passes = judge_fails = rule_fails = items = 0
    judged = False
    for run in runs:
        judge_records = [c.judge for c in run.checks if c.type == "llm_judge" and c.judge]
        judged = judged or bool(judge_records)
        items = max(items, sum(len(j.get("items") or []) for j in judge_records))
        if run.status == RunStatus.PASS:
            passes += 1
        elif run.status == RunStatus.FAIL:
            if any(c.type != "llm_judge" and c.status == CheckStatus.FAIL for c in run.checks):
                rule_fails += 1
            else:
                judge_fails += 1
    return (passes, judge_fails, rule_fails, max(1, items)) if judged else None
