"""A judged pass rate corrected for the judge's measured error (Rogan–Gladen), with its 95% interval.

Runs whose rule checks failed are fails whatever the judge says; only the rest — the *judged part*,
whose verdict the judge decided — is corrected. With p the judge's PASS share in the judged part,
s the judged part's share of the case's runs, and the judge's run-level error rates q0, q1:

    theta = (p + q0 − 1) / (q0 + q1 − 1), clipped to [0, 1];  corrected rate = s · theta

The interval printed beside it is the gate's own (stats/corrected_gate.py): the two exact one-sided
tests at alpha inverted, with the judge's error rates bounded by the calibration's counts — a
1 − 2·alpha interval (90% at alpha 5%) that says above exactly when the gate does. A case the runs
would decide were the judge's error known exactly, but that the calibration's uncertainty leaves
open, is *judge-limited*: more labels, not more runs, decide it; `labels_to_decide` says about how many.

The delta method over p, s and the calibration's inputs (p at its Agresti–Coull adjusted value, as
Lang & Reiczigel 2014 do for a prevalence corrected by an imperfect test) still splits the variance
into the runs' part and the judge's part per calibration input: the label planner
(stats/label_plan.py) sends labels where they shrink it most.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scarbook.models import CheckStatus, RunRecord, RunStatus
from scarbook.stats import corrected_gate as gate
from scarbook.stats.corrected_gate import CorrectedEvidence, Unbounded
from scarbook.stats.judge_error import ErrorModel, Param, cells, gradient, proportion, q0_of, q1_of
from scarbook.stats.rates import Z95

ALPHA = 0.05  # the gate's default level: the interval is 1 - 2·alpha


PRACTICAL_LABELS = 1_000  # past this many more labels, labelling alone is no plan: the words say so


def more_labels_words(more: int, then: str) -> str:
    """"about 37 more labels {then}"; past PRACTICAL_LABELS, and why no one labels that many and what narrows it
    faster (a judge-limited case this close to its threshold: `calibrate --report` said "about 48698 more labels")."""
    text = f"about {more:,} more label{'' if more == 1 else 's'} {then}"
    if more > PRACTICAL_LABELS:
        text += (" — more than anyone labels: the case sits this close to its threshold for the judge's measured "
                 "error, and a judge that errs less narrows it faster")
    return text

@dataclass(frozen=True)
class Corrected:
    rate: float
    lo: float  # the gate's interval (stats/corrected_gate.py): the case is above when lo > threshold
    hi: float
    q0: float  # run-level, as used
    q1: float
    labels: int
    calibrated_at: str
    var_runs: float  # the delta method's split of the variance (the label planner's input)
    var_judge: float
    judge_limited: bool = False
    labels_to_decide: int | None = None  # about this many more labels would decide the threshold
    centre: float = math.nan  # the delta method's centre (at the adjusted p, unclipped)
    judge_parts: tuple[float, ...] = ()  # g² · var of each calibration input (ErrorModel.params order)
    evidence: CorrectedEvidence | None = None  # what the gate's exact test reads (decisions.CaseEvidence)
    level: float = 1 - 2 * ALPHA  # the interval's level: two one-sided tests at alpha
    alpha: float = ALPHA  # the level of each of the two one-sided tests the interval inverts

    @functools.cached_property
    def unbounded(self) -> Unbounded | None:
        """Why the interval is 0–100% (corrected_gate.why_unbounded); None when it is not. Worked out when a
        report asks (it searches label counts), not where only the decision is wanted (the runner's looks)."""
        if self.evidence is None or self.lo > 0 or self.hi < 1:
            return None
        return gate.why_unbounded(self.evidence, self.alpha)

    @property
    def se(self) -> float:
        """The delta method's standard error (runs' and judge's variance together)."""
        return math.sqrt(self.var_runs + self.var_judge)

    @property
    def ci_label(self) -> str:
        """"≈90% CI": the interval's level, said wherever it is printed."""
        return f"≈{round(100 * self.level, 1):g}% CI"

    def to_dict(self) -> dict:
        return {"rate": round(self.rate, 4), "ci": [round(self.lo, 4), round(self.hi, 4)],
                "ci_level": round(self.level, 4),
                "q0": round(self.q0, 4), "q1": round(self.q1, 4), "labels": self.labels,
                "calibrated_at": self.calibrated_at, "judge_limited": self.judge_limited,
                "labels_to_decide": self.labels_to_decide, "unbounded": _unbounded_dict(self.unbounded)}


def _unbounded_dict(u: Unbounded | None) -> dict | None:
    if u is None:
        return None
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)
    return {"false_pass": r(u.false_pass), "missed": r(u.missed), "exact_ci": [r(u.exact[0]), r(u.exact[1])],
            "labels_to_bound": u.labels}


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
            threshold: float | None = None, calibrated_at: str = "", alpha: float = ALPHA) -> Corrected | None:
    """The corrected rate of a case: `passes` and `judge_fails` are the judged part's runs,
    `rule_fails` the runs a rule check failed. `items`: rubric items a run's verdict needs. Its
    interval is the gate's at `alpha` (1 - 2·alpha). None when nothing was judged or the judge is no
    better than chance (q0 + q1 <= 1)."""
    judged = passes + judge_fails
    if not judged:
        return None
    decided = judged + rule_fails
    m = max(1, items)

    def run_rates(x: Sequence[float]) -> tuple[float, float]:
        return _run_rates(model, x, m)

    def rate(x: Sequence[float], clip: bool = True) -> float:
        return x[1] * _theta(x[0], *run_rates(x[2:]), clip)

    def unclipped(x: Sequence[float]) -> float:
        return rate(x, clip=False)

    p_hat = proportion(passes, judged)
    z = Z95
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
    basis = model.basis(m)
    if basis is None:  # a model built by hand, without the counts behind it: the delta interval, no gate
        half = z * math.sqrt(var_runs + var_judge)
        return Corrected(value, max(0.0, centre - half), min(1.0, centre + half), q0, q1, model.labels,
                         calibrated_at, var_runs, var_judge, centre=centre, judge_parts=parts, level=0.95)
    evidence = CorrectedEvidence(passes, judge_fails, rule_fails, basis)
    lo, hi = gate.decision_interval(evidence, alpha)
    limited, more = False, None
    if threshold is not None and lo <= threshold <= hi:
        limited = gate.judge_limited(evidence, threshold, alpha)
        more = gate.labels_to_decide(evidence, threshold, alpha) if limited else None
    return Corrected(value, lo, hi, q0, q1, model.labels, calibrated_at, var_runs, var_judge, limited, more, centre,
                     parts, evidence, 1 - 2 * alpha, alpha)


