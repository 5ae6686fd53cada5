"""A session's gate, in one place: each case's numbers from its runs, then its decision.

    stats = [case_stats(c.id, runs[c.id], threshold_of(c), cfg.green, calibration) for c in cases]
    decided = decide_gate(info, stats, statuses, session_policy(info, cfg))

The report every command prints (reports/table.build_report) and the live screen once its session
ends (views/live_state.LiveSession) both call these, so the two faces show one rate, interval and
decision per case: for `--runs auto`, the rate bias-adjusted for stopping early and the interval
valid after the stop; with a calibrated judge, the rate corrected for its measured error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scarbook.config import Config, GatePolicy
from scarbook.history.judge_truth import NO_JUDGED_CASE, Calibration
from scarbook.models import RunRecord, RunStatus, SessionInfo
from scarbook.models.words import CauseKind, Decision
from scarbook.run.causes import (
    AGENTS_WORD,
    check_crashed,
    how_agent_can_claim,
    is_infra,
    judge_unreadable,
    on_agents_word,
    retried_on_agents_word,
)
from scarbook.stats.corrected import ALPHA, Corrected, correct, gate_evidence, judged_split
from scarbook.stats.corrected_gate import MAX_LABELS, CorrectedEvidence
from scarbook.stats.decisions import gate_stats
from scarbook.stats.judge_error import JudgeError
from scarbook.stats.rates import CaseStats, gate_band, summarize
from scarbook.stats.sequential import DELTA, SequentialRule, hypotheses, read_until_stop
from scarbook.text import interval_beside, pct, plural, threshold_pct


def session_policy(session: SessionInfo, cfg: Config) -> GatePolicy:
    """The gate a session ran under (recorded in its session.json), else scarbook.yaml's."""
    try:
        return GatePolicy.from_record(session.gate.policy()) if session.gate else cfg.gate
    except (TypeError, ValueError):  # a damaged or foreign record: the project's gate decides
        return cfg.gate


def gate_alpha(session: SessionInfo | None, policy: GatePolicy) -> float:
    """The level the gate's last look decides at: alpha, split over the looks of `undecided: more`
    (stats/decisions.decide_in_looks). A corrected interval is printed at it (1 - 2 x it), so it says
    what the decision beside it says."""
    gate = session.gate if session is not None else None
    looks = list(gate.looks) if gate is not None and gate.has("looks") else []
    return policy.alpha / len(looks) if len(looks) > 1 else policy.alpha


def case_stats(case_id: str, runs: Iterable[RunRecord], threshold: float, green: float,
               calibration: Calibration | None = None, alpha: float = ALPHA) -> CaseStats:
    """The case's rate, interval, pass@k and band from its runs; with a usable calibration of the judge,
    its judged rate corrected for the judge's measured error too (CaseStats.corrected, its interval the
    gate's at `alpha`)."""
    runs = list(runs)
    s = summarize(case_id, runs, threshold, green)
    error = calibration.usable_error if calibration is not None else None
    if calibration is not None and error is not None and s.rate is not None:
        s.corrected = _corrected(case_id, runs, error, threshold=s.threshold,
                                 calibrated_at=calibration.calibrated_at, alpha=alpha)
        if s.corrected is not None:  # coloured as the gate reads it
            s.band = gate_band(s.rate, s.corrected.rate, s.decision, s.threshold, s.green)
    return s


def _corrected(case_id: str, runs: Sequence[RunRecord], error: JudgeError, *, threshold: float | None = None,
               calibrated_at: str = "", alpha: float = ALPHA) -> Corrected | None:
    split = judged_split(runs)
    if split is None:
        return None
    passes, judge_fails, rule_fails, items = split
    return correct(passes, judge_fails, rule_fails, error.for_case(case_id), items=items, threshold=threshold,
                   calibrated_at=calibrated_at, alpha=alpha)


