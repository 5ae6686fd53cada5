"""The gate's decision for each case: *above*, *below* or *undecided* against its threshold.

Evidence mode (the default). With a case's judged runs n = passes + fails and threshold t, two
one-sided exact binomial tests:

    p_below = P(X <= passes | n, t)    small: the case is below t   (H0: its rate is at least t)
    p_above = P(X >= passes | n, t)    small: the case meets t      (H0: its rate is below t)

A case is **below** when its Holm-adjusted p_below (Holm 1979, over the suite's cases that have a
verdict) is under alpha, **above** when its own p_above is under alpha, **undecided** otherwise.

What that promises:
  - a false red (some case called below while its true rate is at least its threshold) happens in
    at most alpha of sessions, for the whole suite, whatever the dependence between cases (Holm);
  - each case truly below its threshold is called above at most alpha of the time. A release gate
    (`undecided: fail`) is green only when *every* case is above, so one truly-below case alone
    holds the suite's false-green rate at alpha (the intersection-union principle: no correction is
    needed on that side).
Point mode is the old rule, `rate >= threshold`, kept for those who want it; `false_red_chance`
says how often that rule goes red by chance at the observed rates.

Errors cannot buy a verdict: a case needs at least `min_verdicts` judged runs (default: half its
runs, at least 3 and
at most all of them), in every mode, or it has no verdict. `error_range` is the span the errored
runs could have moved its rate over.

Pure numbers, no I/O and no scipy (the tests check the binomial tails against scipy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from scarbook.config import GatePolicy
from scarbook.models.words import Decision, GateMode
from scarbook.stats import corrected_gate
from scarbook.stats.binomial import binom_cdf, binom_sf
from scarbook.stats.compare import holm_adjust  # the one Holm step-down, shared with `diff`
from scarbook.stats.corrected_gate import CorrectedEvidence
from scarbook.stats.rates import CaseStats, gate_band, summarize_counts
from scarbook.stats.runs_needed import runs_to_decide  # "needs about N more runs"
from scarbook.stats.sequential import SequentialRule, after_the_stop
from scarbook.text import plural, threshold_pct


def min_verdicts_for(total_runs: int, configured: int | None = None) -> int:
    """Judged runs a case needs for a verdict: `configured`, else half its runs and at least 3 (all of
    them when it has fewer than 3: a 2-run session can still gate, but not on 1 verdict and 1 error)."""
    if configured is not None:
        return configured
    return min(max(total_runs, 1), max(3, math.ceil(total_runs / 2)))


def error_range(passes: int, fails: int, errors: int) -> tuple[float, float] | None:
    """The pass rates the errored runs could have produced had each reached a verdict: all fails
    (low) to all passes (high). None without errors (or without any run)."""
    n = passes + fails + errors
    if not errors or not n:
        return None
    return passes / n, (passes + errors) / n


@dataclass(frozen=True)
class CaseEvidence:
    """One case's runs in one session, as the gate sees them."""

    case_id: str
    passes: int
    fails: int
    errors: int
    threshold: float
    unjudged: int = 0
    # a judged case whose judge's error was measured (stats/corrected.py): when given, the two tests
    # are the exact ones on the true rate (stats/corrected_gate.py) instead of those on the raw counts
    corrected: CorrectedEvidence | None = None

    @property
    def judged(self) -> int:
        return self.passes + self.fails

    @property
    def total(self) -> int:
        return self.passes + self.fails + self.errors + self.unjudged


@dataclass(frozen=True)
class CaseDecision:
    case_id: str
    decision: Decision
    p_above: float | None = None  # P(X >= passes | n, t): small means the case meets its threshold
    p_below: float | None = None  # P(X <= passes | n, t): small means it is below
    p_below_holm: float | None = None  # Holm-adjusted over the suite's cases with a verdict
    runs_needed: int | None = None  # undecided: about how many more judged runs would decide it
    why: str = ""  # no verdict: why not; undecided: what would decide it

    def to_dict(self) -> dict:
        return {"decision": self.decision, "p_above": self.p_above, "p_below": self.p_below,
                "p_below_holm": self.p_below_holm, "runs_needed": self.runs_needed, "why": self.why}


def _no_verdict(e: CaseEvidence, needed: int) -> str | None:
    if e.unjudged:
        return f"{e.unjudged} of its runs went unjudged (judge checks skipped)"
    if e.judged < needed:
        return (f"only {e.judged} of its {plural(e.total, 'run')} reached a verdict; the gate needs at least {needed} "
                "(errors cannot count as evidence)")
    return None


DEFAULT_POLICY = GatePolicy()


