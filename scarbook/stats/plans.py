"""What a plan of N runs can decide, said before the runs (issue 39.7).

The evidence gate calls a case *above* its threshold t only when P(X >= passes | n, t) < alpha. The
most a plan of n runs can show is n passes of n, whose tail is t^n: so "above" needs t^n < alpha,
n > log(alpha) / log(t) — 14 straight passes at 80%, 29 at 90%, 59 at 95%. A plan with fewer runs
leaves even a case at 100% undecided (and exits 3 under `undecided: fail`): a plan that cannot decide
a case says so once, before the runs. With the judge's error measured, the corrected gate's own
test decides instead (stats/corrected_gate.py): it may need more runs, or more labels first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scarbook.stats.corrected_gate import CorrectedEvidence, decision_interval
from scarbook.stats.exact import first_true
from scarbook.stats.judge_error import JudgeBasis
from scarbook.stats.sequential import DELTA, EDGE, above_after_a_failure, hypotheses, sequential_rules
from scarbook.text import plural, threshold_pct

MAX_PLAN = 100_000  # past this, "N can" is not a useful thing to say


def runs_to_show(threshold: float, alpha: float) -> int | None:
    """The fewest judged runs whose every pass lets the exact test call a case above `threshold`
    (t^n < alpha); None when none can (a threshold of 100%)."""
    if threshold <= 0:
        return 1
    if threshold >= 1:
        return None
    return math.floor(math.log(alpha) / math.log(threshold)) + 1


def corrected_runs_to_show(threshold: float, alpha: float, basis: JudgeBasis) -> int | None:
    """The same through the judge-corrected gate: the fewest runs, every one passed by the judge, whose
    interval's lower end clears the threshold with this calibration; None when no number of runs can
    (the labels leave the judge's error too open: more labels first)."""
    def shows(n: int) -> bool:
        return decision_interval(CorrectedEvidence(n, 0, 0, basis), alpha)[0] > threshold
    if not shows(MAX_PLAN):
        return None
    return first_true(shows, MAX_PLAN)


def undecidable_lines(cases: Sequence[tuple[str, float]], runs: int, alpha: float,
                      bases: dict[str, JudgeBasis] | None = None) -> list[str]:
    """One line per case a plan of `runs` runs cannot call above its threshold even when every run
    passes: "fix-json-config: 10 runs cannot show ≥ 80%; 14 can; or use --runs auto"."""
    return [f"{case_id}: {why}" for case_id, why in undecidable(cases, runs, alpha, bases)]


NAMED = 5  # a reason shared by more cases than this names the first few and counts the rest


def grouped(found: Sequence[tuple[str, str]]) -> list[str]:
    """The same, one line per reason: "a, b: 10 runs cannot show ≥ 80%; 14 can; …" (a narrow screen); past
    NAMED cases, "a, b, c, d, e and 95 more (100 cases): …"."""
    return [f"{_names(ids)}: {why}" for why, ids in _by_reason(found).items()]


def per_case_or_grouped(found: Sequence[tuple[str, str]]) -> list[str]:
    """One line per case ("a: why"), but one line for a reason shared by more than NAMED cases: a plan of 10
    runs over 100 cases at 80% says it once, not 100 times."""
    out = []
    for why, ids in _by_reason(found).items():
        out += [f"{_names(ids)}: {why}"] if len(ids) > NAMED else [f"{i}: {why}" for i in ids]
    return out


def _by_reason(found: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    by_reason: dict[str, list[str]] = {}
    for case_id, why in found:
        by_reason.setdefault(why, []).append(case_id)
    return by_reason


def _names(ids: Sequence[str]) -> str:
    if len(ids) <= NAMED:
        return ", ".join(ids)
    return f"{', '.join(ids[:NAMED])} and {len(ids) - NAMED} more ({len(ids)} cases)"


def undecidable(cases: Sequence[tuple[str, float]], runs: int, alpha: float,
                bases: dict[str, JudgeBasis] | None = None) -> list[tuple[str, str]]:
    """(case id, why) for each case a plan of `runs` runs cannot call above its threshold even when
    every run passes. `bases`: the judge's calibration counts of the cases the corrected gate decides."""
    found = []
    for case_id, t in cases:
        basis = (bases or {}).get(case_id)
        need = corrected_runs_to_show(t, alpha, basis) if basis is not None else runs_to_show(t, alpha)
        line = threshold_pct(t)
        if need is None and basis is not None:
            found.append((case_id, f"with its judge's error as measured no number of runs can show ≥ {line}: "
                                   "label more of its judged items first (`scarbook calibrate`)"))
        elif need is None:
            found.append((case_id, f"no number of runs can show ≥ {line} (one failure is always possible): "
                                   "lower its threshold, or expect it undecided"))
        elif need > runs:
            judged = " with its judge's error corrected" if basis is not None else ""
            found.append((case_id, f"{plural(runs, 'run')} cannot show ≥ {line}{judged}; {need} can; or use --runs auto"))
    return found


def margin_warning(cases: Sequence, default_threshold: float, max_runs: int, judge_rates=None) -> str:
    """--runs auto's warning, said once before the runs, for the cases it can call "above" after a failure
    (stats/sequential.py weighs threshold - DELTA against at most 1 - EDGE: at a threshold of 99% or more a
    failure does not rule "above" out); "" when this plan can do that to none of them."""
    found = []
    for case_id, rule in sequential_rules(cases, default_threshold, max_runs, judge_rates).items():
        if hypotheses(rule.threshold)[1] <= rule.threshold and (node := above_after_a_failure(rule)) is not None:
            found.append(f"{case_id} (threshold {threshold_pct(rule.threshold)}: \"above\" at "
                         f"{plural(node[0], 'pass', 'passes')} and {plural(node[1], 'fail')})")
    if not found:
        return ""
    return (f"--runs auto can call a case \"above\" after a failure, because it decides within a margin (it weighs "
            f"the threshold − {round(100 * DELTA)} points against at most {threshold_pct(1 - EDGE)}): "
            f"{', '.join(found)} — use a fixed --runs N when a case must never fail")
