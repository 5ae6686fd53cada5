"""The judge's measured error: sensitivity q1, specificity q0, agreement and kappa, with 95% intervals.

The calibration sample is stratified by the judge's verdict (half judge-PASS, half judge-FAIL, per
case), so it is not a random sample of judged items: scoring it as one over-weights the judge's
FAILs. Within a stratum (case, judge verdict) the items to label are drawn at random, so the share
of human PASSes there estimates r = P(person PASS | judge verdict, case) without bias. With W the
share of the case's judged items the judge passed (known from history: the population the sample
was drawn from), the 2x2 table of (person, judge) over that population is

    P(person PASS, judge PASS) = W·r_P        P(person PASS, judge FAIL) = (1−W)·r_F
    P(person FAIL, judge PASS) = W·(1−r_P)    P(person FAIL, judge FAIL) = (1−W)·(1−r_F)

and q1 = P(judge PASS | person PASS), q0 = P(judge FAIL | person FAIL), agreement and kappa follow
from it. Pooled over cases, each case's table is weighted by its share of the judged items (the
Horvitz–Thompson estimate: each label counts for N_h / n_h items of its stratum h).

Per case, r_P and r_F are shrunk toward the pooled values with the weight of PRIOR_LABELS labels:
r_case = (x + m·r_pool) / (n + m). A case with no labels gets the pool's values. Its variance counts
that the pool holds the case's own labels: (n²·v + m²·v_pool + 2·n·m·w·v) / (n + m)², w the case's
weight in the pool (a lone case is its own pool, and keeps its own variance).

Intervals: the delta method over the independent inputs (each r, each W) with a numerical gradient;
each input's variance uses the Agresti–Coull adjusted proportion (x + z²/2)/(n + z²), so a stratum
where every label agreed still has uncertainty. The point estimate is the plain one. Pure numbers:
takes counts, returns estimates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scarbook.models import Vote
from scarbook.stats.rates import Z95

PRIOR_LABELS = 5.0  # how many labels' weight the pool has when a case's own labels are few


@dataclass(frozen=True)
class Stratum:
    """One (case, judge verdict) stratum: how many judged items it has in history, and the
    person's labels on the ones drawn from it."""

    case_id: str
    judge: Vote | str  # the judge's verdict on every item in the stratum
    population: int
    human_pass: int
    human_fail: int

    @property
    def n(self) -> int:
        return self.human_pass + self.human_fail


@dataclass(frozen=True)
class Interval:
    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict:
        return {"value": _r(self.value), "ci": [_r(self.lo), _r(self.hi)]}


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


@dataclass(frozen=True)
class Param:
    """An input of the error model: a proportion and the variance of its estimate."""

    value: float
    var: float


@dataclass(frozen=True)
class Share:
    """A proportion as the binomial counts it rests on: x of n (effective counts for a share shrunk
    toward a pool: the pool's labels of other cases add up to PRIOR_LABELS trials)."""

    x: float
    n: float

    @property
    def value(self) -> float:
        return self.x / self.n if self.n > 0 else 0.5


@dataclass(frozen=True)
class JudgeBasis:
    """What a case's judge error was measured from, as counts: the judge's PASS share W among the
    case's judged items, and the person's PASS share among the labelled judge-PASS (r_P) and
    judge-FAIL (r_F) items; `items` rubric items a run's verdict needs. The exact gate
    (stats/corrected_gate.py) bounds each of them with a Clopper–Pearson interval."""

    w: Share
    r_pass: Share
    r_fail: Share
    items: int = 1

    def with_more_labels(self, factor: float) -> JudgeBasis:
        """The same shares from `factor` times as many labels (how many more labels would decide)."""
        def scale(s: Share) -> Share:
            return Share(s.x * factor, s.n * factor)
        return JudgeBasis(self.w, scale(self.r_pass), scale(self.r_fail), self.items)


def proportion(x: float, n: float, z: float = Z95) -> Param:
    """x of n: the plain share, with the Agresti–Coull variance (never 0, even at 0/n or n/n)."""
    adj = (x + z * z / 2) / (n + z * z)
    return Param(x / n if n else 0.5, adj * (1 - adj) / (n + z * z))


