"""A session of several agents in the report files (issue 36): JUnit, the GitHub step summary and its
annotations, and the HTML report's side-by-side section. The numbers are run/versus.py's, the words
reports/versus_table.py's; each file's own escaping applies (agent-written text never reaches these
lines: names are scarbook.yaml's, checked at load)."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable
from xml.etree import ElementTree as ET

from scarbook.models import MarginCall, RunRecord, RunStatus, SessionInfo, Versus
from scarbook.reports.errored import errored_warnings, infra_error, run_line, unfinished_error
from scarbook.reports.versus_table import (
    CALL_WORDS,
    MARGIN_WORDS,
    headline,
    interval_pts,
    no_verdict_notes,
    points,
    side,
    unbounded_notes,
)
from scarbook.run.causes import is_infra
from scarbook.run.gate import unbounded_note, unbounded_words
from scarbook.run.versus import SessionVersus
from scarbook.stats.head_to_head import VersusRow
from scarbook.stats.rates import CaseStats
from scarbook.text import plural


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.4f}"


def row_properties(row: VersusRow) -> list[tuple[str, str]]:
    """A candidate's comparison of one case (or the suite) as JUnit properties, named for the candidate."""
    c = row.candidate
    return [(f"{c}_diff", _num(row.diff)), (f"{c}_diff_interval", "" if row.lo is None else f"[{_num(row.lo)}, {_num(row.hi)}]"),
            (f"{c}_p_fisher", _num(row.p_diff)), (f"{c}_p_holm", _num(row.p_diff_holm)),
            (f"{c}_decision", str(row.call)), (f"{c}_gate", str(row.margin_call))]


def agent_properties(v: SessionVersus, case_id: str) -> list[tuple[str, str]]:
    """Each agent's numbers of one case: `<agent>_rate`, `<agent>_interval`, its counts."""
    out: list[tuple[str, str]] = []
    for name in v.names:
        s = v.stat(name, case_id)
        if s is None:
            continue
        out += [(f"{name}_rate", _num(s.rate)), (f"{name}_interval", "" if s.rate is None else f"[{_num(s.lo)}, {_num(s.hi)}]"),
                (f"{name}_passes", str(s.passes)), (f"{name}_fails", str(s.fails)), (f"{name}_errors", str(s.errors))]
        if s.corrected is not None:
            out.append((f"{name}_corrected_rate", _num(s.corrected.rate)))
        if s.corrected is not None and unbounded_words(s.corrected, s.threshold):  # why its ≈ CI is 0–100% (ci_note)
            out.append((f"{name}_corrected_ci_note", unbounded_words(s.corrected, s.threshold)))
    return out


def _line(v: SessionVersus, row: VersusRow) -> str:
    where = row.case_id or "the suite"
    return (f"{row.candidate} against {v.baseline} on {where}: {interval_pts(row)} pts — {CALL_WORDS[row.call]}, "
            f"gate {MARGIN_WORDS[row.margin_call]}" + (f" ({row.why})" if row.why else ""))


