"""What a session says at the end: the case x pass-rate table and JSON (JUnit: scarbook.reports.junit)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.config import Config, GatePolicy
from scarbook.fs.files import write_named_file
from scarbook.history.judge_truth import Calibration
from scarbook.models import STATUS_GLYPH, Case, CauseKind, RunRecord, RunStatus, SessionInfo, SessionState, Usage
from scarbook.models.words import Decision, GateMode, Undecided
from scarbook.reports.errored import INFRA_UNRESOLVED, agent_error, unfinished_words
from scarbook.reports.rerun_note import rerun_line
from scarbook.reports.versus_table import ON_JUDGED_COUNTS, format_versus, versus_to_dict
from scarbook.run.causes import count_causes, is_infra, retried_on_agents_word
from scarbook.run.gate import (
    case_stats,
    decide_gate,
    decision_margin,
    fixed_n_margin_words,
    gate_alpha,
    gate_words,
    margin_line,
    replay_calibration,
    session_policy,
    unbounded_words,
)
from scarbook.run.outcome import EXIT_BELOW, EXIT_OK, EXIT_USAGE, exit_code  # noqa: F401
from scarbook.run.outcome import EXIT_NO_VERDICT as EXIT_ERRORS  # noqa: F401
from scarbook.run.versus import SessionVersus, compare_session
from scarbook.stats.corrected import judged_split, more_labels_words
from scarbook.stats.decisions import CaseEvidence, point_false_red_chance
from scarbook.stats.rates import CaseStats, count_statuses, effective_threshold
from scarbook.stats.sequential import SequentialRule, matched_fixed_n
from scarbook.text import interval_beside, k_note, pct, pct_beside, plural

GATE_WORDS = {"above": "ok", "below": "BELOW", "undecided": "undecided", "no verdict": "no verdict"}


@dataclass
class SessionReport:
    session: SessionInfo
    stats: list[CaseStats]
    runs: list[RunRecord]
    agent_usage: Usage = field(default_factory=Usage)
    judge_usage: Usage = field(default_factory=Usage)
    judge_calls: int = 0
    judge_calls_saved: int = 0
    judge_cache_hits: int = 0  # judge samples answered by the verdict cache (issue 27)
    judge_cache_saved_usd: float = 0.0  # what those samples cost when first graded
    judge_batched: int = 0  # judge calls answered through the Message Batches API (eval --judge-batch)
    regressed: list[str] = field(default_factory=list)  # cases that regressed against the baseline
    calibration: Calibration | None = None  # the judge's measured error the session ran with (else the caller's)
    # history's calibration is no longer the one the session ran with: the line that says so (run/gate.py)
    calibration_changed: str = ""
    judged_cases: int = 0  # cases whose verdict depends on an LLM judge
    # a session of several agents (`eval --agents`): each agent's numbers, the comparison and its gate, the
    # costs; `stats` are then the baseline's (run/versus.py)
    versus: SessionVersus | None = None

    @property
    def judge_note(self) -> str:
        """One line on the judge-corrected rates: what they rest on, or why the raw rates stand."""
        cal = self.calibration
        if cal is None or not self.judged_cases:
            return ""
        notes = "".join(f"\njudge: {note}" for note in cal.notes)
        if not cal.usable:  # a changed calibration's line says why the session's corrected nothing, and what now
            return (self.calibration_changed or f"judge: rates not corrected for the judge's error — {cal.reason}") + notes
        notes += f"\n{self.calibration_changed}" if self.calibration_changed else ""
        limited = [s for s in self.stats if s.corrected is not None and s.corrected.judge_limited]
        # several agents: the comparison is the gate, called on the judged counts (stats/head_to_head.py)
        decides = "the gate decides on them" if self.versus is None else ON_JUDGED_COUNTS
        line = (f"judge: ≈ rates corrected for the judge's measured error ({plural(cal.labels, 'label')}, "
                f"last {cal.calibrated_at}; docs/statistics.md); {decides}")
        for s in limited:
            more = s.corrected.labels_to_decide
            line += (f"\njudge-limited: {s.case_id} — its ≈ interval spans the threshold mainly through the judge's "
                     "error: " + ("more runs will not decide it, " + more_labels_words(more, "will") if more else
                                  "more labels narrow it most (more runs are needed too)"))
        for s in self.stats if self.versus is None else []:  # several agents: each one's under its table
            if s.corrected is not None and unbounded_words(s.corrected, s.threshold):
                line += f"\n{s.case_id}: {unbounded_words(s.corrected, s.threshold)}"
        return line + notes
    policy: GatePolicy = field(default_factory=GatePolicy)  # the gate the decisions were taken under

    @property
    def exit_code(self) -> int:
        """See scarbook.run.outcome.exit_code: the one place exit codes are decided."""
        versus = self.versus
        return exit_code(self.session, versus.all_stats() if versus else self.stats, regressed=bool(self.regressed),
                         infra_unresolved=self.infra_unresolved, agent_errors=len(self.agent_errors),
                         undecided=self.policy.undecided,
                         comparison=versus.comparison if versus else None)

    @property
    def causes(self) -> dict[CauseKind, int]:
        """Runs that did not pass, per cause (agent, infra, judge, case)."""
        return count_causes(self.runs)

    @property
    def retried(self) -> list[RunRecord]:
        """Runs retried after infra errors (scarbook.run.runner; not the Ray executor's lost workers)."""
        return [r for r in self.runs if len(r.attempts) > 1]

    @property
    def retried_on_agents_word(self) -> list[RunRecord]:
        """Runs retried on an infra cause only the agent vouched for (run/causes.retried_on_agents_word): the gate
        reads them as fails too (run/gate.py)."""
        return [r for r in self.runs if retried_on_agents_word(r)]

    @property
    def agent_errors(self) -> list[RunRecord]:
        """Runs that reached no verdict by the agent's own doing (a replay it diverged from): exit 3."""
        return [r for r in self.runs if agent_error(r)]

    @property
    def infra_unresolved(self) -> int:
        """Runs whose last attempt was still the machine's fault: their infra retries ran out."""
        return sum(1 for r in self.runs if is_infra(r))
    @property
    def point_false_red(self) -> float | None:
        """Point mode: the chance this gate goes red by chance at the observed rates."""
        if self.policy.mode != GateMode.POINT:
            return None
        return point_false_red_chance([CaseEvidence(s.case_id, s.passes, s.fails, s.errors, s.threshold, s.unjudged)
                                       for s in self.stats])

    @property
    def unjudged(self) -> int:
        return sum(s.unjudged for s in self.stats)


def build_report(session: SessionInfo, runs: list[RunRecord], cases: dict[str, Case], cfg: Config,
                 calibration: Calibration | None = None, policy: GatePolicy | None = None) -> SessionReport:
    """The session's numbers; with a calibration of the judge, a judged case's rate corrected for its measured
    error beside the raw one: the one the session recorded it ran with, else `calibration`
    (history.judge_truth.calibration_for; run/gate.replay_calibration). Its gate is `policy`, else the one
    the session ran under (run/gate.py: the live screen decides the same way)."""
    calibration, changed = replay_calibration(session, calibration)
    thresholds = {cid: effective_threshold(cases.get(cid), cfg.threshold) for cid in session.case_ids}
    policy = policy or session_policy(session, cfg)
    versus = compare_session(session, runs, cfg, thresholds, calibration, policy)
    baseline_only = [r for r in runs if versus is None or r.agent == versus.baseline]
    by_case: dict[str, list[RunRecord]] = {}
    for r in sorted(baseline_only, key=lambda r: r.k):
        by_case.setdefault(r.case_id, []).append(r)
    stats = [case_stats(cid, by_case.get(cid, []), thresholds[cid], cfg.green, calibration,
                        gate_alpha(session, policy)) for cid in session.case_ids]
    rep = SessionReport(session, stats, runs, calibration=calibration, policy=policy, versus=versus,
                        calibration_changed=changed)
    rep.judged_cases = sum(judged_split(by_case.get(s.case_id, [])) is not None for s in stats)
    rep.stats = decide_gate(session, stats, {cid: [r.status for r in rs] for cid, rs in by_case.items()}, policy,
                            runs=by_case)
    for r in runs:
        rep.agent_usage.add(r.agent_usage)
        rep.judge_usage.add(r.judge_usage)
        rep.judge_calls += r.judge_calls
        rep.judge_calls_saved += r.judge_calls_saved
        for check in r.checks:
            judge = check.judge
            if judge is not None and judge.cache is not None:
                rep.judge_cache_hits += judge.cache.hits
                rep.judge_cache_saved_usd += judge.cache.saved_usd
            if judge is not None and judge.batch is not None:
                rep.judge_batched += judge.batch.calls
    return rep


def strip_of(runs: list[RunRecord], width: int = 20) -> str:
    return "".join(STATUS_GLYPH[r.status] for r in sorted(runs, key=lambda r: r.k)[-width:])


def format_table(rep: SessionReport) -> str:
    """A plain-text table; rich colours are added by the CLI on a terminal. A session of several agents
    prints its comparison (reports/versus_table.py)."""
    if rep.versus is not None:
        by_agent_case: dict[str, list[RunRecord]] = {}
        for r in rep.runs:
            by_agent_case.setdefault(r.case_id, []).append(r)
        # labels that cannot correct the rates: why they stand raw (usable ones put ≈ rates in the table)
        raw = [rep.judge_note] if rep.calibration is not None and not rep.calibration.usable and rep.judge_note else \
            [rep.calibration_changed] if rep.calibration_changed else []
        return "\n".join([format_versus(rep.versus), *raw, *format_causes(rep, by_agent_case)])
    unj = rep.unjudged > 0  # the column shows only when some run went unjudged
    # "above (10-pt margin)": the gate column widens only for a --runs auto decision named with its margin
    gates = {s.case_id: gate_words(s, GATE_WORDS) for s in rep.stats}
    wide = max([10, *map(len, gates.values())])
    fixed = [s.corrected for s in rep.stats if s.corrected is not None]  # ≈ columns: corrected for the judge's error
    fix = bool(fixed)
    head = f"{'case':<24} {'pass':>4} {'fail':>4} {'err':>4} " + (f"{'unj':>4} " if unj else "") + \
           f"{'rate':>5}  {'95% CI':<11} " + (f"{'≈rate':>5}  {fixed[0].ci_label:<11} " if fix else "") + \
           f"{'pass@k':>6} {'pass^k':>6}  {'band':<6} {'gate':<{wide}} runs"
    lines = [head, "-" * len(head)]
    by_case: dict[str, list[RunRecord]] = {}
    for r in rep.runs:
        by_case.setdefault(r.case_id, []).append(r)
    for s in rep.stats:
        ci = "     –     " if s.rate is None else interval_beside(s.lo, s.hi, s.threshold, width=3) + "  "
        lines.append(f"{s.case_id[:24]:<24} {s.passes:>4} {s.fails:>4} {s.errors:>4} "
                     + (f"{s.unjudged:>4} " if unj else "") + f"{pct_beside(s.rate, s.threshold, width=4, none='  –  '):>5}  {ci:<11} "
                     + (_corrected_cells(s) if fix else "")
                     + f"{pct(s.pass_at_k, width=4, none='  –  '):>6} {pct(s.pass_hat_k, width=4, none='  –  '):>6}  {s.band:<6} {gates[s.case_id]:<{wide}} "
                     f"{strip_of(by_case.get(s.case_id, []))}")
    lines.append("")
    lines.append(f"{k_note({s.case_id: s.k for s in rep.stats if s.rate is not None})} for pass@k / pass^k (95% intervals in the JSON, "
                 f"JUnit and HTML reports); {rate_rule(rep)}; errors are counted apart."
                 + (" unj = unjudged runs (rule checks passed, judge skipped): no verdict, so no rate." if unj else ""))
    if rep.judge_note:
        lines.append(rep.judge_note)
    lines += format_causes(rep, by_case)
    return "\n".join(lines)


def rate_rule(rep: SessionReport) -> str:
    """What the rate column is: passes / (passes + fails), or --runs auto's adjusted rate of the runs its rule read."""
    if any(s.rate_note for s in rep.stats):
        return ("--runs auto: pass and fail are the runs its rule read (launch order, up to its stop), the rate "
                "its bias-adjusted rate from them and the interval exact after the stop")
    return "rate = passes / (passes + fails)"


def _corrected_cells(s: CaseStats) -> str:
    c = s.corrected
    if c is None:
        return f"{'–':>5}  {'':<11} "
    ci = interval_beside(c.lo, c.hi, s.threshold, width=3) + ("*" if c.judge_limited else " ")
    return f"{pct_beside(c.rate, s.threshold, width=4):>5}  {ci:<11} "


def causes_line(counts: dict[CauseKind, int]) -> str:
    """"3 agent, 1 infra" (the kinds that occur, in CAUSE_KINDS order)."""
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)