def delta_interval(f: Callable[[Sequence[float]], float], params: Sequence[Param],
                   z: float = Z95, clip: tuple[float, float] = (0.0, 1.0)) -> tuple[Interval, float]:
    """f at the params, its 95% delta-method interval (numerical gradient, independent inputs),
    and its variance. The interval is clipped to `clip`; NaN when f is not defined at the point."""
    x = [p.value for p in params]
    value = f(x)
    if math.isnan(value):
        return Interval(math.nan, math.nan, math.nan), math.nan
    var = sum(g * g * p.var for g, p in zip(gradient(f, x), params, strict=True))
    half = z * math.sqrt(var)
    return Interval(value, max(clip[0], value - half), min(clip[1], value + half)), var


def gradient(f: Callable[[Sequence[float]], float], x: Sequence[float], h: float = 1e-6) -> list[float]:
    """Central differences, one-sided at the edges of [0, 1] (every input is a proportion)."""
    grads = []
    for i, xi in enumerate(x):
        lo, hi = max(0.0, xi - h), min(1.0, xi + h)
        up, down = list(x), list(x)
        up[i], down[i] = hi, lo
        fu, fd = f(up), f(down)
        grads.append(0.0 if math.isnan(fu) or math.isnan(fd) or hi == lo else (fu - fd) / (hi - lo))
    return grads


@dataclass(frozen=True)
class Component:
    """One case in an error model: its weight among the cases pooled (fixed), the judge's PASS
    share W in it, and r_P, r_F (person PASS given judge PASS / FAIL)."""

    weight: float
    w: Param
    r_pass: Param
    r_fail: Param


def cells(x: Sequence[float], weights: Sequence[float]) -> tuple[float, float, float, float]:
    """(person PASS & judge PASS, person PASS & judge FAIL, person FAIL & judge PASS, both FAIL)."""
    pp = pf = fp = ff = 0.0
    for i, s in enumerate(weights):
        w, rp, rf = x[3 * i], x[3 * i + 1], x[3 * i + 2]
        pp += s * w * rp
        pf += s * (1 - w) * rf
        fp += s * w * (1 - rp)
        ff += s * (1 - w) * (1 - rf)
    return pp, pf, fp, ff


def _div(a: float, b: float) -> float:
    return a / b if b > 1e-12 else math.nan


def q1_of(c):  # sensitivity: judge PASS | person PASS
    return _div(c[0], c[0] + c[1])


def q0_of(c):  # specificity: judge FAIL | person FAIL
    return _div(c[3], c[2] + c[3])


def agreement_of(c):
    return c[0] + c[3]


def kappa_of(c):
    person, judge = c[0] + c[1], c[0] + c[2]
    expected = person * judge + (1 - person) * (1 - judge)
    return _div(agreement_of(c) - expected, 1 - expected) if expected < 1 - 1e-12 else math.nan


