"""`scarbook report --html`: one self-contained HTML file a person can open from a CI artifact.

No network: no script, no stylesheet link, no font or image URL — styles are inline in one
<style> element and the charts are inline SVG. Everything an agent (or a judge) wrote is cleaned of
control characters and HTML-escaped, so a hostile output cannot add markup or scripts.

Contents: the session, the case table, each case's distribution (runs strip and the 95% interval
against the threshold), the comparison with the baseline when there is one, and every run that did
not pass with its checks, judge reasons, workspace diff and output excerpt.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from scarbook.history.baseline import BaselineComparison
from scarbook.models import STATUS_GLYPH, JudgeDetail, RunRecord, RunStatus
from scarbook.models.run import KEPT_NAMES
from scarbook.models.words import GateMode
from scarbook.reports.table import GATE_WORDS, SessionReport, causes_line, format_retries
from scarbook.reports.versus_files import html_section
from scarbook.run.causes import count_causes
from scarbook.run.gate import gate_words, margin_words
from scarbook.stats.compare import comparison_notes, format_p, format_side
from scarbook.stats.rates import CaseStats
from scarbook.text import interval_beside, k_note, names_left_out, pct, pct_beside, plural, report_text, threshold_pct

BAND_COLORS = {"green": "#2e7d32", "yellow": "#b58900", "red": "#c62828", "none": "#757575"}
CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1b1b1b;max-width:1200px}
h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.strip{font-family:monospace;letter-spacing:1px;word-break:break-all}
.pass{color:#2e7d32}.fail{color:#c62828}.error{color:#ef6c00}.unjudged{color:#757575}
.regressed{color:#c62828;font-weight:600}.improved{color:#2e7d32;font-weight:600}
details{margin:4px 0 4px 12px}summary{cursor:pointer}pre{background:#f7f7f7;padding:8px;white-space:pre-wrap;
word-break:break-all;max-height:320px;overflow:auto}.muted{color:#666}
"""


def esc(text: Any) -> str:
    """Agent- or user-written text as inert HTML (control characters escaped as \\xNN)."""
    return html.escape(report_text(str(text)), quote=True)


def _by_case(runs: Iterable[RunRecord]) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = {}
    for r in sorted(runs, key=lambda r: (r.case_id, r.k)):
        out.setdefault(r.case_id, []).append(r)
    return out


def _span(ci: tuple[float, float] | None) -> str:
    """' [19–80%]' for an interval, nothing without one (no interval without a rate)."""
    return "" if ci is None else f' <span class="muted">[{100 * ci[0]:.0f}–{100 * ci[1]:.0f}%]</span>'