def corrected_evidence(case_id: str, runs: Iterable[RunRecord], error: JudgeError) -> CorrectedEvidence | None:
    """What the gate's exact test on the true rate reads of a judged case's runs so far (case_stats's
    `corrected.evidence`, which the report decides on): `undecided: more`'s looks decide on it as the
    report will (run/runner.py). None when its runs are not judged or the judge is no better than chance.
    The evidence alone (stats/corrected.gate_evidence): a look reads no rate or interval."""
    split = judged_split(runs)
    if split is None:
        return None
    passes, judge_fails, rule_fails, items = split
    return gate_evidence(passes, judge_fails, rule_fails, error.for_case(case_id), items=items)


def calibration_record(calibration: Calibration | None, case_ids: Iterable[str]) -> dict[str, Any] | None:
    """What a session records of the judge's calibration it was prepared with (session.json's gate.calibration):
    the one its looks, its --runs auto rule and its own report corrected and decided with. None without one,
    or when none of its cases is judged."""
    if calibration is None or calibration.reason == NO_JUDGED_CASE:
        return None
    return calibration.to_record(case_ids)


def replay_calibration(session: SessionInfo, current: Calibration | None) -> tuple[Calibration | None, str]:
    """The calibration a session's gate is replayed with, and the line that says so when it matters: the one
    the session recorded (calibration_record), so every later report decides as its runner did whatever
    labels were added since — with a line when history's `current` one is no longer it. A session recorded
    without one (older than it, or no case judged when it ran) or with a damaged one: `current`, and ""."""
    gate = session.gate
    recorded = gate.calibration if gate is not None else None
    if not recorded:
        return current, ""
    try:
        ran = Calibration.from_record(recorded)
    except (KeyError, TypeError, ValueError):
        return current, ""
    if current is None or not _changed(ran, recorded, current, session.case_ids):
        return ran, ""
    return ran, calibration_changed_line(ran, current, session.id)


def _changed(ran: Calibration, recorded: Mapping[str, Any], now: Calibration, case_ids: Iterable[str]) -> bool:
    """Whether what a person changes of the calibration has changed since the session ran: the labels it counts
    and their verdicts (Calibration.label_digest: labels added, relabelled, left out after a rubric edit or a
    judge change), or whether the rates are corrected with them at all. Not the strata's sizes (W): they move as
    history grows — with the last label made the day a session ran, history's counts that session's own judged
    items once it has run — and no one changed anything. A record older than the digest: all but its notes."""
    if "label_digest" in recorded:
        return ran.labels_key != now.labels_key
    mine, theirs = (dict(r) for r in (recorded, now.to_record(case_ids)))
    for record in (mine, theirs):
        record.pop("notes", None)
        record.pop("label_digest", None)
    return mine != theirs


def calibration_changed_line(ran: Calibration, now: Calibration, session_id: str = "") -> str:
    """'judge: this report corrects and decides with the calibration the session ran with (40 labels, last
    2026-12-02); history's has changed since (52 labels, last 2026-12-05: 12 added) — a new session decides with
    it'. The CLI's table, the JSON (judge_calibration_changed), the HTML, the step summary and the TUI's
    sessions screen print it. A session whose calibration corrected nothing (stale: labelled under another
    judge; too few labels) is said in the same one statement — what it ran with, what history holds now, what to
    run — not as that calibration's reason (its advice, `scarbook calibrate`, may be done already) beside it."""
    added = now.labels - ran.labels
    if added:
        change = f"{added} added" if added > 0 else f"{-added} fewer"
    elif ran.label_digest and ran.label_digest != now.label_digest:
        change = "a label's verdict changed, or other labels count"
    elif ran.usable != now.usable:
        change = "the same labels, " + ("used now" if now.usable else "no longer used")
    else:  # a session recorded before the labels' digest was kept
        change = "its judged items in history or the labels' verdicts changed"
    if not ran.usable:
        then = (ran.reason or "not used").split(" — ")[0]  # what held then, without its advice of then
        rerun = f": `scarbook rejudge {session_id}` grades its kept artifacts again (no agent runs)" if session_id else ""
        return (f"judge: the session ran with its rates not corrected ({then}), and this report decides as it ran; "
                f"history's calibration has changed since ({_said(now)}: {change}) — a new session decides with it"
                f"{rerun}")
    return (f"judge: this report corrects and decides with the calibration the session ran with ({_said(ran)}); history's "
            f"has changed since ({_said(now)}: {change}) — a new session decides with it")