def decide_cases(cases: Sequence[CaseEvidence], policy: GatePolicy = DEFAULT_POLICY, *,
                 alpha: float | None = None, notes: bool = True) -> list[CaseDecision]:
    """Every case's decision, in the input order. `alpha` overrides the policy's (a look of
    `undecided: more` spends a share of it). `notes=False`: an undecided case's `runs_needed` and note are
    left out (runs_to_decide tries every run count up to 20,000: a few ms for a case near its line), for a
    caller that reads only the decisions (an earlier look, the runner)."""
    level = policy.alpha if alpha is None else alpha
    out: dict[int, CaseDecision] = {}
    verdicts: list[tuple[int, CaseEvidence]] = []
    for i, e in enumerate(cases):
        why = _no_verdict(e, min_verdicts_for(e.total, policy.min_verdicts))
        if why is not None:
            out[i] = CaseDecision(e.case_id, Decision.NO_VERDICT, why=why)
        else:
            verdicts.append((i, e))
    tested: list[tuple[int, CaseEvidence, float, float]] = []
    for i, e in verdicts:
        n, t = e.judged, e.threshold
        if e.corrected is not None:  # exact tests on the true rate, the judge's error bounded
            p_above = corrected_gate.p_above(e.corrected, t, level)
            p_below = corrected_gate.p_below(e.corrected, t, level, family=len(verdicts))
        else:
            p_above, p_below = binom_sf(e.passes, n, t), binom_cdf(e.passes, n, t)
        if policy.mode == GateMode.POINT:
            rate = _corrected_rate(e.corrected) if e.corrected is not None else e.passes / n
            out[i] = CaseDecision(e.case_id, Decision.ABOVE if rate >= t else Decision.BELOW, p_above, p_below)
            continue
        tested.append((i, e, p_above, p_below))
    adjusted = holm_adjust([p_below for _, _, _, p_below in tested])
    for (i, e, p_above, p_below), p_holm in zip(tested, adjusted, strict=True):
        if e.threshold <= 0:
            decision = Decision.ABOVE  # every rate meets a threshold of 0
        elif p_holm < level:
            decision = Decision.BELOW
        elif p_above < level:
            decision = Decision.ABOVE
        else:
            decision = Decision.UNDECIDED
        needed = (runs_to_decide(e.passes, e.fails, e.threshold, level)
                  if notes and decision == Decision.UNDECIDED and e.corrected is None else None)
        out[i] = CaseDecision(e.case_id, decision, p_above, p_below, p_holm, needed,
                              undecided_note(e, needed) if notes and decision == Decision.UNDECIDED else "")
    return [out[i] for i in range(len(cases))]


def _corrected_rate(ev: CorrectedEvidence) -> float:
    """Point mode on a corrected case: the Rogan–Gladen rate at the calibration's point estimate."""
    return corrected_gate.point_rate(ev)


def undecided_note(e: CaseEvidence, needed: int | None) -> str:
    """'needs about 12 more runs to show it meets 80%' (or that it is below, or that no count will)."""
    line = threshold_pct(e.threshold)
    if e.corrected is not None:
        return f"its rate corrected for the judge's error is too close to {line} to call: more runs would decide it"
    if e.threshold >= 1:
        return f"no number of runs can show a rate meets {line}: sampling never rules out a failure"
    if needed is None:
        return f"its rate sits at its threshold {line}: more runs are unlikely to decide it"
    rate = e.passes / e.judged
    side = f"meets {line}" if rate > e.threshold else f"is below {line}"
    return f"needs about {needed} more {'run' if needed == 1 else 'runs'} to show it {side}"


def point_false_red_chance(cases: Sequence[CaseEvidence]) -> float:
    """Point mode (`rate >= threshold`): the chance a session goes red by chance if every case's true
    rate were its observed rate, i.e. that some case at or above its threshold reads below it when
    run again with the same number of judged runs. Cases observed below are left out: at their
    observed rate a red would be a true one."""
    keep = 1.0
    for e in cases:
        n = e.judged
        if n == 0 or e.unjudged or e.passes / n < e.threshold:
            continue
        # reads below when passes/n < t, i.e. passes <= ceil(t n) - 1
        keep *= 1.0 - binom_cdf(math.ceil(e.threshold * n - 1e-9) - 1, n, e.passes / n)
    return 1.0 - keep


# ---- `undecided: more`: looks at N, 2N, 4N, ... up to --max-runs -------------------------------
#
# Each look decides every case again at alpha / L (L looks in all), and a case decided at a look
# keeps that decision; undecided cases get runs up to the next look. Each look's Holm procedure has
# a family-wise false-red rate of at most alpha / L, so over all L looks it is at most alpha (the
# union bound): looking again costs alpha, and the split says exactly how much.

def more_looks(runs: int, max_runs: int) -> list[int]:
    """The run counts at which `undecided: more` looks: runs, 2 runs, 4 runs, ..., max_runs."""
    looks = [runs]
    while looks[-1] < max_runs:
        looks.append(min(max_runs, looks[-1] * 2))
    return looks