def format_causes(rep: SessionReport, by_case: dict[str, list[RunRecord]]) -> list[str]:
    """Whose fault the runs that did not pass were: the session's counts, then each case's."""
    counts = rep.causes
    if not any(counts.values()):
        return []
    out = [f"why runs did not pass: {causes_line(counts)} (agent: a check or the judge said FAIL · infra: the "
           "machine · judge: its error or split samples · case: a broken check or seed)"]
    for s in rep.stats:
        line = causes_line(count_causes(by_case.get(s.case_id, [])))
        if line:
            out.append(f"  {s.case_id}: {line}")
    return out


def format_retries(rep: SessionReport) -> list[str]:
    """What infra retries did, so a retry never hides a failure."""
    out = []
    retried = rep.retried
    if retried:
        again = sum(len(r.attempts) - 1 for r in retried)
        ok = sum(1 for r in retried if r.status == RunStatus.PASS)
        claimed = len(rep.retried_on_agents_word)
        word = f"{claimed} on the agent's own word, which the gate also reads as fails; " if claimed else ""
        out.append(f"{plural(len(retried), 'run')} retried after infra errors ({plural(again, 'retry', 'retries')}; "
                   f"{ok} then passed; {word}every attempt is kept with its cause in the JSON report and `scarbook show`)")
    if rep.infra_unresolved:
        out.append(f"infra retries ran out: {plural(rep.infra_unresolved, 'run')} {INFRA_UNRESOLVED}")
    return out