def _said(cal: Calibration) -> str:
    labels = f"{plural(cal.labels, 'label')}, last {cal.calibrated_at or '?'}" if cal.labels else "no labels"
    return labels + ("" if cal.usable else ", not used")


def library_calibration_line(now: Calibration, corrected: bool, changed: bool) -> str:
    """The library's and `scarbook list`'s line on its ≈ rates, each case's corrected as its latest session's report
    corrects it (with the calibration that session ran with: replay_calibration): 'judge: ≈ rates corrected for its
    measured error (40 labels, last 2026-12-02); the gate decides on them'; when history's calibration `now` is no
    longer a session's (`changed`), that they are corrected as the sessions ran and history's has changed since;
    when labels exist but correct nothing, why. "" otherwise."""
    if changed:
        head = ("judge: ≈ rates corrected for its measured error with the calibration each case's latest session ran "
                "with" if corrected else "judge: rates not corrected for the judge's error, as each case's latest "
                "session ran")
        return f"{head}, as its report does; history's has changed since ({_said(now)}) — a new session decides with it"
    if corrected or now.usable:
        return (f"judge: ≈ rates corrected for its measured error ({plural(now.labels, 'label')}, last "
                f"{now.calibrated_at}); the gate decides on them")
    return f"judge: rates not corrected for the judge's error — {now.reason}" if now.labels else ""


def as_read(run: RunRecord) -> str:
    """A run as --runs auto's rule read it (run/runner.py): a fail the machine caused is no evidence ("infra")."""
    return CauseKind.INFRA if run.status == RunStatus.FAIL and is_infra(run) else run.status


def decide_gate(session: SessionInfo, stats: Sequence[CaseStats], statuses: Mapping[str, Sequence[str]],
                policy: GatePolicy, runs: Mapping[str, Sequence[RunRecord]] | None = None) -> list[CaseStats]:
    """`stats` with the gate's decision filled in, as the session ran: its looks (`undecided: more`: each
    case as of the look that decided it, with that look's Holm family, as the runner stopped it there),
    --runs auto's recorded decisions with the rate, interval and counts from exactly the runs its rule
    read (`runs`, each case's in k order: a fail the machine caused is not read) and with the rule
    that read them (the judge's q0, q1 the session recorded), capped at the session's runs per case.
    `statuses`: each case's run statuses in k order."""
    gate = session.gate
    looks = list(gate.looks) if gate is not None and gate.has("looks") else None
    rates = dict(gate.judge_rates) if gate is not None and gate.has("judge_rates") else None
    reads = {cid: [as_read(r) for r in rs] for cid, rs in runs.items()} if runs is not None else None
    at_looks = _at_looks(stats, runs, looks) if looks and runs is not None else looks
    decided = gate_stats(stats, policy, statuses, looks=at_looks, sequential=session.decisions or None,
                         sequential_cap=session.runs_per_case, sequential_reads=reads, sequential_rates=rates)
    if runs is None:
        return decided
    if session.decisions:  # --runs auto: its rule read again, at the worst
        return _ruled_at_worst(decided, runs, session.runs_per_case, rates)
    return _at_worst(decided, stats, statuses, policy, runs, looks)


def _ruled_at_worst(decided: list[CaseStats], runs: Mapping[str, Sequence[RunRecord]], cap: int,
                    rates: Mapping[str, Sequence[float]] | None) -> list[CaseStats]:
    """--runs auto's decisions, read again as _at_worst reads a fixed-N gate: the session's rule (its cap, the
    judge's q0, q1 it knew) reads each case's runs in launch order with every run `at_worst` a fail; a case it
    then decides otherwise (or not at all) has no verdict. (The rule reads no error: a run whose judge the artifact
    broke was no evidence to it.)"""
    out = []
    for s in decided:
        worst_runs = [r for r in runs.get(s.case_id, []) if at_worst(r)]
        if worst_runs and s.gate in (Decision.ABOVE, Decision.BELOW):
            q = (rates or {}).get(s.case_id)
            q0, q1 = (float(q[0]), float(q[1])) if q is not None and len(q) == 2 else (1.0, 1.0)
            try:
                rule = SequentialRule(s.threshold, max_runs=cap, q0=q0, q1=q1)
            except ValueError:  # a threshold the rule cannot take: it decided nothing to read again
                out.append(s)
                continue
            reads = [RunStatus.FAIL if at_worst(r) else as_read(r) for r in runs[s.case_id]]
            worst = rule.decide(*read_until_stop(rule, reads)) or Decision.UNDECIDED
            if worst != s.gate:
                s = replace(s, decision=Decision.NO_VERDICT, runs_needed=None,
                            band=gate_band(None, None, Decision.NO_VERDICT, s.threshold, s.green),
                            gate_note=worst_note(worst_runs, s.gate, worst))
        out.append(s)
    return out


