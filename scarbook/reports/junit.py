"""JUnit XML that carries the statistics: one testcase per case, its numbers as properties.

CI dashboards (GitHub test reporters, GitLab, Jenkins) show a testcase's failure message and text;
scarbook puts the rate, its interval, pass^k and the threshold there, and each failing run's
reason in the failure text. Every text an agent could have written is cleaned of control
characters and terminal escapes first (scarbook.text), so the file is well-formed XML whatever
the agent printed; ElementTree escapes the rest (`<`, `&`, `]]>`).
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from scarbook.fs.files import write_named_file
from scarbook.history.baseline import BaselineComparison
from scarbook.models import RunRecord, RunStatus
from scarbook.models.words import Decision, Undecided
from scarbook.reports.errored import infra_error, run_line, unfinished_error
from scarbook.reports.table import SessionReport
from scarbook.reports.versus_files import junit_testcases
from scarbook.reports.versus_table import headline
from scarbook.run.causes import count_causes
from scarbook.run.gate import gate_words, margin_line, margin_words, unbounded_note, unbounded_words
from scarbook.stats.compare import CaseComparison
from scarbook.stats.rates import CaseStats, count_text
from scarbook.text import interval_beside, pct, pct_beside, plural, report_text, threshold_pct


def _num(x: float | None, digits: int = 4) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def case_properties(s: CaseStats, cmp: CaseComparison | None) -> list[tuple[str, str]]:
    unjudged = getattr(s, "unjudged", 0)
    props = [("passes", str(s.passes)), ("fails", str(s.fails)), ("errors", str(s.errors))]
    if unjudged:
        props.append(("unjudged", str(unjudged)))
    props += [("rate", _num(s.rate)),
              ("interval", "" if s.rate is None else f"[{_num(s.lo)}, {_num(s.hi)}]"),
              ("interval_lo", "" if s.rate is None else _num(s.lo)), ("interval_hi", "" if s.rate is None else _num(s.hi)),
              ("pass_at_k", _num(s.pass_at_k)), ("pass_hat_k", _num(s.pass_hat_k)), ("k", str(s.k)),
              ("pass_at_k_interval", "" if s.pass_at_k_ci is None else f"[{_num(s.pass_at_k_ci[0])}, {_num(s.pass_at_k_ci[1])}]"),
              ("pass_hat_k_interval", "" if s.pass_hat_k_ci is None else
               f"[{_num(s.pass_hat_k_ci[0])}, {_num(s.pass_hat_k_ci[1])}]"),
              ("threshold", _num(s.threshold)), ("band", s.band),
              ("gate", gate_words(s, {Decision.ABOVE: "ok"})), ("decision", s.gate)]
    if s.gate_note:
        props.append(("gate_note", s.gate_note))
    if margin_words(s):  # --runs auto decided within its margin, its interval reaching past the threshold
        props.append(("margin_note", margin_words(s)))
    c = getattr(s, "corrected", None)
    if c is not None:  # the rate corrected for the judge's measured error (issue 23)
        props += [("corrected_rate", _num(c.rate)), ("corrected_interval", f"[{_num(c.lo)}, {_num(c.hi)}]"),
                  ("corrected_q0", _num(c.q0)), ("corrected_q1", _num(c.q1)), ("corrected_labels", str(c.labels)),
                  ("corrected_calibrated_at", c.calibrated_at), ("judge_limited", str(c.judge_limited).lower())]
        if unbounded_words(c, s.threshold):  # its ≈ interval is 0–100%: why (the JSON's corrected.ci_note)
            props.append(("corrected_ci_note", unbounded_words(c, s.threshold)))
    if cmp is not None:
        props += [("baseline_rate", _num(cmp.rate_before)), ("baseline_diff", _num(cmp.diff)),
                  ("baseline_diff_interval", "" if cmp.diff is None else f"[{_num(cmp.lo)}, {_num(cmp.hi)}]"),
                  ("baseline_p", _num(cmp.p_value)), ("baseline_p_holm", _num(cmp.p_holm)),
                  ("baseline_verdict", cmp.verdict)]
        if cmp.runs_needed is not None:
            props.append(("baseline_runs_needed_per_side", str(cmp.runs_needed)))
    return props


def _summary(s: CaseStats) -> str:
    """The case's line: without a rate no fraction either ("pass rate – (1 fail, 9 unjudged)", stats.rates)."""
    ci = "–" if s.rate is None else interval_beside(s.lo, s.hi, s.threshold, sep="-")
    return (f"pass rate {pct_beside(s.rate, s.threshold)} ({count_text(s.passes, s.fails, s.unjudged)}), "
            f"95% CI {ci}, pass^{s.k} {pct(s.pass_hat_k)}, {plural(s.errors, 'error')}, threshold {threshold_pct(s.threshold)}")


