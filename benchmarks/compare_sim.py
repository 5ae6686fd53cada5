"""Two agents in one session, by simulation, with the product's own decision functions (issue 36).
Prints the tables docs/statistics.md shows; tests/stats/test_compare_sim.py runs small cells of the
same engine.

    .venv/bin/python benchmarks/compare_sim.py            # the documented sizes (5,000 sessions a cell)
    .venv/bin/python benchmarks/compare_sim.py --quick    # 1,000 sessions a cell

- `fixed_cell`: sessions of m cases, each case run n times by a baseline at true rate p and by a
  candidate at p + delta. Under A/A (delta 0) every "better" or "worse" — on a case or on the suite —
  is wrong: the share of sessions with any is the family-wise wrong-call rate, which must stay at or
  under alpha (0.05) in every cell. With delta -0.1 / -0.2: the power (the share of case rows called
  worse, and of sessions whose suite row is). With delta 0: the share of case rows called "same"
  within ±margin (and of suite rows).
- `auto_cell`: --runs auto, looks at 10, 20, 40 and 50 blocks (stats/head_to_head.compare_in_looks,
  case by case: a case stops once its call is reached); the blocks spent against 50 for every case,
  with the same wrong-call rate and power.

Fixed-N sessions are decided in bulk: every p-value and interval comes from the product's functions
for every possible pair of counts (stats/head_to_head.py, stats/compare.py), the suite row from its
own functions per session, and Tarone's family and Holm vectorised over sessions;
`check_against_compare_agents` replays sessions through compare_agents to show the two agree.
--runs auto sessions are run one by one through compare_in_looks itself.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from functools import cache

import numpy as np

from scarbook.models import MarginCall, Versus
from scarbook.stats.compare import Counts, diff_variance, fisher_exact_p, min_fisher_p, newcombe_interval
from scarbook.stats.head_to_head import (
    Kept,
    auto_looks,
    compare_agents,
    look_alphas,
    look_once,
    p_below,
    p_not_worse,
    suite_row,
)
from scarbook.stats.rates import wilson

ALPHA = 0.05
MARGIN = 0.05
WIDE = 0.10
RATES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
CASES = (10, 30)
RUNS = (10, 20, 50)


@dataclass(frozen=True)
class FixedCell:
    cases: int
    rate: float
    runs: int
    delta: float
    sessions: int
    any_wrong: float  # share of sessions with a better/worse that has the wrong sign (any, under A/A)
    case_worse: float  # share of case rows called worse
    case_better: float
    case_same: float  # share of case rows called same within ±margin
    suite_worse: float  # share of sessions whose suite row is called worse
    suite_same: float
    gate_red: float  # share of sessions the gate (non-inferiority at the margin) goes red
    case_same_wide: float  # the same two shares at a margin of ±10 points (A/A cells only)
    suite_same_wide: float


@cache
def _tables(n: int, margin: float = MARGIN) -> dict[str, np.ndarray]:
    """Every p-value and interval end of a case with n judged runs a side, indexed [baseline passes, candidate passes]."""
    size = n + 1
    t = {k: np.zeros((size, size)) for k in ("p_diff", "lo", "hi", "p_same", "p_worse", "p_not_worse", "var")}
    for c1 in range(size):
        for c2 in range(size):
            t["p_diff"][c1, c2] = fisher_exact_p(c1, n, c2, n)
            t["lo"][c1, c2], t["hi"][c1, c2] = newcombe_interval(c1, n, c2, n)
            not_worse = p_not_worse(c1, n, c2, n, margin)
            t["p_same"][c1, c2] = max(not_worse, p_below(c1, n, c2, n, margin))
            t["p_worse"][c1, c2] = p_below(c1, n, c2, n, -margin)
            t["p_not_worse"][c1, c2] = not_worse
            t["var"][c1, c2] = diff_variance(c1, n, c2, n)
    t["min_p"] = np.array([min_fisher_p(n, n, total) for total in range(2 * n + 1)])
    return t


def _holm(p: np.ndarray, in_family: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values per session (rows) over the columns in the family (others: inf)."""
    sessions, cols = p.shape
    size = in_family.sum(axis=1, keepdims=True)
    masked = np.where(in_family, p, np.inf)
    order = np.argsort(masked, axis=1, kind="stable")
    ranked = np.take_along_axis(masked, order, axis=1)
    mult = np.maximum(size - np.arange(cols)[None, :], 1)
    adjusted_ranked = np.maximum.accumulate(np.minimum(1.0, mult * ranked), axis=1)
    adjusted = np.empty_like(adjusted_ranked)
    np.put_along_axis(adjusted, order, adjusted_ranked, axis=1)
    return np.where(in_family, adjusted, np.inf)