def _evidence(case_id: str, statuses: Sequence[str], threshold: float) -> CaseEvidence:
    count = {s: 0 for s in ("pass", "fail", "error", "unjudged")}
    for s in statuses:
        count[s if s in count else "error"] += 1
    return CaseEvidence(case_id, count["pass"], count["fail"], count["error"], threshold, count["unjudged"])


LookEvidence = Mapping[int, Mapping[str, CorrectedEvidence]]  # look (its run count) -> case -> corrected evidence


def decide_in_looks(statuses: Mapping[str, Sequence[str]], thresholds: Mapping[str, float], policy: GatePolicy,
                    looks: Sequence[int], total_looks: int | None = None,
                    corrected: LookEvidence | None = None, notes: bool = True) -> dict[str, CaseDecision]:
    """Each case's decision after the looks so far; `statuses` are its runs' statuses in launch
    order (run k = 1, 2, ...). A case decided above or below at a look keeps that decision, taken with
    the Holm family that look had, whether a calibration covers it or not: the runner's looks
    (make_extender) read each look as its last and stop a case where one decides it, so a report that
    replays the looks says what the runner did (were it decided again at a later look, whose family can be
    bigger — a case without a verdict at the first look has one by then — a case the runner called
    below and stopped could come out undecided).
    `corrected`: per look (its run count), the judge-corrected evidence of each calibrated case's runs
    up to it. At every look such a case is tested on it, never on the judge's raw verdicts, which a judge
    that misses passes pulls below the threshold (a case at its threshold went red in about half the
    sessions) — also in an earlier look's Holm family, where a raw p_below would call other cases. A look
    without a calibrated case's corrected evidence (a plain list of looks: gate_stats) keeps no decision
    of it. Each look's test is at alpha / L, so over the looks the false red stays at most alpha (the
    union bound). Only the last look's undecided cases get a note (`notes`: decide_cases): an earlier look's
    decision is all that is read of it."""
    level = policy.alpha / (total_looks or len(looks))
    calibrated = {cid for at in (corrected or {}).values() for cid in at}
    kept: dict[str, CaseDecision] = {}
    last: list[CaseDecision] = []
    for size in looks:
        at = (corrected or {}).get(size) or {}
        evidence = [replace(_evidence(cid, runs[:size], thresholds[cid]), corrected=at.get(cid))
                    for cid, runs in statuses.items()]
        last = decide_cases(evidence, policy, alpha=level, notes=notes and size == looks[-1])
        for d in last:
            if d.case_id not in kept and d.decision in (Decision.ABOVE, Decision.BELOW) and (
                    d.case_id in at or d.case_id not in calibrated):  # tested on the evidence it is decided on
                kept[d.case_id] = d
    return {d.case_id: kept.get(d.case_id, d) for d in last}


def make_extender(thresholds: Mapping[str, float], policy: GatePolicy, looks: Sequence[int],
                  said: Callable[[str, Decision, int], None] | None = None):
    """For the runner: given every case's statuses so far (launch order), the run count each
    still-undecided case should be brought to next ({} when the last look is done). `corrected`: per look
    done (its run count), the judge-corrected evidence of each case a calibration covers, from its runs up
    to that look: such a case is tested at every look on it, as the report tests it (decide_in_looks),
    not on its raw verdicts.
    `said(case, decision, runs)`: told of each case decided above or below at a look (again at each later
    look: the caller says it once), so its decision can be shown while the other cases run on."""
    def extend(statuses: Mapping[str, Sequence[str]],
               corrected: LookEvidence | None = None) -> dict[str, int]:
        have = max((len(v) for v in statuses.values()), default=0)
        done = [size for size in looks if size <= have]
        if not done or len(done) >= len(looks):
            return {}
        decided = decide_in_looks(statuses, thresholds, policy, done, len(looks), corrected, notes=False)
        if said is not None:
            for cid, d in decided.items():
                if d.decision in (Decision.ABOVE, Decision.BELOW):
                    said(cid, d.decision, len(statuses[cid]))
        return {cid: looks[len(done)] for cid, d in decided.items() if d.decision in (Decision.UNDECIDED, Decision.NO_VERDICT)}
    return extend


# ---- the report: decisions onto CaseStats -------------------------------------------------------

_SPRT_DECISIONS: dict[str, Decision] = {d: d for d in (Decision.ABOVE, Decision.BELOW, Decision.UNDECIDED)}


