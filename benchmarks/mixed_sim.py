"""Sessions that mix judge-corrected and raw cases under `undecided: more`, by simulation, with the
product's own functions: the runner's looks and the report's replay of them, and whether the two agree.
Prints the table docs/statistics.md shows; tests/stats/test_mixed_sim.py runs a small cell of it.

    .venv/bin/python benchmarks/mixed_sim.py            # the documented sizes (19 minutes on a busy 2-core machine)
    .venv/bin/python benchmarks/mixed_sim.py --quick    # 100 sessions of each kind, two judges (about a minute)

A session has CASES cases, thresholds 80%, 70%, 90%, ... in turn, under `undecided: more` with
looks at 20, 40 and 80 runs (each look at alpha / 3). Some cases are *calibrated*: an llm_judge case
whose judge errs with specificity q0 and sensitivity q1, its error measured from labels as `scarbook
calibrate` measures it — per case a pool of POOL judged items in history and LABELS of them labelled,
half from the judge's PASSes and half from its FAILs (stats.judge_error.estimate_error over every
calibrated case's strata); a run's status is the judge's verdict. The others are *raw*: a run's
status is its true outcome. A mix is all raw, half calibrated or all calibrated; in the last row 45%
of a raw case's runs error, so it often lacks the verdicts for the first look and joins its family later.

Each session is run twice over the same pre-drawn runs:
- the runner: run/runner._more_extender — the runner's own look logic (stats.decisions.make_extender on
  each look's run/gate.corrected_evidence) — driven as the runner's schedule drives it: every case to
  the first look, then, once every run has finished, to the counts it asks for, until it asks for none.
  A case it stops at a look is decided there (what it tells the screen). It does not decide at the last
  look — the report does —, so there the simulator takes its look logic as it would run it:
  decide_in_looks over every look on corrected_evidence of each case's runs up to it.
- the replay every face uses (reports/table.build_report, the live screen once the session ends):
  run/gate.case_stats of each case's runs with the calibration, then run/gate.decide_gate.
The report's decisions are the ones counted; a case the two decide differently is a disagreement.

Two kinds of session per row: "at", every case's true rate at its threshold, where a red is a false
red (family-wise: some case called below) and a green is as likely as the worst false green (a case
truly below called above: at most alpha per case); and "drop", one raw and one calibrated case (where
the mix has them) 20 points below, the others at their thresholds: the power to call those below.

Measured (2026-12-05, seed 5, 1,000 sessions of each kind, 8 rows): family-wise false red at most 2.6%
(all raw; 0.0-0.1% all calibrated), a case at its threshold called above at most 2.4%, a raw case 20
points under called below 91-98% (72% with 45% errors), a calibrated one 46-51% with a .99 judge and
2-6% with a .8-.95 one; the runner and the report disagreed in 0 of the 16,000 sessions. With the report
as it was before aec4e99 (`report(with_runs=False)`) the half-calibrated .95/.8 and .9/.9 rows disagree
in 3 and 7 of their 2,000; with the code before ff035af the errors row in 2 of its 2,000.
"""

from __future__ import annotations

import functools
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarbook.config import GatePolicy  # noqa: E402
from scarbook.history.judge_truth import Calibration  # noqa: E402
from scarbook.models import CheckResult, RunRecord, SessionInfo  # noqa: E402
from scarbook.models.judge_detail import JudgeDetail, JudgeItem  # noqa: E402
from scarbook.models.session_parts import GateRecord  # noqa: E402
from scarbook.run.gate import case_stats, corrected_evidence, decide_gate, gate_alpha  # noqa: E402
from scarbook.run.runner import _more_extender  # noqa: E402
from scarbook.stats import decisions  # noqa: E402
from scarbook.stats.decisions import decide_in_looks, more_looks  # noqa: E402
from scarbook.stats.judge_error import JudgeError, Stratum, estimate_error  # noqa: E402

CASES = 4
THRESHOLDS = (0.8, 0.7, 0.9)
LOOKS = more_looks(20, 80)  # 20, 40, 80
POOL = 1000  # judged items per calibrated case in history
LABELS = 200  # labelled per calibrated case, half from each judge verdict
DROP = 0.2  # the "drop" sessions' below cases: this far under their threshold
MIXES = {"all raw": 0.0, "half calibrated": 0.5, "all calibrated": 1.0}
JUDGES = ((0.99, 0.99), (0.9, 0.9), (0.95, 0.8))  # (q0, q1): near right, even, misses passes
ERRORS = 0.45  # the last row's raw cases: the share of their runs that error
MORE = GatePolicy.from_record({**GatePolicy().to_dict(), "undecided": "more"})
SID = "20261205-000001-0001"