def _tarone(min_p: np.ndarray) -> np.ndarray:
    """Tarone's family per session: the smallest K with at most K rows able to reach p < alpha / K."""
    sessions, cols = min_p.shape
    chosen = np.zeros((sessions, cols), dtype=bool)
    found = np.zeros(sessions, dtype=bool)
    for k in range(1, cols + 1):
        testable = min_p < ALPHA / k
        fits = (testable.sum(axis=1) <= k) & ~found
        chosen[fits] = testable[fits]
        found |= fits
    chosen[~found] = True
    return chosen


def decide_bulk(base: np.ndarray, cand: np.ndarray, n: int, margin: float = MARGIN) -> dict[str, np.ndarray]:
    """The calls compare_agents makes, for sessions x cases of pass counts (n judged runs a side): case
    columns first, the suite row last."""
    t = _tables(n, margin)
    sessions, m = base.shape
    rows = {k: t[k][base, cand] for k in ("p_diff", "lo", "hi", "p_same", "p_worse", "p_not_worse")}
    suite = {k: np.zeros(sessions) for k in rows}
    for s in range(sessions):  # the suite row through the product's own function
        cases = [_RowView(float(d), Counts(int(b), n - int(b)), Counts(int(c), n - int(c)))
                 for d, b, c in zip((cand[s] - base[s]) / n, base[s], cand[s], strict=True)]
        row = suite_row("b", cases, margin)  # type: ignore[arg-type]
        for k in suite:
            suite[k][s] = getattr(row, k)
    full = {k: np.concatenate([rows[k], suite[k][:, None]], axis=1) for k in rows}
    min_p = np.concatenate([t["min_p"][base + cand], np.zeros((sessions, 1))], axis=1)
    family = _tarone(min_p)
    everyone = np.ones_like(family)
    h_diff = _holm(full["p_diff"], family)
    h_same = _holm(full["p_same"], everyone)
    h_worse = _holm(full["p_worse"], everyone)
    better = (h_diff < ALPHA) & (full["lo"] > 0)
    worse = (h_diff < ALPHA) & (full["hi"] < 0)
    same = ~better & ~worse & (h_same < ALPHA)
    inferior = worse & (h_worse < ALPHA)
    return {"better": better, "worse": worse, "same": same, "inferior": inferior}


@dataclass(frozen=True)
class _RowView:
    """What suite_row reads of a case row."""

    diff: float
    baseline: Counts
    other: Counts


def fixed_cell(m: int, p: float, n: int, delta: float, sessions: int, rng: np.random.Generator,
               margin: float = MARGIN) -> FixedCell:
    base = rng.binomial(n, p, size=(sessions, m))
    cand = rng.binomial(n, min(1.0, max(0.0, p + delta)), size=(sessions, m))
    calls = decide_bulk(base, cand, n, margin)
    wide = decide_bulk(base, cand, n, WIDE) if delta == 0 else calls
    wrong = calls["better"] if delta <= 0 else calls["worse"]
    if delta == 0:
        wrong = calls["better"] | calls["worse"]
    return FixedCell(m, p, n, delta, sessions, float(wrong.any(axis=1).mean()),
                     float(calls["worse"][:, :m].mean()), float(calls["better"][:, :m].mean()),
                     float(calls["same"][:, :m].mean()), float(calls["worse"][:, m].mean()),
                     float(calls["same"][:, m].mean()), float(calls["inferior"].any(axis=1).mean()),
                     float(wide["same"][:, :m].mean()), float(wide["same"][:, m].mean()))