def gate_stats(stats: Sequence[CaseStats], policy: GatePolicy, statuses: Mapping[str, Sequence[str]], *,
               looks: Sequence[int] | LookEvidence | None = None, sequential: Mapping[str, str] | None = None,
               sequential_cap: int | None = None, sequential_reads: Mapping[str, Sequence[str]] | None = None,
               sequential_rates: Mapping[str, Sequence[float]] | None = None) -> list[CaseStats]:
    """`stats` with the gate's decision filled in. `statuses`: each case's run statuses in k order.
    `looks`: `undecided: more`'s looks (their run counts); as a mapping (run/gate.decide_gate), each with
    each calibrated case's corrected evidence from its runs up to it, which that look's Holm family holds
    (decide_in_looks). The last look's is each case's `corrected.evidence`; as a plain list, an earlier
    look reads a calibrated case's raw verdicts and keeps no decision of it. A case a look decides keeps
    that look's decision, as the runner stopped it there.
    `sequential`: --runs auto's SPRT decisions, which decide (a fixed-N test after the SPRT stopped
    would not be valid); min_verdicts and unjudged runs still leave a case without a verdict. Its
    rate is then the bias-adjusted one and its interval one valid after the stop (`sequential_cap`:
    the rule's max_runs), its counts those of the runs the rule read (`sequential_reads`: each case's
    statuses in launch order with "infra" for a fail the machine caused, which the rule never read;
    `sequential_rates`: the judge's (q0, q1) of a case whose rule knew them), all from the rule that read them."""
    thresholds = {s.case_id: s.threshold for s in stats}
    full = {s.case_id: list(statuses.get(s.case_id, [])) for s in stats}
    if sequential:
        decided = {}
        for s in stats:
            e = _evidence(s.case_id, full[s.case_id], s.threshold)
            why = _no_verdict(e, min_verdicts_for(e.total, policy.min_verdicts))
            # history's word for the SPRT's decision; any other word (a damaged or edited file) decides nothing
            decision = _SPRT_DECISIONS.get(sequential.get(s.case_id, Decision.UNDECIDED), Decision.UNDECIDED)
            decided[s.case_id] = CaseDecision(s.case_id, Decision.NO_VERDICT if why else decision, why=why or (
                "--runs auto reached its cap without deciding" if decision == Decision.UNDECIDED else ""))
    else:
        sizes = list(looks) if looks else [max((len(v) for v in full.values()), default=0)]
        # the counts the ≈ interval was built from (Corrected.evidence): the decision and the interval agree
        corrected = {s.case_id: s.corrected.evidence for s in stats
                     if s.corrected is not None and s.corrected.evidence is not None}
        at_looks = {**(looks if isinstance(looks, Mapping) else {}), sizes[-1]: corrected}
        decided = decide_in_looks(full, thresholds, policy, sizes, corrected=at_looks)
    out = []
    for s in stats:
        d = decided[s.case_id]
        why = d.why
        if d.decision == Decision.UNDECIDED and s.corrected is not None and s.corrected.judge_limited:
            why = (f"its rate corrected for the judge's error is too close to {threshold_pct(s.threshold)} to call "
                   "with these labels: more labels (scarbook calibrate), not more runs, would decide it")
        fixed = s.corrected.rate if s.corrected is not None and s.rate is not None else None
        s = replace(s, decision=d.decision, gate_note=why, runs_needed=d.runs_needed,
                    error_span=error_range(s.passes, s.fails, s.errors),
                    band=gate_band(s.rate, fixed, d.decision, s.threshold, s.green))
        if sequential and sequential_cap and s.rate is not None:
            reads = (sequential_reads or {}).get(s.case_id, full[s.case_id])
            s = _after_the_stop(s, reads, sequential_cap, (sequential_rates or {}).get(s.case_id))
        out.append(s)
    return out


def _after_the_stop(s: CaseStats, statuses: Sequence[str], cap: int, rates: Sequence[float] | None) -> CaseStats:
    """--runs auto: the rate bias-adjusted for the rule's stopping, the interval valid after it and the
    counts, all from exactly the runs the rule read and the rule that read them (with the judge's
    q0, q1 when it knew them: then the rate is on the true rate, and no second correction is shown)."""
    q0, q1 = (float(rates[0]), float(rates[1])) if rates is not None and len(rates) == 2 else (1.0, 1.0)
    try:
        rule = SequentialRule(s.threshold, max_runs=cap, q0=q0, q1=q1)
    except ValueError:  # a threshold the rule cannot take (0 or 1 ± delta): the raw numbers stand
        return s
    found = after_the_stop(rule, statuses)
    if found is None:
        return s
    read = summarize_counts(s.case_id, found.passes, found.fails, s.errors, s.threshold, s.green)
    return replace(read, rate=found.rate, lo=found.lo, hi=found.hi,
                   band=gate_band(found.rate, None, s.decision, s.threshold, s.green),
                   rate_note=found.note, unread=found.unread, decision=s.decision, gate_note=s.gate_note,
                   runs_needed=s.runs_needed, error_span=s.error_span,
                   corrected=s.corrected if (q0, q1) == (1.0, 1.0) else None)