def at_worst(run: RunRecord) -> bool:
    """Whether the gate also reads `run` as a fail: its verdict, or its lack of one, may be the agent's own doing — it
    was retried on the agent's own word (causes.retried_on_agents_word: a 529, MemoryError or 'bwrap:' line it
    printed, an exit 127), or it is an error because its judge's reply could not be read (causes.judge_unreadable:
    what the artifact says can cause that), or because a rule check crashed on what the run left (causes.check_crashed).
    """
    return retried_on_agents_word(run) or judge_unreadable(run) or check_crashed(run) is not None


def _at_worst(decided: list[CaseStats], stats: Sequence[CaseStats], statuses: Mapping[str, Sequence[str]],
              policy: GatePolicy, runs: Mapping[str, Sequence[RunRecord]], looks: list[int] | None) -> list[CaseStats]:
    """The gate read again with every run `at_worst` read as a fail, as it may have been: an agent that knows it
    failed can claim the machine failed it to buy a retry, or write what breaks its judge to turn a fail into an
    error, out of the rate. A case whose decision differs between the two readings has no verdict (exit 3), saying
    how many runs and why (worst_note)."""
    worst_runs = {cid: [r for r in rs if at_worst(r)] for cid, rs in runs.items()}
    if not any(worst_runs.values()):
        return decided
    worst_statuses = {cid: [RunStatus.FAIL if at_worst(r) else r.status for r in runs[cid]]
                      if worst_runs.get(cid) else list(rs) for cid, rs in statuses.items()}
    worst_stats = [replace(s, corrected=replace(s.corrected, evidence=_as_fails(s.corrected.evidence,
                                                                                 runs.get(s.case_id, [])))
                           if worst_runs.get(s.case_id) and s.corrected is not None and s.corrected.evidence is not None
                           else s.corrected) for s in stats]
    worst_looks: Any = looks
    if looks:
        worst_looks = {size: {cid: _as_fails(ev, runs.get(cid, [])[:size]) for cid, ev in at.items()}
                       for size, at in _at_looks(stats, runs, looks).items()}
    worst = gate_stats(worst_stats, policy, worst_statuses, looks=worst_looks)
    out = []
    for s, w in zip(decided, worst, strict=True):
        # (only a case with such runs of its own: read as fails, another case's may change the family's correction,
        # yet this case's evidence is what it is)
        if s.gate != w.gate and s.gate != Decision.NO_VERDICT and worst_runs.get(s.case_id):
            s = replace(s, decision=Decision.NO_VERDICT, runs_needed=None, band=gate_band(None, None, Decision.NO_VERDICT,
                                                                                         s.threshold, s.green),
                        gate_note=worst_note(worst_runs[s.case_id], s.gate, w.gate))
        out.append(s)
    return out


def _as_fails(ev: CorrectedEvidence, runs: Sequence[RunRecord]) -> CorrectedEvidence:
    """A judged case's evidence with its runs `at_worst` read as rule fails (certain fails)."""
    passed = sum(1 for r in runs if at_worst(r) and r.status == RunStatus.PASS)
    unread = sum(1 for r in runs if at_worst(r) and r.status not in (RunStatus.PASS, RunStatus.FAIL))
    return replace(ev, passes=ev.passes - passed, rule_fails=ev.rule_fails + passed + unread)