def agent_errors_line(runs: list[RunRecord]) -> str:
    """Why runs whose errors are the agent's own doing leave the session without a verdict."""
    rules = ", ".join(dict.fromkeys(r.cause.rule for r in runs if r.cause))
    if rules == "replay-diverged":
        what, rest = "did not replay what was recorded (the agent's requests differ)", "the runs that did"
    else:
        what, rest = f"ended in errors of the agent's own doing ({rules})", "the runs that did not"
    return f"{plural(len(runs), 'run')} {what}: the rate would hold only {rest}, so the session has no verdict (exit 3)"


def format_summary(rep: SessionReport) -> str:
    s = rep.session
    total = len(rep.runs)
    counts = count_statuses(rep.runs)
    below = [x.case_id for x in rep.stats if x.gate == Decision.BELOW]
    parts = [f"session {s.id}{f' [{s.label}]' if s.label else ''}: {s.state}; {plural(total, 'run')} — "
             f"{counts[RunStatus.PASS]} pass, {counts[RunStatus.FAIL]} fail, {counts[RunStatus.ERROR]} error"
             + (f", {counts[RunStatus.UNJUDGED]} unjudged" if counts[RunStatus.UNJUDGED] else "")]
    if s.partial:
        parts.append("partial: judge checks were skipped (--skip-judge)"
                     + (f"; {plural(counts[RunStatus.UNJUDGED], 'unjudged run')} "
                        + ("has no verdict and is not" if counts[RunStatus.UNJUDGED] == 1 else "have no verdict and are not")
                        + " in any rate" if counts[RunStatus.UNJUDGED] else ""))
    if rep.judge_calls or rep.judge_calls_saved or rep.judge_cache_hits:
        parts.append(f"judge: {plural(rep.judge_calls, 'call')}, {rep.judge_usage.total_tokens} tokens, "
                     f"${rep.judge_usage.cost_usd:.4f}; {plural(rep.judge_calls_saved, 'call')} saved by cheaper checks "
                     "failing first" + (f"; {rep.judge_batched} answered in a Message Batch, at the batch price"
                                        if rep.judge_batched else ""))
    if rep.judge_cache_hits:
        parts.append(f"judge calls: {rep.judge_calls + rep.judge_cache_hits}, from cache: {rep.judge_cache_hits}, "
                     f"saved ${rep.judge_cache_saved_usd:.4f}")
    if rep.agent_usage.total_tokens:
        parts.append(f"agent: {rep.agent_usage.total_tokens} tokens, ${rep.agent_usage.cost_usd:.4f}")
    if s.decisions:
        parts += adaptive_lines(rep)
    retried = [r for r in rep.runs if r.infra_retries]
    if retried:  # so a user can see whether infrastructure shaped the numbers
        lost = sum(1 for r in retried if r.status == RunStatus.ERROR)
        parts.append(f"infrastructure: {plural(len(retried), 'run')} retried after a lost "
                     f"Ray worker or node ({lost} lost again: error)")
    parts += format_retries(rep)
    if rep.agent_errors:
        parts.append(agent_errors_line(rep.agent_errors))
    if s.rerun_of:
        parts.append(rerun_line(s.rerun_of, s.state, len(rep.runs)))
    if s.note and s.state not in (SessionState.ABORTED, SessionState.CRASHED):
        parts.append(s.note)  # an abort's or a crash's note is said once, as the error it is (stderr)
    # the last word on a session that did not finish: why it has no verdict (the gate's lines read as if it had
    # one: "undecided cases pass with a warning" above an exit 3), and the resume that finishes it
    unfinished = [f"no verdict: {words}"] if (words := unfinished_words(s)) and s.state != SessionState.JUDGING else []
    if rep.versus is not None:  # the comparison gates (its lines are under the table)
        return "\n".join(parts + unfinished)
    parts += gate_lines(rep)
    if below:
        parts.append(f"below threshold: {', '.join(below)}")
    return "\n".join(parts + unfinished)