def junit_testcases(suite: ET.Element, v: SessionVersus, runs: Iterable[RunRecord], undecided_fails: bool,
                    session: SessionInfo) -> tuple[int, int]:
    """One testcase per case and candidate, then one per candidate's suite row: a failure when shown worse
    than the baseline by more than the margin (inferior), an error when it has no verdict (or is undecided
    under `undecided: fail`), or when the machine left some of the two agents' runs of the case without a
    verdict (`type="infra"`, as one agent's testcase: reports/errored.py), or when the session did not finish
    (`type="incomplete"`). Returns (failures, errors)."""
    failures = errors = 0
    by_case: dict[str, list[RunRecord]] = {}
    for r in sorted(runs, key=lambda r: r.k):
        by_case.setdefault(r.case_id, []).append(r)
    for row in [*v.comparison.rows, *v.comparison.suites]:
        mine = [r for r in by_case.get(row.case_id, []) if r.agent in (v.baseline, row.candidate)]
        name = f"{row.case_id or 'suite'} [{row.candidate} vs {v.baseline}]"
        tc = ET.SubElement(suite, "testcase", classname="scarbook.agents", name=name, time="0.000")
        props = ET.SubElement(tc, "properties")
        for key, value in (agent_properties(v, row.case_id) if row.case_id else []) + row_properties(row):
            ET.SubElement(props, "property", name=key, value=value)
        text = _line(v, row)
        if row.margin_call == MarginCall.INFERIOR:
            failures += 1
            ET.SubElement(tc, "failure", message=text, type="inferior").text = text
        elif row.margin_call == MarginCall.NO_VERDICT and not row.is_suite or (
                undecided_fails and row.margin_call == MarginCall.UNDECIDED):
            errors += 1
            word = "no-verdict" if row.margin_call == MarginCall.NO_VERDICT else "undecided"
            ET.SubElement(tc, "error", message=text, type=word).text = "\n".join(
                [text, *(run_line(r) for r in mine if r.status != RunStatus.PASS)])
        elif infra_error(tc, mine) or unfinished_error(tc, session):
            errors += 1
        notes = [f"{name}: {unbounded_note(s)}" for name in v.names
                 if row.case_id and (s := v.stat(name, row.case_id)) is not None and unbounded_note(s)]
        ET.SubElement(tc, "system-out").text = "\n".join([text, *notes])
    return failures, errors


def markdown_section(v: SessionVersus) -> list[str]:
    """The step summary's comparison: a row per case and candidate, the suite rows, the headlines."""
    c = v.comparison
    out = [f"### Agents: {', '.join(f'`{n}`' for n in v.names)} (baseline `{v.baseline}`, margin ±{points(c.margin, False)} pts)", "",
           "| case | candidate | baseline rate | candidate rate | diff [95% CI] pts | decision | gate |",
           "|---|---|---|---|---|---|---|"]
    for row in c.rows:
        decision = CALL_WORDS[row.call]
        out.append(f"| `{row.case_id}` | `{row.candidate}` | {side(v.stat(v.baseline, row.case_id)).strip()} | "
                   f"{side(v.stat(row.candidate, row.case_id)).strip()} | {interval_pts(row)} | "
                   f"{f'**{decision}**' if row.call in (Versus.WORSE, Versus.BETTER) else decision} | "
                   f"{f'**{MARGIN_WORDS[row.margin_call]}**' if row.margin_call == MarginCall.INFERIOR else MARGIN_WORDS[row.margin_call]} |")
    for row in c.suites:
        out.append(f"| suite ({plural(row.cases, 'case')}) | `{row.candidate}` | | | {interval_pts(row)} | {CALL_WORDS[row.call]} | "
                   f"{MARGIN_WORDS[row.margin_call]} |")
    out += ["", *(f"- {html.escape(headline(v, n))}" for n in v.candidates)]
    notes = unbounded_notes(v) + no_verdict_notes(v)
    out += ["", "  \n".join(html.escape(line, quote=False) for line in notes)] if notes else []
    return out