def worst_note(runs: Sequence[RunRecord], said: str, worst: str) -> str:
    """'it reads above only because 2 runs were retried on the agent's own word (api-overloaded: what it printed or
    how it exited, which scarbook cannot verify); read as fails they make it undecided — with record: on, scarbook
    verifies a model API's failure itself', and of runs whose judge reply could not be read: "… because 4 runs' judge
    replies could not be read (no verdict or a malformed one, twice), which what the artifact says can cause; …"."""
    claimed = [r for r in runs if retried_on_agents_word(r)]
    unreadable = [r for r in runs if judge_unreadable(r) and not retried_on_agents_word(r)]
    crashed = [c for r in runs if not retried_on_agents_word(r) and not judge_unreadable(r)
               and (c := check_crashed(r)) is not None]
    why, said_only = [], False
    if claimed:
        rules = sorted({a.cause.rule for r in claimed for a in r.attempts[:-1] if a.cause and on_agents_word(a.cause)})
        hows: dict[str, list[str]] = {}
        for rule in rules:
            hows.setdefault(how_agent_can_claim(rule), []).append(rule)
        said_only = AGENTS_WORD in hows  # a line it printed: one a recorded model call would have shown
        why.append(f"{plural(len(claimed), 'run')} {'was' if len(claimed) == 1 else 'were'} retried on the agent's own "
                   f"word ({'; '.join(', '.join(named) + ': ' + how for how, named in hows.items())})")
    if unreadable:
        one = len(unreadable) == 1
        why.append(f"{len(unreadable)} {'run' if one else 'runs'}' judge {'reply' if one else 'replies'} could not be "
                   "read (no verdict or a malformed one, twice), which what the artifact says can cause")
    if crashed:
        one = len(crashed) == 1
        why.append(f"{len(crashed)} {'run' if one else 'runs'}' rule {'check' if one else 'checks'} crashed on what the "
                   f"run left ({crashed[0].detail}), which what the agent wrote can cause")
    one = len(runs) == 1
    return (f"it reads {said} only because {' and '.join(why)}; read as {'a fail' if one else 'fails'} "
            f"{'it makes' if one else 'they make'} it {worst}"
            + (" — with record: on, scarbook verifies a model API's failure itself" if said_only else ""))


def _at_looks(stats: Sequence[CaseStats], runs: Mapping[str, Sequence[RunRecord]],
              looks: Sequence[int]) -> dict[int, dict[str, CorrectedEvidence]]:
    """At each of `looks`: each calibrated case's corrected evidence from its runs up to it (k order) —
    what the runner's look tested it on (corrected_evidence of those runs: the same counts and the same
    judge basis, at the rubric items those runs needed). gate_stats puts the case's own
    `corrected.evidence` at the last look."""
    out: dict[int, dict[str, CorrectedEvidence]] = {}
    for size in looks:
        at = out.setdefault(size, {})
        for s in stats:
            full = s.corrected.evidence if s.corrected is not None else None
            split = judged_split(runs.get(s.case_id, [])[:size]) if full is not None else None
            if full is not None and split is not None and split[0] + split[1]:
                passes, judge_fails, rule_fails, items = split
                at[s.case_id] = CorrectedEvidence(passes, judge_fails, rule_fails, replace(full.basis, items=items))
    return out


def ruled_out(decision: str, threshold: float) -> float:
    """The rate a --runs auto decision rules out (or less for "above", or more for "below"): the rule's hypothesis
    on the other side of the threshold (stats/sequential.hypotheses), rounded to 6 places so 0.8 − 0.1 reads 0.7.
    Near 0 and 1 it is kept off them: at 8%, 1% (not −2%); at 95%, 99% (not 105%)."""
    low, high = (round(h, 6) for h in hypotheses(threshold))
    return low if decision == Decision.ABOVE else high


def margin_points(decision: str, threshold: float) -> float:
    """The margin a --runs auto decision was taken with, in points: from the threshold to the rate it rules out —
    10 (DELTA), less where that rate is kept off 0 or 1 (7 above 8%, 4 below 95%)."""
    return round(100 * abs(threshold - ruled_out(decision, threshold)), 6)