@dataclass
class Tally:
    """One row's counts over its sessions."""

    sessions: int = 0
    false_red: int = 0  # "at" sessions with some case called below
    at_cases: int = 0
    at_above: int = 0  # cases at their threshold called above (the false-green bound)
    at_undecided: int = 0
    drop_raw: int = 0
    drop_raw_below: int = 0
    drop_cal: int = 0
    drop_cal_below: int = 0
    drop_undecided: int = 0
    runs: int = 0
    cases: int = 0
    disagree: int = 0  # sessions where the runner and the report decide some case differently
    examples: list[str] = field(default_factory=list)  # the first few disagreements, described


@dataclass(frozen=True)
class Row:
    mix: str
    judge: tuple[float, float] | None  # None: no case is calibrated
    tally: Tally
    errors: float = 0.0  # the share of a raw case's runs that error (no verdict)

    def share(self, part: int, whole: int) -> float | None:
        return part / whole if whole else None


def _judged_run(case_id: str, k: int, verdict: str) -> RunRecord:
    status = "pass" if verdict == "PASS" else "fail"
    judge = JudgeDetail(verdict=status, items=(JudgeItem(1, "does it hold", verdict, "r"),), model="sim")
    return RunRecord(SID, case_id, k, status, "", checks=[CheckResult("llm_judge", status, "", 0, judge=judge)])


def _raw_run(case_id: str, k: int, status: str) -> RunRecord:
    return RunRecord(SID, case_id, k, status, "")