def _interval_svg(s: CaseStats) -> str:
    """The 95% interval (bar), the rate (dot) and the threshold (tick) on a 0–100% axis."""
    w, pad = 240, 6
    x = lambda v: pad + v * (w - 2 * pad)  # noqa: E731
    parts = [f'<svg width="{w}" height="22" role="img" aria-label="95% interval of the pass rate">',
             f'<line x1="{x(0)}" y1="11" x2="{x(1)}" y2="11" stroke="#ccc"/>',
             f'<line x1="{x(s.threshold):.1f}" y1="3" x2="{x(s.threshold):.1f}" y2="19" stroke="#555" '
             'stroke-dasharray="2,2"/>']
    if s.rate is not None:
        color = BAND_COLORS.get(s.band, "#555")
        parts.append(f'<line x1="{x(s.lo):.1f}" y1="11" x2="{x(s.hi):.1f}" y2="11" stroke="{color}" stroke-width="5"/>')
        parts.append(f'<circle cx="{x(s.rate):.1f}" cy="11" r="4" fill="#fff" stroke="{color}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def _strip(runs: list[RunRecord]) -> str:
    return "".join(f'<span class="{r.status}" title="run {r.k}: {r.status}">{STATUS_GLYPH.get(r.status, "?")}</span>'
                   for r in runs)


def _header(rep: SessionReport) -> list[str]:
    s = rep.session
    counts = {st: sum(1 for r in rep.runs if r.status == st) for st in RunStatus}
    rows = [("session", s.id), ("label", s.label or "–"), ("state", str(s.state)),
            ("started", s.started_at), ("finished", s.finished_at or "–"), ("agent", s.agent or "–"),
            ("judge model", s.judge_model or "–"), ("git revision", s.git_revision or "–"),
            ("runs", f"{len(rep.runs)}: {counts[RunStatus.PASS]} pass, {counts[RunStatus.FAIL]} fail, {counts[RunStatus.ERROR]} error"
                     + (f", {counts[RunStatus.UNJUDGED]} unjudged" if counts[RunStatus.UNJUDGED] else "")),
            ("exit code", f"{rep.exit_code} (0 green · 1 below threshold or regressed{' or a candidate worse' if rep.versus else ''} · 2 usage/config · 3 no verdict"
                           " or undecided under undecided: fail)"),
            ("gate", f"{rep.policy.mode} mode, alpha {rep.policy.alpha:g}, undecided: {rep.policy.undecided}"
                     + (f"; chance of a red by chance at the observed rates {100 * (rep.point_false_red or 0):.0f}%"
                        if rep.policy.mode == GateMode.POINT else ""))]
    if s.partial:
        rows.append(("partial", "judge checks were skipped (--skip-judge): not a complete verdict"))
    if any(rep.causes.values()):
        rows.append(("why runs did not pass", causes_line(rep.causes)))
    rows += [("infra retries", line) for line in format_retries(rep)]
    if rep.agent_usage.total_tokens or rep.judge_usage.total_tokens:
        rows.append(("spend", f"agent {rep.agent_usage.total_tokens:,} tokens ${rep.agent_usage.cost_usd:.4f} · "
                              f"judge {rep.judge_usage.total_tokens:,} tokens ${rep.judge_usage.cost_usd:.4f}"))
    if s.note:
        rows.append(("note", s.note))
    return ["<table>", *(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows), "</table>"]


def _case_table(rep: SessionReport, by_case: dict[str, list[RunRecord]], regressed: set[str]) -> list[str]:
    fix = any(s.corrected is not None for s in rep.stats)  # the ≈ column: rates corrected for the judge's error
    out = ['<table id="cases"><tr><th>case</th><th>pass</th><th>fail</th><th>err</th><th>unjudged</th><th>rate</th>'
           "<th>95% CI</th>" + (f"<th title=\"corrected for the judge's measured error\">≈rate ({_corrected_level(rep)})</th>" if fix else "")
           + "<th>pass@k</th><th>pass^k</th><th>band</th><th>threshold</th><th>gate</th>"
           "<th>distribution (interval · threshold)</th><th>runs</th><th>why not passed</th></tr>"]
    for s in rep.stats:
        gate = esc(gate_words(s, GATE_WORDS))  # "above (10-pt margin)" for a --runs auto decision within its margin
        if margin_words(s):  # --runs auto decided within its margin, its interval reaching past the threshold
            gate += f'<br><span class="muted">{esc(margin_words(s))}</span>'
        if s.gate_note:
            gate += f'<br><span class="muted">{esc(s.gate_note)}</span>'
        if s.case_id in regressed:
            gate += ' · <span class="regressed">regressed</span>'
        ci = "–" if s.rate is None else interval_beside(s.lo, s.hi, s.threshold)
        out.append(
            f'<tr id="case-{esc(s.case_id)}"><td>{esc(s.case_id)}</td><td class="n">{s.passes}</td>'
            f'<td class="n">{s.fails}</td><td class="n">{s.errors}</td><td class="n">{getattr(s, "unjudged", 0)}</td>'
            f'<td class="n">{pct_beside(s.rate, s.threshold)}</td><td>{ci}</td>' + (f"<td>{_corrected_cell(s)}</td>" if fix else "")
            + f'<td class="n">{pct(s.pass_at_k)}{_span(s.pass_at_k_ci)}</td>'
            f'<td class="n">{pct(s.pass_hat_k)}{_span(s.pass_hat_k_ci)}</td><td style="color:{BAND_COLORS.get(s.band, "#555")}">{esc(s.band)}</td>'
            f'<td class="n">{threshold_pct(s.threshold)}</td><td>{gate}</td><td>{_interval_svg(s)}</td>'
            f'<td class="strip">{_strip(by_case.get(s.case_id, []))}</td>'
            f'<td>{esc(causes_line(count_causes(by_case.get(s.case_id, []))) or "–")}</td></tr>')
    out.append("</table>")
    out.append(f'<p class="muted">rate = passes / (passes + fails); errors and unjudged runs are counted apart. '
               f"pass@k and pass^k (95% interval in brackets) with {k_note({s.case_id: s.k for s in rep.stats if s.rate is not None})}. The bar is the 95% Wilson interval, the dot the rate, the dashed "
               "tick the threshold.</p>")
    if rep.judge_note:
        out.append(f'<p class="muted">{esc(rep.judge_note)}</p>')
    return out


def _corrected_level(rep: SessionReport) -> str:
    """"90% CI": the level of the ≈ intervals (the gate's: two one-sided tests at alpha)."""
    return next(s.corrected.ci_label for s in rep.stats if s.corrected is not None).removeprefix("≈")


def _corrected_cell(s: CaseStats) -> str:
    """The rate corrected for the judge's measured error, its 95% interval, judge-limited."""
    c = s.corrected
    if c is None:
        return "–"
    return (f"≈{pct_beside(c.rate, s.threshold)} ({interval_beside(c.lo, c.hi, s.threshold)})"
            + (' <span class="regressed">judge-limited</span>' if c.judge_limited else ""))


def _baseline_section(bc: BaselineComparison) -> list[str]:
    cmp, b = bc.comparison, bc.baseline
    out = ['<h2 id="baseline">Against the baseline</h2>',
           f"<p>Baseline: session {esc(b.name)} ({esc(b.source)}), git {esc(b.git_revision or '–')}.</p>",
           "<table><tr><th>case</th><th>baseline</th><th>this session</th><th>diff [95% CI] pts</th>"
           "<th>p (Fisher)</th><th>p (Holm)</th><th>verdict</th></tr>"]
    for c in cmp.cases:
        diff = "–" if c.diff is None else f"{pct(c.diff, signed=True, unit='')} [{pct(c.lo, signed=True, unit='')}, {pct(c.hi, signed=True, unit='')}]"
        verdict = f'<span class="{c.verdict.split()[0]}">{esc(c.verdict)}</span>'
        if c.runs_needed is not None and c.diff is not None:
            verdict += f" (~{c.runs_needed} runs/side to detect {100 * abs(c.diff):.0f} pts)"
        out.append(f"<tr><td>{esc(c.case_id)}</td><td>{esc(format_side(c.before).strip())}</td>"
                   f"<td>{esc(format_side(c.after).strip())}</td><td>{diff}</td><td class='n'>{format_p(c.p_value)}</td>"
                   f"<td class='n'>{format_p(c.p_holm)}</td><td>{verdict}</td></tr>")
    out.append("</table>")
    notes = [esc(n) for n in comparison_notes(cmp)]
    if bc.changed:
        notes.append("Changed since the baseline (not compared): " + ", ".join(esc(c) for c in bc.changed) + ".")
    if bc.given_away:
        notes.append("Given to another case since the baseline (renamed, deleted or reused; not compared): "
                     + ", ".join(esc(c) for c in bc.given_away) + ".")
    notes.append("Regressed: " + (", ".join(esc(c) for c in cmp.regressed) or "none") + ".")
    return out + [f"<p>{n}</p>" for n in notes]


def _judge_items(judge: JudgeDetail) -> list[str]:
    out = []
    if judge.items:
        out.append("<table><tr><th>#</th><th>rubric item</th><th>verdict</th><th>judge's reason</th></tr>")
        for it in judge.items:
            out.append(f"<tr><td>{esc(it.item)}</td><td>{esc(it.text)}</td>"
                       f"<td>{esc(it.verdict)}</td><td>{esc(it.reason)}</td></tr>")
        out.append("</table>")
    if judge.error:
        out.append(f"<p>judge error: {esc(judge.error)}</p>")
    return out


def _run_details(r: RunRecord) -> list[str]:
    out = [f'<details class="run" id="run-{esc(r.case_id)}-{r.k}"><summary><span class="{esc(r.status)}">run {r.k}: '
           f"{esc(r.status)}</span> — {esc(r.reason)}</summary>",
           f'<p class="muted">duration {r.duration_s:.1f}s · exit code {esc(r.exit_code)} · started {esc(r.started_at)}'
           f"{' · workspace kept: ' + esc(r.workspace) if r.workspace_kept and r.workspace else ''}</p>"]
    if r.cause:
        out.append(f'<p class="cause">cause: {esc(r.cause.kind)} ({esc(r.cause.rule)}) — {esc(r.cause.evidence)}</p>')
    if len(r.attempts) > 1:
        out.append("<table class='attempts'><tr><th>attempt</th><th>status</th><th>cause</th><th>reason</th></tr>")
        for a in r.attempts:
            why = a.cause
            out.append(f"<tr><td>{esc(a.attempt)}</td><td>{esc(a.status)}</td>"
                       f"<td>{esc(why.kind if why else '–')} {esc(why.rule if why else '')}</td><td>{esc(a.reason)}</td></tr>")
        out.append("</table>")
    if r.checks:
        out.append("<table><tr><th>#</th><th>check</th><th>status</th><th>detail</th></tr>")
        for c in r.checks:
            out.append(f"<tr><td>{c.index + 1}</td><td>{esc(c.type)}</td><td class='{esc(c.status)}'>{esc(c.status)}</td>"
                       f"<td>{esc(c.detail)}</td></tr>")
        out.append("</table>")
        for c in r.checks:
            if c.judge:
                out += [f"<h4>judge (check {c.index + 1})</h4>", *_judge_items(c.judge)]
    d = r.diff
    if d.created or d.modified or d.deleted or d.left_out:
        out.append("<p>workspace diff:</p><ul>")
        out += [f"<li>{kind}: {esc(p)}</li>" for kind, paths in (("created", d.created), ("modified", d.modified),
                                                                  ("deleted", d.deleted)) for p in paths]
        if d.left_out:
            out.append(f"<li>… and {esc(names_left_out(d.left_out, KEPT_NAMES))}</li>")
        out.append("</ul>")
    if r.output_excerpt:
        more = " (truncated)" if r.output_truncated else ""
        out.append(f"<p>agent output{more}:</p><pre>{esc(r.output_excerpt)}</pre>")
    out.append("</details>")
    return out


def render_html(rep: SessionReport, against: BaselineComparison | None = None) -> str:
    """The whole report as one HTML document (str)."""
    by_case = _by_case(rep.runs)
    regressed = set(against.regressed) if against else set()
    title = f"scarbook report — {rep.session.label or rep.session.id}"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           # No network: a browser opening this file fetches nothing (CSP forbids every remote load).
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:\">",
           f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{esc(title)}</h1>", *_header(rep)]
    if rep.versus is not None:  # a session of several agents: each agent side by side, each candidate's difference
        out += html_section(rep.versus, _interval_svg)
    else:
        out += ["<h2>Cases</h2>", *_case_table(rep, by_case, regressed)]
    if against:
        out += _baseline_section(against)
    out.append('<h2 id="failed">Runs that did not pass</h2>')
    any_failed = False
    for s in rep.stats:
        failed = [r for r in by_case.get(s.case_id, []) if r.status != RunStatus.PASS]
        if not failed:
            continue
        any_failed = True
        out.append(f'<h3 id="failed-{esc(s.case_id)}">{esc(s.case_id)}: {len(failed)} of {plural(len(by_case[s.case_id]), "run")}</h3>')
        for r in failed:
            out += _run_details(r)
    if not any_failed:
        out.append("<p>Every run passed.</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