def check_against_compare_agents(m: int, p: float, n: int, delta: float, sessions: int,
                                 rng: np.random.Generator) -> int:
    """Sessions whose bulk calls differ from compare_agents' own (0 when the engine is the product's)."""
    base = rng.binomial(n, p, size=(sessions, m))
    cand = rng.binomial(n, min(1.0, p + delta), size=(sessions, m))
    calls = decide_bulk(base, cand, n)
    differ = 0
    for s in range(sessions):
        counts = {f"c{i}": {"a": Counts(int(base[s, i]), n - int(base[s, i])),
                            "b": Counts(int(cand[s, i]), n - int(cand[s, i]))} for i in range(m)}
        got = compare_agents(counts, "a", ["b"], margin=MARGIN, alpha=ALPHA)
        rows = [*got.rows, *got.suites]
        mine = [("better" if calls["better"][s, i] else "worse" if calls["worse"][s, i]
                 else "same" if calls["same"][s, i] else "undecided") for i in range(m + 1)]
        theirs = [str(r.call) for r in rows]
        red_mine = bool(calls["inferior"][s].any())
        red_theirs = any(r.margin_call == MarginCall.INFERIOR for r in rows)
        differ += mine != theirs or red_mine != red_theirs
    return differ


@dataclass(frozen=True)
class AutoCell:
    cases: int
    rate: float
    delta: float
    sessions: int
    looks: tuple[int, ...]
    blocks_spent: float  # mean blocks per case (one run of each agent a block)
    saved: float  # 1 - spent / cap
    any_wrong: float
    case_worse: float
    case_same: float
    fixed_worse: float  # the same cases at the cap, fixed N


def auto_cell(m: int, p: float, delta: float, sessions: int, rng: np.random.Generator, first: int = 10,
              cap: int = 50) -> AutoCell:
    looks = auto_looks(first, cap)
    spent = wrong = worse = same = fixed_worse = 0.0
    q = min(1.0, max(0.0, p + delta))
    for _ in range(sessions):
        base = rng.random((m, cap)) < p
        cand = rng.random((m, cap)) < q
        word = {True: "pass", False: "fail"}
        # the runner's way (compare_in_looks, one look at a time): after each look, the cases still open
        # get blocks up to the next look
        size = {f"c{i}": looks[0] for i in range(m)}
        kept: Kept = {}
        for i, (look, level) in enumerate(zip(looks, look_alphas(looks, ALPHA), strict=True)):
            statuses = {cid: {"a": [word[bool(x)] for x in base[j, :size[cid]]],
                              "b": [word[bool(x)] for x in cand[j, :size[cid]]]}
                        for j, cid in enumerate(size)}
            result = look_once(statuses, "a", ["b"], look, level, kept, margin=MARGIN)
            if i + 1 < len(looks):
                for r in result.rows:
                    if not r.decided:
                        size[r.case_id] = looks[i + 1]
        spent += sum(size.values()) / m
        rows = [*result.rows, *result.suites]
        bad = {Versus.BETTER, Versus.WORSE} if delta == 0 else ({Versus.BETTER} if delta < 0 else {Versus.WORSE})
        wrong += any(r.call in bad for r in rows)
        worse += sum(r.call == Versus.WORSE for r in result.rows) / m
        same += sum(r.call == Versus.SAME for r in result.rows) / m
        fixed = decide_bulk(base.sum(axis=1)[None, :], cand.sum(axis=1)[None, :], cap)
        fixed_worse += float(fixed["worse"][0, :m].mean())
    return AutoCell(m, p, delta, sessions, looks, spent / sessions, 1 - spent / sessions / cap, wrong / sessions,
                    worse / sessions, same / sessions, fixed_worse / sessions)