@dataclass
class ErrorModel:
    """The judge's error for one case (or pooled): the components and what follows from them."""

    components: list[Component]
    labels: int
    human_pass: int
    human_fail: int
    case_id: str = ""  # "" for the pool
    # the counts behind the estimate (W, r_P, r_F), for the gate's exact test: set by estimate_error
    counts: tuple[Share, Share, Share] | None = None

    def basis(self, items: int = 1) -> JudgeBasis | None:
        """The counts behind this model's q0, q1 for a run graded on `items` rubric items."""
        return None if self.counts is None else JudgeBasis(*self.counts, items=max(1, items))

    @property
    def params(self) -> list[Param]:
        return [p for c in self.components for p in (c.w, c.r_pass, c.r_fail)]

    def of(self, measure: Callable) -> Callable[[Sequence[float]], float]:
        weights = [c.weight for c in self.components]
        return lambda x: measure(cells(x, weights))

    def estimate(self, measure: Callable) -> Interval:
        clip = (-1.0, 1.0) if measure is kappa_of else (0.0, 1.0)
        return delta_interval(self.of(measure), self.params, clip=clip)[0]

    @property
    def q1(self) -> Interval:
        return self.estimate(q1_of)

    @property
    def q0(self) -> Interval:
        return self.estimate(q0_of)

    @property
    def agreement(self) -> Interval:
        return self.estimate(agreement_of)

    @property
    def kappa(self) -> Interval:
        return self.estimate(kappa_of)

    def to_dict(self) -> dict:
        return {"labels": self.labels, "human_pass": self.human_pass, "human_fail": self.human_fail,
                "q1": self.q1.to_dict(), "q0": self.q0.to_dict(),
                "agreement": self.agreement.to_dict(), "kappa": self.kappa.to_dict()}

    def to_record(self) -> dict[str, Any]:
        """The model as a session records it (run/gate.py): every input as it is, so from_record gives back
        one whose corrected rates and gate decisions are the same to the last bit (JSON keeps a float's repr)."""
        return {"labels": self.labels, "human_pass": self.human_pass, "human_fail": self.human_fail,
                "case_id": self.case_id,
                "components": [[c.weight, c.w.value, c.w.var, c.r_pass.value, c.r_pass.var, c.r_fail.value,
                                c.r_fail.var] for c in self.components],
                "counts": [[s.x, s.n] for s in self.counts] if self.counts is not None else None}

    @classmethod
    def from_record(cls, d: Mapping[str, Any]) -> ErrorModel:
        """to_record's model back (ValueError, TypeError or KeyError on a damaged one)."""
        components = []
        for row in d["components"]:
            weight, w, w_var, rp, rp_var, rf, rf_var = map(_number, row)  # ValueError unless seven
            components.append(Component(weight, Param(w, w_var), Param(rp, rp_var), Param(rf, rf_var)))
        counts = None
        if d.get("counts") is not None:  # as recorded, an int kept an int (Clopper–Pearson reads counts)
            w_n, rp_n, rf_n = (Share(_number(x), _number(n)) for x, n in d["counts"])  # ValueError unless three
            counts = (w_n, rp_n, rf_n)
        return cls(components, int(d["labels"]), int(d["human_pass"]), int(d["human_fail"]), str(d.get("case_id", "")),
                   counts=counts)


@dataclass
class JudgeError:
    pooled: ErrorModel
    per_case: dict[str, ErrorModel] = field(default_factory=dict)

    def for_case(self, case_id: str) -> ErrorModel:
        """The case's shrunk model, or the pool's when the case has no labels."""
        return self.per_case.get(case_id, self.pooled)

    def to_dict(self) -> dict:
        return {"pooled": self.pooled.to_dict(), "per_case": {c: m.to_dict() for c, m in sorted(self.per_case.items())}}

    def to_record(self, cases: Iterable[str] | None = None) -> dict[str, Any]:
        """ErrorModel.to_record of the pool and of each of `cases` that has a model of its own (all with None):
        what for_case gives for each of them."""
        keep = sorted(self.per_case) if cases is None else sorted(set(cases) & set(self.per_case))
        return {"pooled": self.pooled.to_record(), "per_case": {c: self.per_case[c].to_record() for c in keep}}

    @classmethod
    def from_record(cls, d: Mapping[str, Any]) -> JudgeError:
        return cls(ErrorModel.from_record(d["pooled"]),
                   {str(c): ErrorModel.from_record(m) for c, m in dict(d.get("per_case") or {}).items()})