def adaptive_lines(rep: SessionReport) -> list[str]:
    """--runs auto's tally, and what its runs were spent on beside what fixed-N tests would have cost."""
    s = rep.session
    tally = {d: sum(1 for v in s.decisions.values() if v == d) for d in ("above", "below", "undecided")}
    total, read = len(rep.runs), sum(x.passes + x.fails for x in rep.stats if x.rate_note)
    unread, errors = sum(x.unread for x in rep.stats), sum(x.errors + x.unjudged for x in rep.stats)
    fixed = fixed_n_for(rep)
    line = (f"adaptive (--runs auto): {tally['above']} decided above threshold, {tally['below']} below, "
            f"{tally['undecided']} undecided at the cap; {plural(total, 'run')} spent — {read} read by the rule"
            + (f", {unread} it did not read (started before their case was decided and finished after it, or "
               "failed by the machine)" if unread else "") + (f", {plural(errors, 'error')}" if errors else ""))
    if fixed:
        per_case = set(_fixed_ns(rep))
        each = f"{per_case.pop()} a case" if len(per_case) == 1 else "per case at its threshold"
        at = fixed_n_margin_words(x.threshold for x in rep.stats)
        line += (f"; fixed-N tests right as often at {at} as this rule would take {fixed} ({each}; "
                 "its undecided answers count as wrong): the rule spends fewer runs than that on clear cases and more "
                 "on cases near their threshold"
                 + (", and runs already started when a case is decided still finish" if unread else ""))
    return [line, "adaptive rates are bias-adjusted for stopping early, from the runs the rule read in launch order "
                  "(the pass and fail columns); their intervals are exact after the stop"]


