"""Judge-truth simulation (issue 23): does the corrected rate's interval cover the true rate?

A simulated agent with a known true pass rate theta, a simulated judge with known specificity q0
and sensitivity q1, and a simulated person who labels truly. Per session: a calibration pool of
POOL judged items (history), `labels` of them labelled — half drawn from the judge's PASSes, half
from its FAILs, as `scarbook calibrate` draws them — and a session of `runs` judged runs. The raw
rate is the judge's PASS share with its Wilson interval; the corrected one is
scarbook.stats.corrected.correct over scarbook.stats.judge_error.estimate_error of the labels.

Per cell of the grid theta x (q0, q1) x labels x runs it prints the coverage of the intervals (raw:
the 95% Wilson interval; corrected: the gate's own, 90% at alpha 5%), the mean bias in points, and the
gate's false-green rate at a threshold 0.1 above theta : the share of sessions the point rule (rate >=
threshold) calls green, and the share the evidence gate (scarbook.stats.decisions, alpha 0.05) calls
the case above; not shown at theta 0.9, where that threshold would be 100%.

Then the gate table (`gate_cell`): the true rate exactly at the threshold t, where a red is a false
red and a green is as likely as the worst false green (every rate below t is called above less
often). Per calibration draw the session's judge-PASS count is summed over exactly (every count 0..runs
with its binomial weight), so each row is an average of exact chances over `draws` calibrations; the
decisions are the product's (decide_cases), raw (the judge's verdicts taken as the truth) and
corrected (the exact test with the judge's error bounded, stats/corrected_gate.py). Power: the chance
of the right call at t + 0.1 (above) and t - 0.1 (below).

    .venv/bin/python benchmarks/judge_sim.py [--sessions 2000] [--quick] [--seed 1] [--gate-only]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarbook.stats.corrected import correct  # noqa: E402
from scarbook.stats.corrected_gate import CorrectedEvidence  # noqa: E402
from scarbook.stats.decisions import CaseEvidence, decide_cases  # noqa: E402
from scarbook.stats.judge_error import ErrorModel, Stratum, estimate_error  # noqa: E402
from scarbook.stats.rates import wilson  # noqa: E402

POOL = 1000
THETAS = (0.3, 0.6, 0.9)
JUDGES = ((0.8, 0.95), (0.95, 0.8), (0.9, 0.9))  # (q0, q1)
LABELS = (40, 200)
RUNS = (10, 50)


def binomial(rng: random.Random, n: int, p: float) -> int:
    """Exact binomial draw by geometric waiting times (O(n·min(p, 1-p)))."""
    if p <= 0 or n == 0:
        return 0
    if p >= 1:
        return n
    if p > 0.5:
        return n - binomial(rng, n, 1 - p)
    log_q, count, pos = math.log(1 - p), 0, 0
    while True:
        pos += int(math.log(1 - rng.random()) / log_q) + 1
        if pos > n:
            return count
        count += 1


def judge_counts(rng: random.Random, n: int, theta: float, q0: float, q1: float) -> tuple[int, int, int, int]:
    """n artifacts graded: (true PASS judged PASS, true PASS judged FAIL, true FAIL judged PASS, true FAIL judged FAIL)."""
    true_pass = binomial(rng, n, theta)
    tp = binomial(rng, true_pass, q1)
    tn = binomial(rng, n - true_pass, q0)
    return tp, true_pass - tp, n - true_pass - tn, tn


def draw_labels(rng: random.Random, good: int, bad: int, k: int) -> tuple[int, int]:
    """k items drawn without replacement from a stratum of `good` true passes and `bad` true fails."""
    k = min(k, good + bad)
    x = sum(1 for i in rng.sample(range(good + bad), k) if i < good)
    return x, k - x


@dataclass
class Session:
    covered_raw: bool
    covered: bool
    raw: float
    corrected: float | None
    green_raw: bool
    green: bool
    sure_raw: bool  # the evidence gate (stats/decisions.py, alpha 0.05) calls it above
    sure: bool


def calibrate(rng: random.Random, theta: float, q0: float, q1: float, labels: int) -> ErrorModel:
    """A calibration pool of POOL judged items and `labels` of them labelled: half from the judge's
    PASSes, half from its FAILs (the rest from the other when short), as `scarbook calibrate` draws."""
    tp, fn, fp, tn = judge_counts(rng, POOL, theta, q0, q1)
    want_pass = min(labels // 2, tp + fp)
    want_fail = min(labels - want_pass, fn + tn)
    want_pass = min(labels - want_fail, tp + fp)
    p_pass, p_fail = draw_labels(rng, tp, fp, want_pass)
    f_pass, f_fail = draw_labels(rng, fn, tn, want_fail)
    return estimate_error([Stratum("c", "PASS", tp + fp, p_pass, p_fail),
                           Stratum("c", "FAIL", fn + tn, f_pass, f_fail)]).for_case("c")


def one_session(rng: random.Random, theta: float, q0: float, q1: float, labels: int, runs: int,
                threshold: float) -> Session:
    model = calibrate(rng, theta, q0, q1, labels)
    s_tp, _, s_fp, _ = judge_counts(rng, runs, theta, q0, q1)
    passes = s_tp + s_fp
    lo, hi = wilson(passes, runs)
    raw = passes / runs
    fixed = correct(passes, runs - passes, 0, model)
    gate_raw = _raw_decisions(runs, threshold)[passes] == "above"
    if fixed is None:  # judge no better than chance on these labels: the raw numbers stand
        return Session(lo <= theta <= hi, lo <= theta <= hi, raw, None, raw >= threshold, raw >= threshold,
                       gate_raw, gate_raw)
    gate = decide_cases([CaseEvidence("c", passes, runs - passes, 0, threshold, corrected=fixed.evidence)])[0]
    return Session(lo <= theta <= hi, fixed.lo <= theta <= fixed.hi, raw, fixed.rate,
                   raw >= threshold, fixed.rate >= threshold, gate_raw, gate.decision == "above")


def run_cell(seed: int, theta: float, q0: float, q1: float, labels: int, runs: int, sessions: int) -> dict:
    rng = random.Random(f"{seed}-{theta}-{q0}-{q1}-{labels}-{runs}")
    # the gate: threshold 0.1 above the truth, so every green is a false green
    threshold = round(theta + 0.1, 2)
    out = [one_session(rng, theta, q0, q1, labels, runs, threshold) for _ in range(sessions)]
    fixed = [s.corrected for s in out if s.corrected is not None]
    return {
        "theta": theta, "q0": q0, "q1": q1, "labels": labels, "runs": runs, "sessions": sessions,
        "cover_raw": sum(s.covered_raw for s in out) / sessions,
        "cover": sum(s.covered for s in out) / sessions,
        "bias_raw": 100 * (sum(s.raw for s in out) / sessions - theta),
        "bias": 100 * (sum(fixed) / len(fixed) - theta) if fixed else math.nan,
        "green_raw": sum(s.green_raw for s in out) / sessions,
        "green": sum(s.green for s in out) / sessions,
        "sure_raw": sum(s.sure_raw for s in out) / sessions,
        "sure": sum(s.sure for s in out) / sessions,
        "fallback": sessions - len(fixed),
    }


def _binom_weights(n: int, p: float) -> list[float]:
    return [math.comb(n, x) * p ** x * (1 - p) ** (n - x) for x in range(n + 1)]


@functools.cache
def _raw_decisions(runs: int, threshold: float) -> tuple[str, ...]:
    """The raw gate's decision for every count 0..runs (the same for every calibration)."""
    return tuple(decide_cases([CaseEvidence("c", x, runs - x, 0, threshold)])[0].decision for x in range(runs + 1))