def versus_annotations(v: SessionVersus, runs: Iterable[RunRecord]) -> list[tuple[str, str, list[str], list[str]]]:
    """Per case: (case id, title, errors, warnings) for the GitHub annotations of a session of several agents."""
    out = []
    infra = Counter((r.case_id, r.agent) for r in runs if is_infra(r))
    for cid in dict.fromkeys(r.case_id for r in v.comparison.rows):
        errors, warnings = [], []
        for row in (r for r in v.comparison.rows if r.case_id == cid):
            if row.margin_call == MarginCall.INFERIOR:
                errors.append(_line(v, row))
            elif row.margin_call == MarginCall.NO_VERDICT:
                warnings.append(_line(v, row))
        for name in v.names:  # each agent's errored runs, as one agent's case says them (reports/errored.py)
            s = v.stat(name, cid)
            warnings += errored_warnings(s.errors, infra.get((cid, name), 0), f"{name}: ") if s is not None else []
        if errors or warnings:
            out.append((cid, f"scarbook: {cid} " + ("candidate worse than the baseline" if errors else "needs attention"),
                        errors, warnings))
    return out


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _bar(row: VersusRow, margin: float) -> str:
    """The difference (dot) with its 95% interval (bar) on a -100..+100 point axis, the ±margin band shaded."""
    w, pad = 240, 6
    x = lambda v: pad + (v + 1) / 2 * (w - 2 * pad)  # noqa: E731
    parts = [f'<svg width="{w}" height="22" role="img" aria-label="difference against the baseline">',
             f'<rect x="{x(-margin):.1f}" y="3" width="{x(margin) - x(-margin):.1f}" height="16" fill="#eee"/>',
             f'<line x1="{x(-1)}" y1="11" x2="{x(1)}" y2="11" stroke="#ccc"/>',
             f'<line x1="{x(0):.1f}" y1="3" x2="{x(0):.1f}" y2="19" stroke="#555" stroke-dasharray="2,2"/>']
    if row.diff is not None and row.lo is not None and row.hi is not None:
        color = {Versus.WORSE: "#c62828", Versus.BETTER: "#2e7d32"}.get(row.call, "#555")
        parts.append(f'<line x1="{x(row.lo):.1f}" y1="11" x2="{x(row.hi):.1f}" y2="11" stroke="{color}" stroke-width="5"/>')
        parts.append(f'<circle cx="{x(row.diff):.1f}" cy="11" r="4" fill="#fff" stroke="{color}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def html_section(v: SessionVersus, interval_svg) -> list[str]:
    """The HTML report's agents section: per case, each agent's distribution side by side, then each
    candidate's difference bar against the margin and its decision. `interval_svg(stats)` is the report's
    own drawing of a rate's interval against its threshold."""
    c = v.comparison
    out = [f'<h2 id="agents">Agents: {_esc(", ".join(v.names))} (baseline {_esc(v.baseline)})</h2>',
           '<table id="versus"><tr><th>case</th>' + "".join(f"<th>{_esc(n)}</th>" for n in v.names)
           + "".join(f"<th>{_esc(n)} − {_esc(v.baseline)}</th>" for n in v.candidates) + "</tr>"]
    for cid in dict.fromkeys(r.case_id for r in c.rows):
        cells = []
        for name in v.names:
            s: CaseStats | None = v.stat(name, cid)
            cells.append(f"<td>{_esc(side(s).strip())}<br>{interval_svg(s) if s is not None else ''}</td>")
        for name in v.candidates:
            row = c.row(cid, name)
            cells.append("<td>–</td>" if row is None else
                         f"<td>{_esc(interval_pts(row))} pts · <b>{_esc(CALL_WORDS[row.call])}</b>, gate "
                         f"{_esc(MARGIN_WORDS[row.margin_call])}<br>{_bar(row, c.margin)}</td>")
        out.append(f"<tr><td>{_esc(cid)}</td>{''.join(cells)}</tr>")
    suite_cells = "".join("<td></td>" for _ in v.names) + "".join(
        f"<td>{_esc(interval_pts(r))} pts · <b>{_esc(CALL_WORDS[r.call])}</b><br>{_bar(r, c.margin)}</td>"
        for r in c.suites)
    out += [f"<tr><td>suite</td>{suite_cells}</tr>", "</table>",
            f'<p class="muted">Each agent: its rate and 95% interval against the threshold. Each candidate: the '
            f"difference from the baseline (dot) with its 95% interval (bar), the shaded band ±{points(c.margin, False)} "
            "points (the gate's margin).</p>",
            "<ul>" + "".join(f"<li>{_esc(headline(v, n))}</li>" for n in v.candidates) + "</ul>"]
    out += [f'<p class="muted">{_esc(line)}</p>' for line in unbounded_notes(v) + no_verdict_notes(v)]
    return out