def gate_lines(rep: SessionReport) -> list[str]:
    """What the gate decided beyond ok/BELOW: each undecided case and what would decide it, each
    case without a verdict and why, and (point mode) the chance of a false red."""
    p = rep.policy
    if rep.session.state == SessionState.JUDGING:  # no verdict yet: nothing the gate says would hold
        return ["gate: no verdict yet — the session is judging (its judge batch is not collected): exit 3"]
    lines = []
    if p.mode == GateMode.POINT:
        lines.append(f"gate: point mode (red when a rate is below its threshold); at the observed rates the chance "
                     f"of a red by chance is {100 * (rep.point_false_red or 0):.0f}% — `gate: {{mode: evidence}}` "
                     f"keeps it under {p.alpha:.0%}")
    for s in rep.stats:
        if s.gate == Decision.UNDECIDED:
            lines.append(f"{s.case_id}: undecided at {s.passes}/{s.judged} — {s.gate_note}"
                         + ("; counted as a failure (gate undecided: fail)" if p.undecided == Undecided.FAIL else ""))
        elif s.gate == Decision.NO_VERDICT and s.gate_note and not s.unjudged:
            lines.append(f"{s.case_id}: no verdict — {s.gate_note}")
        if margin_line(s):
            lines.append(margin_line(s))
        if s.unread:
            lines.append(f"{s.case_id}: {plural(s.unread, 'run')} with a verdict not read by --runs auto's rule "
                         "(finished after it decided, or failed by the machine): not in its counts or rate")
        if s.error_span is not None:
            lo, hi = s.error_span
            lines.append(f"{s.case_id}: its {plural(s.errors, 'error')} could span {interval_beside(lo, hi, s.threshold)} "
                         "(had each been a fail, or each a pass)")
    if any(s.gate == Decision.UNDECIDED for s in rep.stats) and p.mode == GateMode.EVIDENCE:
        lines.append(f"gate: evidence mode — a case is red only when its runs show it is below its threshold "
                     f"(family-wise false red at most {p.alpha:.0%}, Holm); undecided cases "
                     + ("fail the gate (exit 3)" if p.undecided == Undecided.FAIL else "pass with a warning"))
    return lines