def _decisions(model: ErrorModel, runs: int, threshold: float) -> tuple[list[str], list[str]]:
    """The gate's decision (raw, corrected) for every judge-PASS count 0..runs of a session."""
    raw = list(_raw_decisions(runs, threshold))
    if correct(runs, 0, 0, model) is None:  # no better than chance on these labels: the raw numbers stand
        return raw, raw
    basis = model.basis(1)
    fixed = [decide_cases([CaseEvidence("c", x, runs - x, 0, threshold,
                                        corrected=CorrectedEvidence(x, runs - x, 0, basis))])[0].decision
             for x in range(runs + 1)]
    return raw, fixed


def check_fast_path(seed: int, draws: int = 20) -> int:
    """How many (draw, count) decisions differ between the table's fast path (the evidence built
    directly) and what the product does (stats.corrected.correct's evidence, decide_cases)."""
    rng = random.Random(f"{seed}-check")
    differ = 0
    for _ in range(draws):
        model = calibrate(rng, 0.8, 0.9, 0.9, 40)
        _, fast = _decisions(model, 10, 0.8)
        for x in range(11):
            fixed = correct(x, 10 - x, 0, model, threshold=0.8)
            ev = CaseEvidence("c", x, 10 - x, 0, 0.8, corrected=fixed.evidence if fixed else None)
            differ += decide_cases([ev])[0].decision != fast[x]
    return differ