def fixed_n_margin_words(thresholds: Iterable[float]) -> str:
    """Where the fixed-N tests --runs auto's summary compares with are right as often as its rule: 'threshold ± 10
    points', or the true distances where the rule keeps a hypothesis off 0 or 1 ('threshold − 7 and + 10 points'
    at 8%; "each case's threshold − 7 to 10 and + 4 to 10 points" when they differ between cases)."""
    thresholds = list(thresholds)
    under = sorted({margin_points(Decision.ABOVE, t) for t in thresholds})  # down to the rate "above" rules out
    over = sorted({margin_points(Decision.BELOW, t) for t in thresholds})
    if under == over and len(under) <= 1:
        return f"threshold ± {under[0] if under else 100 * DELTA:g} points"
    lead = "threshold" if len(under) == len(over) == 1 else "each case's threshold"
    return f"{lead} − {_points_span(under)} and + {_points_span(over)} points"


def _points_span(points: list[float]) -> str:
    return f"{points[0]:g}" if len(points) == 1 else f"{points[0]:g} to {points[-1]:g}"


def unbounded_words(c: Corrected, threshold: float) -> str:
    """Why a judge-corrected interval is the whole range, in words (Corrected.unbounded): '≈90% CI 0–100%: the
    judge's error as its 200 labels bound it could account for every verdict on its own — each pass a false pass
    (it may pass up to 38% of failing runs), each fail a miss (it may fail up to 38% of passing runs); were its
    error known exactly, these 50 runs would give 28–72%: about 39 more labels would bound it'; "" when the
    interval is bounded. The CLI's table, the HTML and the step summary (SessionReport.judge_note) and the
    JSON (`corrected.ci_note`) say it."""
    u = c.unbounded
    if u is None or c.evidence is None:
        return ""
    ev = c.evidence
    false_pass = f"a false pass (it may pass up to {pct(u.false_pass)} of failing runs)"
    miss = f"a miss (it may fail up to {pct(u.missed)} of passing runs)"
    if u.false_pass is None:
        said, what = "no run passed, and ", f"every fail on its own — each {miss}"
    elif u.missed is None:
        said, what = "every run passed, and ", f"every pass on its own — each {false_pass}"
    else:
        said, what = "", f"every verdict on its own — each pass {false_pass}, each fail {miss}"
    exact = interval_beside(u.exact[0], u.exact[1], threshold)
    if u.labels is not None:
        then = f"about {plural(u.labels, 'more label')} would bound it"
    elif u.exact[0] > 0 and u.exact[1] < 1:
        then = (f"labels alone would not bound it within {MAX_LABELS:,} more — the judge's PASS share among its "
                f"{plural(round(ev.basis.w.n), 'judged item')} in history is too uncertain: more judged runs would narrow it")
    else:
        then = "more runs first, labels alone cannot bound it"
    return (f"{c.ci_label.removeprefix('≈')} 0–100%: {said}the judge's error as its {plural(c.labels, 'label')} bound "
            f"it could account for {what}; "
            f"were its error known exactly, these {plural(ev.decided, 'run')} would give {exact}: {then}")


def unbounded_note(s: CaseStats) -> str:
    """Why a case's ≈ rate has a 0–100% interval, in the report's words (unbounded_words), after the rate
    it stands for: '≈58%, 90% CI 0–100%: the judge's error as its 40 labels bound it could account for …'; ""
    when its interval is bounded or it has none."""
    words = unbounded_words(s.corrected, s.threshold) if s.corrected is not None else ""
    return f"≈{pct(s.corrected.rate)}, {words}" if s.corrected is not None and words else ""


def adaptive_words(decision: str, threshold: float) -> str:
    """--runs auto's decision in words that name the margin it was taken with: the rule weighs threshold - DELTA
    against threshold + DELTA (stats/sequential.py), so "above" rules out the lower end, not every rate under
    the threshold — its 95% interval may still reach under it (74–100% at 80%). 'above 80% (within its
    10-point margin: its runs rule out 70% or less)', the margin being the true distance where the rule keeps
    its hypothesis off 0 or 1 ('above 8% (within its 7-point margin: its runs rule out 1% or less)'); any other
    decision as it is. The CLI's lines and the live screen's say it in these words."""
    if decision not in (Decision.ABOVE, Decision.BELOW):
        return decision
    margin = f"within its {margin_points(decision, threshold):g}-point margin"
    out = threshold_pct(ruled_out(decision, threshold))
    if decision == Decision.ABOVE:
        return f"above {threshold_pct(threshold)} ({margin}: its runs rule out {out} or less)"
    return f"below {threshold_pct(threshold)} ({margin}: its runs rule out {out} or more)"