def _strata(rng: random.Random, case_id: str, rate: float, q0: float, q1: float) -> list[Stratum]:
    """The case's judged items in history (POOL at its true rate) and LABELS of them labelled truly,
    half from the judge's PASSes and half from its FAILs (the rest from the other when one is short)."""
    passed, failed = [], []  # each item's truth, by the judge's verdict
    for _ in range(POOL):
        truth = rng.random() < rate
        (passed if rng.random() < (q1 if truth else 1 - q0) else failed).append(truth)
    want_p = min(LABELS // 2, len(passed))
    want_f = min(LABELS - want_p, len(failed))
    want_p = min(LABELS - want_f, len(passed))
    lab_p, lab_f = sum(rng.sample(passed, want_p)), sum(rng.sample(failed, want_f))
    return [Stratum(case_id, "PASS", len(passed), lab_p, want_p - lab_p),
            Stratum(case_id, "FAIL", len(failed), lab_f, want_f - lab_f)]


@dataclass(frozen=True)
class Shape:
    """A session's cases: threshold, true rate and whether calibrated, by case id."""

    thresholds: dict[str, float]
    rates: dict[str, float]
    calibrated: frozenset[str]


def session_shape(mix: float, drop: bool, cases: int = CASES) -> Shape:
    ids = [f"c{i}" for i in range(cases)]
    calibrated = frozenset(ids[:round(mix * cases)])
    thresholds = {cid: THRESHOLDS[i % len(THRESHOLDS)] for i, cid in enumerate(ids)}
    rates = dict(thresholds)
    if drop:  # the first calibrated and the first raw case 20 points under their lines
        for cid in [next((c for c in ids if c in calibrated), None), next((c for c in ids if c not in calibrated), None)]:
            if cid is not None:
                rates[cid] = round(thresholds[cid] - DROP, 2)
    return Shape(thresholds, rates, calibrated)


def draw_session(rng: random.Random, shape: Shape, judge: tuple[float, float] | None, max_runs: int = LOOKS[-1],
                 errors: float = 0.0) -> tuple[dict[str, list[RunRecord]], Calibration | None]:
    """Every case's max_runs runs (k order) and the calibration of its calibrated cases; `errors`: the
    share of a raw case's runs that error (a case short of verdicts at a look is out of its Holm family)."""
    runs: dict[str, list[RunRecord]] = {}
    strata: list[Stratum] = []
    q0, q1 = judge or (1.0, 1.0)
    for cid, rate in shape.rates.items():
        truths = [rng.random() < rate for _ in range(max_runs)]
        if cid in shape.calibrated:
            says = [rng.random() < (q1 if ok else 1 - q0) for ok in truths]
            runs[cid] = [_judged_run(cid, k, "PASS" if s else "FAIL") for k, s in enumerate(says, 1)]
            strata += _strata(rng, cid, rate, q0, q1)
        else:
            runs[cid] = [_raw_run(cid, k, "error" if errors and rng.random() < errors else "pass" if ok else "fail")
                         for k, ok in enumerate(truths, 1)]
    calibration = (Calibration(estimate_error(strata), None, labels=sum(s.n for s in strata),
                               calibrated_at="2026-12-05T00:00:00+00:00") if strata else None)
    return runs, calibration


def run_looks(shape: Shape, runs: dict[str, list[RunRecord]], error: JudgeError | None,
              looks: Sequence[int] = LOOKS, policy: GatePolicy = MORE) -> tuple[dict[str, int], dict[str, str]]:
    """The runner's looks over the drawn runs: each case's run count at the end, and the decision of each
    case it stopped at a look (said as the runner says it)."""
    ready = SimpleNamespace(plan=SimpleNamespace(cases=[SimpleNamespace(id=c, threshold=t) for c, t in shape.thresholds.items()]),
                            site=SimpleNamespace(config=SimpleNamespace(threshold=0.8)), gate=policy, judge_error=error)
    said: dict[str, str] = {}
    more = _more_extender(ready, list(looks), lambda cid, decision, _runs: said.setdefault(cid, str(decision)))
    have = dict.fromkeys(shape.thresholds, looks[0])
    while True:
        asked = more({cid: {k: runs[cid][k - 1] for k in range(1, n + 1)} for cid, n in have.items()})
        grown = {cid: to for cid, to in asked.items() if to > have[cid]}
        if not grown:
            return have, said
        have.update(grown)


def runner_last_look(shape: Shape, runs: dict[str, list[RunRecord]], have: dict[str, int], error: JudgeError | None,
                     looks: Sequence[int] = LOOKS, policy: GatePolicy = MORE) -> dict[str, str]:
    """What the runner's look logic decides at the last look: decide_in_looks over every look, each
    calibrated case on corrected_evidence of its runs up to that look (as _more_extender hands it)."""
    ran = {cid: runs[cid][:n] for cid, n in have.items()}
    at = {size: {cid: ev for cid in shape.calibrated
                 if error is not None and (ev := corrected_evidence(cid, ran[cid][:size], error)) is not None}
          for size in looks}
    decided = decide_in_looks({cid: [r.status for r in rs] for cid, rs in ran.items()}, shape.thresholds, policy,
                              looks, len(looks), at if error is not None else None)
    return {cid: str(d.decision) for cid, d in decided.items()}


def report(shape: Shape, runs: dict[str, list[RunRecord]], have: dict[str, int], calibration: Calibration | None,
           looks: Sequence[int] = LOOKS, policy: GatePolicy = MORE, *, with_runs: bool = True) -> dict[str, str]:
    """The report's decisions on the recorded runs (reports/table.build_report's calls). `with_runs` False:
    decide_gate without the runs, so an earlier look's Holm family holds a calibrated case's raw verdicts,
    as the report decided before aec4e99 (tests/stats/test_mixed_sim.py: the simulator sees it)."""
    info = SessionInfo(id=SID, started_at="2026-12-05T09:00:00+00:00", case_ids=list(shape.thresholds),
                       runs_per_case=looks[-1], gate=GateRecord.read({**policy.to_dict(), "looks": list(looks)}))
    ran = {cid: runs[cid][:n] for cid, n in have.items()}
    stats = [case_stats(cid, ran[cid], t, 0.9, calibration, gate_alpha(info, policy)) for cid, t in shape.thresholds.items()]
    gated = decide_gate(info, stats, {cid: [r.status for r in rs] for cid, rs in ran.items()}, policy,
                        runs=ran if with_runs else None)
    return {s.case_id: str(s.decision) for s in gated}


Replay = Callable[[Shape, dict[str, list[RunRecord]], dict[str, int], Calibration | None], dict[str, str]]


def one_session(rng: random.Random, shape: Shape, judge: tuple[float, float] | None,
                tally: Tally, label: str, replay: Replay = report, errors: float = 0.0) -> None:
    runs, calibration = draw_session(rng, shape, judge, errors=errors)
    error = calibration.usable_error if calibration is not None else None
    have, said = run_looks(shape, runs, error)
    runner = {**runner_last_look(shape, runs, have, error), **said}
    got = replay(shape, runs, have, calibration)
    tally.sessions += 1
    tally.runs += sum(have.values())
    tally.cases += len(have)
    differ = {cid: (runner[cid], got[cid]) for cid in got if runner[cid] != got[cid]}
    if differ:
        tally.disagree += 1
        if len(tally.examples) < 3:
            tally.examples.append(f"{label}: " + ", ".join(
                f"{cid} ({'calibrated' if cid in shape.calibrated else 'raw'}, t {shape.thresholds[cid]:.0%}, "
                f"true {shape.rates[cid]:.0%}, {have[cid]} runs, {sum(r.status == 'pass' for r in runs[cid][:have[cid]])} "
                f"passes): runner {a}{' at a look' if cid in said else ' at the last look'}, report {b}"
                for cid, (a, b) in differ.items()))
    below = [cid for cid in got if shape.rates[cid] < shape.thresholds[cid]]
    if not below:
        tally.false_red += any(d == "below" for d in got.values())
        tally.at_cases += len(got)
        tally.at_above += sum(d == "above" for d in got.values())
        tally.at_undecided += sum(d == "undecided" for d in got.values())
        return
    for cid in below:
        if cid in shape.calibrated:
            tally.drop_cal += 1
            tally.drop_cal_below += got[cid] == "below"
        else:
            tally.drop_raw += 1
            tally.drop_raw_below += got[cid] == "below"
        tally.drop_undecided += got[cid] == "undecided"


@contextmanager
def notes_memoized() -> Iterator[None]:
    """stats.decisions.runs_to_decide memoized while the simulator runs: the "needs about N more runs"
    note of an undecided raw case, which no decision reads, scans up to 20,000 counts a call (25 ms before
    8b8c0f4 stepped its tails; under 2 ms since), and a report's last look computes it. It is pure, so memoizing changes nothing but
    the time (a raw session: 0.4 s -> 0.02 s)."""
    plain = decisions.runs_to_decide
    decisions.runs_to_decide = functools.cache(plain)
    try:
        yield
    finally:
        decisions.runs_to_decide = plain


def mixed_cell(mix: str, judge: tuple[float, float] | None, sessions: int, seed: int, cases: int = CASES,
               replay: Replay = report, errors: float = 0.0) -> Row:
    """`sessions` "at" sessions and as many "drop" sessions of one mix and judge. `replay`: the report's
    decisions (a test hands in another to see that a disagreement is counted); `errors`: draw_session's."""
    rng = random.Random(f"{seed}-{mix}-{judge}-{cases}" + (f"-{errors}" if errors else ""))
    tally = Tally()
    with notes_memoized():
        for i in range(sessions):
            for drop in (False, True):
                one_session(rng, session_shape(MIXES[mix], drop, cases), judge, tally,
                            f"seed {seed}, {cases} cases, {mix}, judge {judge}, raw errors {errors:.0%}, session {i} "
                            f"({'drop' if drop else 'at'})", replay, errors)
    return Row(mix, judge, tally, errors)


def rows_for(quick: bool) -> list[tuple[str, tuple[float, float] | None, float]]:
    """(mix, judge, raw errors) of each row; the last: raw runs erring ERRORS of the time, so a raw case
    often has too few verdicts at the first look and joins the Holm family later."""
    judges = JUDGES[::2] if quick else JUDGES
    return ([("all raw", None, 0.0)] + [(mix, j, 0.0) for mix in ("half calibrated", "all calibrated") for j in judges]
            + [("half calibrated", JUDGES[0], ERRORS)])


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def table(rows: Sequence[Row]) -> str:
    lines = ["| mix | judge q0 / q1 | family false red | case called above at t | below at t − 0.2, raw | "
             "below at t − 0.2, calibrated | undecided at t | undecided at t − 0.2 | runs per case | "
             "runner ≠ report |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        t = r.tally
        at_sessions = t.sessions // 2
        judge = f"{r.judge[0]:.2f} / {r.judge[1]:.2f}" if r.judge else "–"
        mix = f"{r.mix}, raw runs {r.errors:.0%} errors" if r.errors else r.mix
        lines.append(f"| {mix} | {judge} | {_pct(r.share(t.false_red, at_sessions))} | "
                     f"{_pct(r.share(t.at_above, t.at_cases))} | {_pct(r.share(t.drop_raw_below, t.drop_raw))} | "
                     f"{_pct(r.share(t.drop_cal_below, t.drop_cal))} | {_pct(r.share(t.at_undecided, t.at_cases))} | "
                     f"{_pct(r.share(t.drop_undecided, t.drop_raw + t.drop_cal))} | {t.runs / t.cases:.1f} | "
                     f"{t.disagree} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 sessions of each kind, two judges (near right, misses passes)")
    ap.add_argument("--sessions", type=int, default=1000, help="sessions of each kind (at, drop) per row")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    sessions = 100 if args.quick else args.sessions
    started = time.perf_counter()
    rows = [mixed_cell(mix, judge, sessions, args.seed, errors=errors) for mix, judge, errors in rows_for(args.quick)]
    print(f"## Mixed sessions under `undecided: more`: {CASES} cases (thresholds 80/70/90%), looks {LOOKS}, "
          f"alpha {MORE.alpha}; {sessions} sessions of each kind per row; {LABELS} labels per calibrated case\n")
    print(table(rows))
    worst = max(r.tally.false_red / (r.tally.sessions // 2) for r in rows)
    above = max(r.tally.at_above / r.tally.at_cases for r in rows)
    disagree = sum(r.tally.disagree for r in rows)
    print(f"\nlargest family-wise false red {_pct(worst)}, largest share of cases at their threshold called above "
          f"{_pct(above)}; both at most {MORE.alpha:.0%}: {'yes' if max(worst, above) <= MORE.alpha else 'NO'}. "
          f"Sessions where the runner and the report decide some case differently: {disagree} of "
          f"{sum(r.tally.sessions for r in rows)}.")
    for r in rows:
        for line in r.tally.examples:
            print(f"- {line}")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