def gate_cell(seed: int, t: float, q0: float, q1: float, labels: int, runs: int, draws: int) -> dict:
    """The true rate at the threshold t: the chance of a red (false) and of a green (the bound on any
    false green), raw and corrected; and the power at t ± 0.1. Exact over the session, averaged
    over `draws` calibrations."""
    rng = random.Random(f"{seed}-gate-{t}-{q0}-{q1}-{labels}-{runs}")
    out = {"t": t, "q0": q0, "q1": q1, "labels": labels, "runs": runs, "draws": draws}
    judge_pass = {name: theta * q1 + (1 - theta) * (1 - q0)
                  for name, theta in (("at", t), ("up", min(1.0, t + 0.1)), ("down", max(0.0, t - 0.1)))}
    weights = {name: _binom_weights(runs, p) for name, p in judge_pass.items()}
    sums = dict.fromkeys(("red_raw", "green_raw", "red", "green", "power_above", "power_below"), 0.0)
    for _ in range(draws):
        raw, fixed = _decisions(calibrate(rng, t, q0, q1, labels), runs, t)
        for x in range(runs + 1):
            w = weights["at"][x]
            sums["red_raw"] += w * (raw[x] == "below")
            sums["green_raw"] += w * (raw[x] == "above")
            sums["red"] += w * (fixed[x] == "below")
            sums["green"] += w * (fixed[x] == "above")
            sums["power_above"] += weights["up"][x] * (fixed[x] == "above")
            sums["power_below"] += weights["down"][x] * (fixed[x] == "below")
    return out | {k: v / draws for k, v in sums.items()}


GATE_THRESHOLDS = (0.6, 0.8, 0.9, 0.95)
GATE_JUDGES = ((0.8, 0.95), (0.95, 0.8), (0.9, 0.9), (0.99, 0.99))


def gate_grid(seed: int, draws: int, quick: bool = False) -> list[dict]:
    cells = itertools.product(GATE_THRESHOLDS, GATE_JUDGES, LABELS, RUNS)
    if quick:
        cells = itertools.product((0.8, 0.95), GATE_JUDGES, (40, 200), (10,))
    return [gate_cell(seed, t, q0, q1, n_labels, n_runs, draws) for t, (q0, q1), n_labels, n_runs in cells]


def gate_table(rows: list[dict]) -> str:
    lines = ["| threshold = true rate | q0 | q1 | labels | runs | red raw | green raw | **red corrected** | "
             "**green corrected** | corrected above at t + 0.1 | corrected below at t − 0.1 |", "|" + "---|" * 11]
    for r in rows:
        up = f"{r['power_above']:.1%}" if r["t"] + 0.1 <= 1 else "–"
        lines.append(f"| {r['t']:.2f} | {r['q0']:.2f} | {r['q1']:.2f} | {r['labels']} | {r['runs']} | "
                     f"{r['red_raw']:.1%} | {r['green_raw']:.1%} | {r['red']:.1%} | {r['green']:.1%} | "
                     f"{up} | {r['power_below']:.1%} |")
    return "\n".join(lines)