def build_junit(rep: SessionReport, against: BaselineComparison | None = None) -> ET.Element:
    """One testcase per case: a failure when decided below (or regressed), an error when it has no
    verdict (or is undecided under `undecided: fail`, or its session did not finish)."""
    by_case: dict[str, list[RunRecord]] = {}
    for r in sorted(rep.runs, key=lambda r: (r.case_id, r.k)):
        by_case.setdefault(r.case_id, []).append(r)
    compared = {c.case_id: c for c in against.comparison.cases} if against else {}
    regressed = set(against.regressed) if against else set()
    failed = [s for s in rep.stats if s.gate == Decision.BELOW or s.case_id in regressed]
    errored = [s for s in rep.stats if s not in failed and (
        s.gate == Decision.NO_VERDICT or (s.gate == Decision.UNDECIDED and rep.policy.undecided == Undecided.FAIL))]
    total_time = sum(r.duration_s for r in rep.runs)
    session = rep.session
    suite = ET.Element("testsuite", name=report_text(f"scarbook {session.label or session.id}", one_line=True),
                       tests=str(len(rep.stats)), failures=str(len(failed)), errors=str(len(errored)),
                       skipped="0", time=f"{total_time:.3f}", timestamp=session.started_at)
    props = ET.SubElement(suite, "properties")
    suite_props = [("session", session.id), ("label", session.label), ("state", str(session.state)),
                   ("agent", session.agent), ("judge_model", session.judge_model),
                   ("git_revision", session.git_revision or ""), ("partial", str(session.partial).lower()),
                   ("exit_code", str(rep.exit_code))]
    suite_props += [(f"causes_{kind}", str(n)) for kind, n in rep.causes.items()]  # runs that did not pass
    suite_props += [("retried_after_infra", str(len(rep.retried))),
                    ("retried_on_agents_word", str(len(rep.retried_on_agents_word))),
                    ("infra_unresolved", str(rep.infra_unresolved))]
    if against:
        suite_props.append(("baseline_session", against.baseline.session_id))
    if rep.versus is not None:  # a session of several agents: its testcases are the comparison's
        suite_props += [("agents", ",".join(rep.versus.names)), ("baseline_agent", rep.versus.baseline),
                        ("margin", f"{rep.versus.comparison.margin:g}")]
        suite_props += [(f"headline_{n}", headline(rep.versus, n)) for n in rep.versus.candidates]
    for name, value in suite_props:
        ET.SubElement(props, "property", name=name, value=report_text(value, one_line=True))
    if rep.versus is not None:
        failures, errors = junit_testcases(suite, rep.versus, rep.runs, rep.policy.undecided == Undecided.FAIL,
                                           session)
        suite.set("tests", str(len(rep.versus.comparison.rows) + len(rep.versus.comparison.suites)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        return suite
    run_errors = 0
    for s in rep.stats:
        runs = by_case.get(s.case_id, [])
        tc = ET.SubElement(suite, "testcase", classname="scarbook", name=s.case_id,
                           time=f"{sum(r.duration_s for r in runs):.3f}")
        tprops = ET.SubElement(tc, "properties")
        for name, value in case_properties(s, compared.get(s.case_id)) + [
                (f"causes_{kind}", str(n)) for kind, n in count_causes(runs).items()]:
            ET.SubElement(tprops, "property", name=name, value=value)
        summary = _summary(s)
        margin = [margin_line(s)] if margin_line(s) else []
        unbounded = [f"judge-corrected: {unbounded_note(s)}"] if unbounded_note(s) else []  # why its ≈ CI is 0–100%
        not_passed = [run_line(r) for r in runs if r.status != RunStatus.PASS]
        if s in failed:
            why = []
            if s.gate == Decision.BELOW:  # "below threshold (10-pt margin): …" for a --runs auto decision within it
                why.append(f"{gate_words(s, {Decision.BELOW: 'below threshold'})}: {summary}")
            if s.case_id in regressed:
                c = compared[s.case_id]
                why.append(f"regressed against the baseline: {pct(c.rate_before)} -> {pct(c.rate_after)} "
                           f"({pct(c.diff, signed=True, unit='')} pts, 95% CI [{pct(c.lo, signed=True, unit='')}, {pct(c.hi, signed=True, unit='')}], "
                           f"Holm p {_num(c.p_holm, 3)})")
            failure = ET.SubElement(tc, "failure", message="; ".join(why),
                                    type="regressed" if s.gate != Decision.BELOW else "below-threshold")
            failure.text = "\n".join([summary, *margin, *unbounded, *not_passed])
        elif s in errored:
            word = "undecided" if s.gate == Decision.UNDECIDED else "no verdict"
            error = ET.SubElement(tc, "error", message=f"{word}: {summary}" + (f" — {s.gate_note}" if s.gate_note else ""),
                                  type=word.replace(" ", "-"))
            error.text = "\n".join([summary, *unbounded, *not_passed])
        # decided, but the machine left some of its runs without a verdict, or its session did not finish (exit 3)
        elif infra_error(tc, runs) or unfinished_error(tc, session):
            run_errors += 1
        ET.SubElement(tc, "system-out").text = "\n".join([summary, *margin, *unbounded, *(run_line(r) for r in runs)])
    suite.set("errors", str(len(errored) + run_errors))
    return suite


def write_junit(rep: SessionReport, path: Path, against: BaselineComparison | None = None) -> None:
    suite = build_junit(rep, against)
    ET.indent(suite)
    write_named_file(path, ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n")