def gate_evidence(passes: int, judge_fails: int, rule_fails: int, model: ErrorModel, *,
                  items: int = 1) -> CorrectedEvidence | None:
    """`correct(...).evidence` alone: what the gate's exact test reads of a judged case, without the rate,
    its interval (a search over the calibration's box: most of correct's cost) or the variance split.
    For `undecided: more`'s looks, which read only decisions (run/runner.py). None where correct's evidence
    is: nothing judged, a judge no better than chance, a model without the counts behind it."""
    judged = passes + judge_fails
    if not judged:
        return None
    m = max(1, items)
    if math.isnan(_theta(proportion(passes, judged).value, *_run_rates(model, [c.value for c in model.params], m))):
        return None
    basis = model.basis(m)
    return CorrectedEvidence(passes, judge_fails, rule_fails, basis) if basis is not None else None


def _run_rates(model: ErrorModel, calib: Sequence[float], items: int) -> tuple[float, float]:
    """A run's (q0, q1) at the calibration's inputs `calib` (ErrorModel.params order), graded on `items`."""
    table = cells(calib, [c.weight for c in model.components])
    return q0_of(table), q1_of(table) ** items


def _theta(p: float, q0: float, q1: float, clip: bool = True) -> float:
    """theta, NaN where either error rate is undefined."""
    return theta(p, q0, q1, clip) if not (math.isnan(q0) or math.isnan(q1)) else math.nan


def judged_split(runs: Iterable[RunRecord]) -> tuple[int, int, int, int] | None:
    """(passes, judge fails, rule fails, rubric items a run needs) of a case whose verdict depends on
    an LLM judge; None when no run was graded by one. A fail is the judge's when every other check
    passed; a run a rule check failed is a fail whatever the judge says."""
    passes = judge_fails = rule_fails = items = 0
    judged = False
    for run in runs:
        judge_records = [c.judge for c in run.checks if c.type == "llm_judge" and c.judge]
        judged = judged or bool(judge_records)
        items = max(items, sum(len(j.items) for j in judge_records))
        if run.status == RunStatus.PASS:
            passes += 1
        elif run.status == RunStatus.FAIL:
            if any(c.type != "llm_judge" and c.status == CheckStatus.FAIL for c in run.checks):
                rule_fails += 1
            else:
                judge_fails += 1
    return (passes, judge_fails, rule_fails, max(1, items)) if judged else None