def several_cases(judges: list[tuple[float, float]], sessions: int, seed: int, theta: float = 0.6,
                  labels_per_case: int = 20, runs: int = 30) -> list[tuple[float, float]]:
    """Cases calibrated together (pooled, each shrunk toward the pool): per case, the corrected
    interval's coverage and mean bias in points. `judges`: each case's judge (q0, q1)."""
    rng = random.Random(f"{seed}-several-{judges}")
    covered, bias, counted = [0] * len(judges), [0.0] * len(judges), [0] * len(judges)
    for _ in range(sessions):
        strata, passes = [], []
        for c, (q0, q1) in enumerate(judges):
            tp, fn, fp, tn = judge_counts(rng, 300, theta, q0, q1)
            want_pass = min(labels_per_case // 2, tp + fp)
            want_fail = min(labels_per_case - want_pass, fn + tn)
            strata += [Stratum(str(c), "PASS", tp + fp, *draw_labels(rng, tp, fp, want_pass)),
                       Stratum(str(c), "FAIL", fn + tn, *draw_labels(rng, fn, tn, want_fail))]
            s_tp, _, s_fp, _ = judge_counts(rng, runs, theta, q0, q1)
            passes.append(s_tp + s_fp)
        err = estimate_error(strata)
        for c in range(len(judges)):
            fixed = correct(passes[c], runs - passes[c], 0, err.for_case(str(c)))
            if fixed is not None:
                counted[c] += 1
                covered[c] += fixed.lo <= theta <= fixed.hi
                bias[c] += fixed.rate - theta
    return [(covered[c] / counted[c], 100 * bias[c] / counted[c]) for c in range(len(judges))]


SEVERAL = {"five cases, one judge (0.8, 0.95)": [(0.8, 0.95)] * 5,
           "five cases, judges (0.8, 0.95) x3, (0.95, 0.8), (0.6, 0.99)":
               [(0.8, 0.95)] * 3 + [(0.95, 0.8), (0.6, 0.99)]}


def grid(seed: int, sessions: int, quick: bool = False) -> list[dict]:
    cells = itertools.product(THETAS, JUDGES, LABELS, RUNS)
    if quick:
        cells = itertools.product(THETAS, JUDGES, (40,), (10,))
    return [run_cell(seed, t, q0, q1, n_labels, n_runs, sessions) for t, (q0, q1), n_labels, n_runs in cells]


def table(rows: list[dict]) -> str:
    head = ("| θ | q0 | q1 | labels | runs | coverage raw | coverage corrected | bias raw (pts) | "
            "bias corrected (pts) | false green raw: point / evidence | false green corrected: point / evidence |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        green = (f"{r['green_raw']:.1%} / {r['sure_raw']:.1%} | {r['green']:.1%} / {r['sure']:.1%} |"
                 if r["theta"] + 0.1 < 1 else "– | – |")
        lines.append(f"| {r['theta']:.1f} | {r['q0']:.2f} | {r['q1']:.2f} | {r['labels']} | {r['runs']} | "
                     f"{r['cover_raw']:.1%} | {r['cover']:.1%} | {r['bias_raw']:+.1f} | {r['bias']:+.1f} | " + green)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=2000, help="simulated sessions per cell")
    ap.add_argument("--quick", action="store_true", help="400 sessions, labels 40 and runs 10 only")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--draws", type=int, default=1000, help="calibrations per cell of the gate table")
    ap.add_argument("--gate-only", action="store_true", help="only the gate table")
    args = ap.parse_args(argv)
    sessions = 400 if args.quick else args.sessions
    start = time.perf_counter()
    draws = 200 if args.quick else args.draws
    gates = gate_grid(args.seed, draws, args.quick)
    print(f"## The gate at the threshold (alpha 5%): {draws} calibrations per row, each session summed exactly\n")
    print(gate_table(gates))
    worst_red = max(gates, key=lambda r: r["red"])
    worst_green = max(gates, key=lambda r: r["green"])
    print(f"\ncorrected: largest false red {worst_red['red']:.2%} (t {worst_red['t']}, q0 {worst_red['q0']}, "
          f"q1 {worst_red['q1']}, {worst_red['labels']} labels, {worst_red['runs']} runs); largest green at the "
          f"threshold {worst_green['green']:.2%}; every cell at most 5%: "
          f"{'yes' if max(worst_red['red'], worst_green['green']) <= 0.05 else 'NO'}. The fast path and the "
          f"product's own path differ on {check_fast_path(args.seed)} of 220 decisions. "
          f"({time.perf_counter() - start:.0f} s)\n")
    if args.gate_only:
        return 0
    rows = grid(args.seed, sessions, args.quick)
    print(table(rows))
    if not args.quick:
        print("\nseveral cases calibrated together (θ 0.6, 20 labels and 30 runs per case; "
              f"{sessions // 5} sessions): per case coverage / bias")
        for name, judges in SEVERAL.items():
            cells = several_cases(judges, sessions // 5, args.seed)
            print(f"- {name}: " + ", ".join(f"{cov:.1%} / {b:+.1f}" for cov, b in cells))
    worst = min(rows, key=lambda r: r["cover"])
    print(f"\n{len(rows)} cells x {sessions} sessions in {time.perf_counter() - start:.0f} s; "
          f"lowest corrected coverage {worst['cover']:.1%}, largest |bias| "
          f"{max(abs(r['bias']) for r in rows):.1f} pts; sessions that fell back to raw: "
          f"{sum(r['fallback'] for r in rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