def _number(value: Any) -> float:
    """A recorded number as it was written (an int stays an int); ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"not a number: {value!r}")
    return value


def _judge_counts(strata: Sequence[Stratum]) -> Share:
    """W as counts: the judge's PASSes among the case's judged items (from history; the labels' own
    counts when history holds fewer items than were labelled)."""
    passed = max(max((s.population for s in strata if s.judge == Vote.PASS), default=0),
                 sum(s.n for s in strata if s.judge == Vote.PASS))
    failed = max(max((s.population for s in strata if s.judge == Vote.FAIL), default=0),
                 sum(s.n for s in strata if s.judge == Vote.FAIL))
    return Share(passed, passed + failed)


def _judge_share(strata: Sequence[Stratum]) -> Param:
    """W: the judge's PASS share among the case's judged items."""
    counts = _judge_counts(strata)
    return proportion(counts.x, counts.n) if counts.n else Param(0.5, 0.25)


def _stratum(strata: Sequence[Stratum], judge: str) -> tuple[int, int]:
    x = sum(s.human_pass for s in strata if s.judge == judge)
    return x, sum(s.n for s in strata if s.judge == judge)


def estimate_error(strata: Iterable[Stratum], prior_labels: float = PRIOR_LABELS) -> JudgeError:
    """The judge's error pooled over cases and per case (shrunk toward the pool) from the labels
    of a sample stratified by (case, judge verdict)."""
    by_case: dict[str, list[Stratum]] = {}
    for s in strata:
        by_case.setdefault(s.case_id, []).append(s)
    labelled = {c: ss for c, ss in by_case.items() if sum(s.n for s in ss)}
    # the plain pooled share per judge verdict: stands in for a stratum a case has no labels in
    naive = {v: proportion(*_stratum([s for ss in labelled.values() for s in ss], v)) for v in Vote}
    sizes = {c: sum(max(s.population, s.n) for s in ss) for c, ss in labelled.items()}
    total = sum(sizes.values()) or 1
    components = []
    for case, ss in sorted(labelled.items()):
        rs = []
        for v in Vote:
            x, n = _stratum(ss, v)
            rs.append(proportion(x, n) if n else naive[v])
        components.append(Component(sizes[case] / total, _judge_share(ss), *rs))
    counts = [(sum(s.human_pass for s in ss), sum(s.human_fail for s in ss)) for ss in labelled.values()]
    hp, hf = sum(c[0] for c in counts), sum(c[1] for c in counts)
    pool_counts = {v: Share(*_stratum([s for ss in labelled.values() for s in ss], v)) for v in Vote}
    judged = [_judge_counts(ss) for ss in labelled.values()]
    pooled = ErrorModel(components, hp + hf, hp, hf,
                        counts=(Share(sum(w.x for w in judged), sum(w.n for w in judged)),
                                pool_counts[Vote.PASS], pool_counts[Vote.FAIL]))
    # the pool's r_P, r_F (population-weighted over cases), to shrink each case toward
    pool_r = {v: _pooled_r(components, v) if components else naive[v] for v in Vote}
    shares = {v: _pool_shares(components, v) for v in Vote}
    per_case = {}
    for i, (case, ss) in enumerate(sorted(labelled.items())):
        rs, shrunk = [], []
        for v in Vote:
            x, n = _stratum(ss, v)
            pr, m = pool_r[v], prior_labels
            value = (x + m * pr.value) / (n + m)
            own = proportion(x, n).var if n else 0.0
            # the pool holds this case's own labels with weight shares[v][i]: Cov(r_case, r_pool) = share * own
            var = (n * n * own + m * m * pr.var + 2 * n * m * shares[v][i] * own) / (n + m) ** 2
            rs.append(Param(value, var))
            # as counts: the pool adds at most the labels other cases have in this stratum (a lone
            # case's pool is itself, which adds nothing)
            trials = n + min(m, pool_counts[v].n - n)
            shrunk.append(Share(value * trials, trials))
        hp_c, hf_c = sum(s.human_pass for s in ss), sum(s.human_fail for s in ss)
        per_case[case] = ErrorModel([Component(1.0, _judge_share(ss), *rs)], hp_c + hf_c, hp_c, hf_c, case,
                                    counts=(_judge_counts(ss), shrunk[0], shrunk[1]))
    return JudgeError(pooled, per_case)


def _pool_shares(components: Sequence[Component], verdict: str) -> list[float]:
    """Each case's weight in the pooled r_P (or r_F): its share of the judge's PASSes (FAILs)."""
    raw = [c.weight * (c.w.value if verdict == Vote.PASS else 1 - c.w.value) for c in components]
    total = sum(raw) or 1.0
    return [r / total for r in raw]


def _pooled_r(components: Sequence[Component], verdict: str) -> Param:
    """r_P (or r_F) over the pooled cases, each weighted by its share of the judge's PASSes (FAILs)."""
    shares = _pool_shares(components, verdict)
    rs = [c.r_pass if verdict == Vote.PASS else c.r_fail for c in components]
    return Param(sum(s * r.value for s, r in zip(shares, rs, strict=True)),
                 sum(s * s * r.var for s, r in zip(shares, rs, strict=True)))


def run_level(q0: float, q1: float, items: int) -> tuple[float, float]:
    """Item-level error rates to run-level ones for a run graded on `items` rubric items (the run
    passes only when every item does): a truly passing run is passed when the judge passes every
    item, q1_run = q1^items (item errors independent); a truly failing run has at least one failing
    item, which the judge fails with probability q0, so q0_run = q0 — a lower bound (more failing
    items, or a wrongly failed passing one, only make a FAIL likelier), which can only pull the
    corrected rate down (d theta / d q0 = (1 - theta)/(q0 + q1 - 1) >= 0)."""
    return q0, q1 ** max(1, items)