def _fixed_ns(rep: SessionReport) -> list[int]:
    """Per case, the smallest fixed N whose exact test is right at threshold ± delta as often as the
    truncated rule ([] when a case's threshold leaves the rule no room)."""
    try:
        return [matched_fixed_n(SequentialRule(s.threshold, max_runs=rep.session.runs_per_case)) for s in rep.stats]
    except ValueError:
        return []


def fixed_n_for(rep: SessionReport) -> int | None:
    """Runs a fixed-N session needs for the guarantee the sequential rule actually gives."""
    return sum(_fixed_ns(rep)) or None


def report_to_dict(rep: SessionReport) -> dict[str, Any]:
    return {
        "session": rep.session.to_dict(),
        # where the runs executed: {"type": "local"} or {"type": "ray", "address": …}; null for a
        # session recorded before scarbook kept it. Each run says its Ray node in runs[].node.
        "executor": rep.session.executor.to_dict() if rep.session.executor else None,
        # what confined the agent: {"ran": "sandbox" | "none", "asked": …, "network" | "why": …}; null before 25.1
        "isolation": rep.session.isolation.to_dict() if rep.session.isolation else None,
        "exit_code": rep.exit_code,
        "gate": rep.policy.to_dict() | ({"point_false_red": rep.point_false_red} if rep.policy.mode == GateMode.POINT else {}),
        "cases": [case_dict(s) for s in rep.stats],
        "regressed": list(rep.regressed),  # cases that regressed against --against's baseline
        "judge_calibration": rep.calibration.to_dict() if rep.calibration is not None else None,
        # history's calibration changed since the session ran (its is the one above): the line that says so
        "judge_calibration_changed": rep.calibration_changed or None,
        "usage": {"agent": rep.agent_usage.to_dict(), "judge": rep.judge_usage.to_dict(),
                  "judge_calls": rep.judge_calls, "judge_calls_saved": rep.judge_calls_saved,
                  "judge_from_cache": rep.judge_cache_hits, "judge_cache_saved_usd": rep.judge_cache_saved_usd},
        "causes": rep.causes,  # runs that did not pass, per cause
        "retried_after_infra": len(rep.retried),
        # of those, retried on the agent's own word (a line it printed, an exit 127): the gate reads them as fails too
        "retried_on_agents_word": len(rep.retried_on_agents_word),
        "infra_unresolved": rep.infra_unresolved,  # runs whose infra retries ran out (exit 3)
        "runs": [run_json(r) for r in rep.runs],
    } | ({"agents": versus_to_dict(rep.versus)} if rep.versus is not None else {})


def run_json(r: RunRecord) -> dict[str, Any]:
    """A run as the JSON report shows it: its record, with `attempts` always listing at least this one."""
    d = r.to_dict()
    if not d["attempts"]:  # ran once: its one attempt is the run itself (its paths and times are above)
        d["attempts"] = [{"attempt": 1, "status": r.status, "cause": d["cause"]}]
    return d


def report_run_from_dict(d: dict[str, Any]) -> RunRecord:
    """A run of a JSON report (what run_json wrote) as its record: a run that ran once lists itself as
    its one attempt there, and has none in history (a retried run has two or more)."""
    return RunRecord.from_dict(d | {"attempts": []} if len(d.get("attempts") or []) == 1 else d)


def case_dict(s: CaseStats) -> dict[str, Any]:
    """A case in the JSON report: no interval (nor pass@k) without a rate; `margin`: the margin a --runs auto
    decision was taken with (run/gate.DecisionMargin), null for any other case."""
    margin = decision_margin(s)
    d = s.to_dict() | {"meets_threshold": s.meets_threshold, "decision": s.gate,
                       "margin": margin.to_dict() if margin is not None else None}
    if s.corrected is not None and d.get("corrected") is not None:  # why a 0–100% ≈ interval is the whole range
        d["corrected"]["ci_note"] = unbounded_words(s.corrected, s.threshold) or None
    if s.rate is None:
        d.update(lo=None, hi=None, pass_at_k_ci=None, pass_hat_k_ci=None)
    return d


def write_json(rep: SessionReport, path: Path) -> None:
    write_named_file(path, json.dumps(report_to_dict(rep), indent=2))