def upper_bound(share: float, sessions: int) -> float:
    """The 95% Wilson upper bound of a share of sessions (the product's interval)."""
    return wilson(round(share * sessions), sessions)[1]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="two agents in one session: error rates, power, --runs auto (issue 36)")
    ap.add_argument("--quick", action="store_true", help="1,000 sessions a cell instead of 5,000")
    ap.add_argument("--sessions", type=int, default=None)
    ap.add_argument("--seed", type=int, default=36)
    args = ap.parse_args(argv)
    sessions = args.sessions or (1000 if args.quick else 5000)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()

    print(f"## A/A: the same agent twice — any wrong better/worse (cases and suite), {sessions} sessions a cell, "
          f"alpha {ALPHA}, margin ±{MARGIN:.0%}\n")
    print("| cases | true rate | runs/side | any wrong call | its 95% upper bound | ≤ alpha | case called same | "
          "suite called same | same at ±10: case | suite | gate red |")
    print("|---:|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for m in CASES:
        for p in RATES:
            for n in RUNS:
                c = fixed_cell(m, p, n, 0.0, sessions, rng)
                worst = max(worst, c.any_wrong)
                print(f"| {m} | {p:.2f} | {n} | {_pct(c.any_wrong)} | {_pct(upper_bound(c.any_wrong, sessions))} | "
                      f"{'yes' if c.any_wrong <= ALPHA else 'NO'} | {_pct(c.case_same)} | {_pct(c.suite_same)} | "
                      f"{_pct(c.case_same_wide)} | {_pct(c.suite_same_wide)} | {_pct(c.gate_red)} |")
    print(f"\nworst cell: {_pct(worst)} (alpha {_pct(ALPHA)})")

    print(f"\n## Power: the candidate 10 or 20 points worse on every case, {sessions} sessions a cell\n")
    print("| cases | baseline rate | runs/side | difference | case called worse | suite called worse | "
          "gate red | any wrong-way call |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in CASES:
        for p in (0.7, 0.8, 0.9, 0.95):
            for n in RUNS:
                for delta in (-0.1, -0.2):
                    c = fixed_cell(m, p, n, delta, sessions, rng)
                    print(f"| {m} | {p:.2f} | {n} | {100 * delta:+.0f} pts | {_pct(c.case_worse)} | "
                          f"{_pct(c.suite_worse)} | {_pct(c.gate_red)} | {_pct(c.any_wrong)} |")

    check = 200 if args.quick else 1000
    differ = sum(check_against_compare_agents(m, p, 20, d, check // 4, rng)
                 for m, p, d in ((10, 0.8, 0.0), (10, 0.9, -0.2), (30, 0.7, -0.1), (10, 0.95, 0.0)))
    print(f"\n(bulk engine vs compare_agents on {check} sessions: {differ} differ)")

    auto_sessions = sessions
    print(f"\n## --runs auto: looks at {', '.join(map(str, auto_looks(10, 50)))} blocks, cap 50 "
          f"(fixed N: 50 a case), {auto_sessions} sessions a cell\n")
    print("| cases | baseline rate | difference | blocks per case | runs saved | any wrong call | "
          "case called worse | worse, fixed 50 | case called same |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in (10,):
        for p in (0.8, 0.9):
            for delta in (0.0, -0.1, -0.2, -0.3):
                a = auto_cell(m, p, delta, auto_sessions, rng)
                print(f"| {m} | {p:.2f} | {100 * delta:+.0f} pts | {a.blocks_spent:.1f} | {_pct(a.saved)} | "
                      f"{_pct(a.any_wrong)} | {_pct(a.case_worse)} | {_pct(a.fixed_worse)} | {_pct(a.case_same)} |")
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