def margin_line(s: CaseStats) -> str:
    """A case --runs auto decided whose 95% interval reaches past its threshold, said with the margin the
    decision was taken with: 'always: above 80% (within its 10-point margin: its runs rule out 70% or
    less) — its 95% interval 74–100% still reaches under 80%'; "" for any other case. The CLI, the text and
    Markdown reports, the JUnit testcase's system-out and the live screen print it."""
    words = margin_words(s)
    return f"{s.case_id}: {words}" if words else ""


def margin_words(s: CaseStats) -> str:
    """margin_line without the case's id, for a place that already names the case (the HTML report's gate
    cell, beside its decision): 'above 80% (within its 10-point margin: …) — its 95% interval 74–100% still
    reaches under 80%'; "" for any other case."""
    if not s.rate_note or s.rate is None:
        return ""
    if s.gate == Decision.ABOVE and s.lo < s.threshold:
        side = "under"
    elif s.gate == Decision.BELOW and s.hi > s.threshold:
        side = "over"
    else:
        return ""
    return (f"{adaptive_words(s.gate, s.threshold)} — its 95% interval "
            f"{interval_beside(s.lo, s.hi, s.threshold)} still reaches {side} {threshold_pct(s.threshold)}")


def margin_tag(s: CaseStats) -> str:
    """margin_words in brief, for a table cell beside the decision (the step summary's gate column: "above
    (10-pt margin)"): '10-pt margin' (its true distance: '7-pt margin' above 8%) for a case margin_words speaks
    of; "" for any other case."""
    return f"{margin_points(s.gate, s.threshold):g}-pt margin" if margin_words(s) else ""


def gate_words(s: CaseStats, words: Mapping[str, str]) -> str:
    """A gate cell or property in a report's own `words` for the decisions ({"above": "ok", "below": "**below**"};
    a decision it has no word for as it is), but a case margin_words speaks of named by its decision with its
    margin in brief: "above (10-pt margin)", "**below** (10-pt margin)" — beside an interval that reaches past the
    threshold a bare "ok" says more than the rule did. The step summary, the JUnit file, the text table and the
    HTML report say it so."""
    word = words.get(s.gate, s.gate)
    tag = margin_tag(s)
    if not tag:
        return word
    return f"{Decision.ABOVE.value if s.gate == Decision.ABOVE else word} ({tag})"


@dataclass(frozen=True)
class DecisionMargin:
    """The margin a --runs auto decision was taken with, as the JSON report keeps it (a case's `margin`):
    the rule weighed `hypotheses` (threshold - 10 points against threshold + 10, each kept off 0 and 1), so
    "above" rules out the first or less and "below" the second or more (`rules_out`), `points` from the
    threshold (margin_points: 10, or less where the hypothesis was kept off 0 or 1); `words` says it
    (adaptive_words) and `note` says where its 95% interval still reaches past the threshold (margin_words;
    "" when it does not)."""

    points: float
    hypotheses: tuple[float, float]
    rules_out: float
    words: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"points": self.points, "hypotheses": list(self.hypotheses), "rules_out": self.rules_out,
                "words": self.words, "note": self.note or None}


def decision_margin(s: CaseStats) -> DecisionMargin | None:
    """The margin of a case --runs auto's rule decided above or below (its rate is the rule's: `rate_note`);
    None for any other case (undecided at the cap, no verdict, a fixed-N session's)."""
    if not s.rate_note or s.rate is None or s.gate not in (Decision.ABOVE, Decision.BELOW):
        return None
    return DecisionMargin(margin_points(s.gate, s.threshold),
                          (ruled_out(Decision.ABOVE, s.threshold), ruled_out(Decision.BELOW, s.threshold)),
                          ruled_out(s.gate, s.threshold), adaptive_words(s.gate, s.threshold), margin_words(s))
