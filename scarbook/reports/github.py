"""GitHub Actions: a Markdown step summary and one annotation per case that needs attention.

When `GITHUB_STEP_SUMMARY` names a file, `scarbook eval` appends the case table, the comparison
with the baseline and the failing runs' reasons to it. When `GITHUB_ACTIONS=true`, it prints one
workflow command per case: `::error` (below threshold, regressed), `::warning` (no verdict,
errored runs, undecided under --runs auto) or `::notice` (decided above by --runs auto within its margin,
its interval still reaching under the threshold), pointing at the case's case.yaml.

Everything an agent wrote (run reasons) is cleaned of control characters and escaped: in the
summary as Markdown/HTML text, in annotations as workflow-command data.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path

from scarbook.history.baseline import BaselineComparison
from scarbook.models import RunRecord, RunStatus
from scarbook.models.words import Decision
from scarbook.reports.errored import errored_warnings
from scarbook.reports.table import SessionReport, causes_line, format_retries
from scarbook.reports.versus_files import markdown_section, versus_annotations
from scarbook.run.causes import is_infra
from scarbook.run.gate import gate_words, margin_line, margin_words
from scarbook.stats.compare import comparison_notes, format_p, format_side
from scarbook.text import interval_beside, k_note, pct, pct_beside, plural, report_text, threshold_pct

MAX_RUNS_LISTED = 20  # failing runs per case in the summary (GitHub caps a summary at 1 MiB)
EXIT_MEANING = {0: "no case shown below its threshold", 1: "below threshold or regressed", 2: "usage or configuration error",
                3: "no verdict (or undecided under undecided: fail)"}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def md(text: str, limit: int = 300) -> str:
    """Agent-written text as inert Markdown: one line, control characters escaped, HTML escaped,
    every Markdown punctuation character backslash-escaped (so `|` cannot end a table cell)."""
    text = report_text(text, one_line=True)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _runs_by_case(rep: SessionReport) -> dict[str, list]:
    by_case: dict[str, list] = {}
    for r in sorted(rep.runs, key=lambda r: (r.case_id, r.k)):
        by_case.setdefault(r.case_id, []).append(r)
    return by_case


def _counts_cell(s) -> str:
    cell = f"{s.passes} / {s.fails} / {s.errors}"
    unjudged = getattr(s, "unjudged", 0)
    return cell + (f" / {unjudged} unjudged" if unjudged else "")


def _gate(s, regressed: set[str]) -> str:
    """"ok", "**below**", …; a --runs auto decision whose interval reaches past its threshold is named with its
    margin ("above (10-pt margin)": the paragraph under the table says it in full)."""
    return gate_words(s, {Decision.ABOVE: "ok", Decision.BELOW: "**below**"}) + (" · **regressed**" if s.case_id in regressed else "")


def _corrected_level(rep: SessionReport) -> str:
    """"90% CI": the level of the ≈ intervals (the gate's: two one-sided tests at alpha)."""
    return next(s.corrected.ci_label for s in rep.stats if s.corrected is not None).removeprefix("≈")


def _corrected_md(st) -> str:
    c = st.corrected
    if c is None:
        return "–"
    return f"≈{pct_beside(c.rate, st.threshold)} ({interval_beside(c.lo, c.hi, st.threshold)})" + (" judge-limited" if c.judge_limited else "")


def step_summary(rep: SessionReport, against: BaselineComparison | None = None) -> str:
    """The Markdown appended to $GITHUB_STEP_SUMMARY."""
    s = rep.session
    code = rep.exit_code
    counts = {st: sum(1 for r in rep.runs if r.status == st) for st in RunStatus}
    regressed = set(against.regressed) if against else set()
    fix = any(st.corrected is not None for st in rep.stats)
    meaning = "a candidate shown worse than the baseline by more than the margin" if rep.versus and code == 1 \
        else EXIT_MEANING.get(code, "?")
    out = [f"## scarbook: {md(s.label or s.id)} — exit {code} ({meaning})", "",
           f"Session `{s.id}`: {md(str(s.state))}; {plural(len(rep.runs), 'run')} — {counts[RunStatus.PASS]} pass, {counts[RunStatus.FAIL]} fail, "
           f"{counts[RunStatus.ERROR]} error" + (f", {counts[RunStatus.UNJUDGED]} unjudged" if counts[RunStatus.UNJUDGED] else "")
           + (" · partial: judge checks were skipped" if s.partial else ""), "",
           "| case | rate | 95% CI | " + (f"≈rate (judge-corrected, {_corrected_level(rep)}) | " if fix else "")
           + "pass^k | band | gate | pass / fail / err |",
           "|---|---:|---|" + ("---|" if fix else "") + "---:|---|---|---|"]
    if rep.versus is not None:  # a session of several agents: the comparison is its table and its gate
        out[4:] = markdown_section(rep.versus)
    for st in rep.stats if rep.versus is None else []:
        ci = "–" if st.rate is None else interval_beside(st.lo, st.hi, st.threshold)
        out.append(f"| `{st.case_id}` | {pct_beside(st.rate, st.threshold)} | {ci} | " + (f"{_corrected_md(st)} | " if fix else "")
                   + f"{pct(st.pass_hat_k)} | {st.band} | {_gate(st, regressed)} | {_counts_cell(st)} |")
    out += ["", "rate = passes / (passes + fails); errors and unjudged runs are counted apart."
            + ("" if rep.versus else " pass^k with "
               f"{k_note({st.case_id: st.k for st in rep.stats if st.rate is not None})}.")]
    for line in filter(None, map(margin_line, rep.stats if rep.versus is None else [])):  # --runs auto's margin
        out += ["", line]
    if any(rep.causes.values()):
        out += ["", f"Why runs did not pass: {causes_line(rep.causes)}."]
        out += [md(line, limit=2000) + "." for line in format_retries(rep)]
    if rep.judge_note:
        out += ["", "  \n".join(md(line, limit=2000) for line in rep.judge_note.splitlines())]
    if against:
        out += ["", *_against_markdown(against)]
    failing = [(cid, [r for r in runs if r.status != RunStatus.PASS]) for cid, runs in _runs_by_case(rep).items()]
    failing = [(cid, runs) for cid, runs in failing if runs]
    if failing:
        out += ["", "### Runs that did not pass", ""]
        for cid, runs in failing:
            out += [f"<details><summary><code>{cid}</code>: {plural(len(runs), 'run')}</summary>", ""]
            out += [f"- run {r.k} ({r.status}): {md(r.reason)}{_cause_md(r)}" for r in runs[:MAX_RUNS_LISTED]]
            if len(runs) > MAX_RUNS_LISTED:
                out.append(f"- … and {len(runs) - MAX_RUNS_LISTED} more (see the JUnit or HTML report)")
            out += ["", "</details>", ""]
    return "\n".join(out).rstrip() + "\n"


def _cause_md(r: RunRecord) -> str:
    """" — cause infra: killed-by-signal, 2 attempts" — the run's cause after its reason."""
    if not r.cause:
        return ""
    tries = f", {len(r.attempts)} attempts" if len(r.attempts) > 1 else ""
    return f" — cause {md(r.cause.kind)}: {md(r.cause.rule)}{tries}"


def _against_markdown(bc: BaselineComparison) -> list[str]:
    cmp, b = bc.comparison, bc.baseline
    out = [f"### Against the baseline (session `{b.session_id}`{f' {md(b.label)}' if b.label else ''})", "",
           "| case | baseline | this session | diff [95% CI] pts | p (Fisher) | p (Holm) | verdict |",
           "|---|---|---|---|---:|---:|---|"]
    for c in cmp.cases:
        diff = "–" if c.diff is None else f"{pct(c.diff, signed=True, unit='')} [{pct(c.lo, signed=True, unit='')}, {pct(c.hi, signed=True, unit='')}]"
        verdict = f"**{c.verdict}**" if c.verdict != "no detectable change" else c.verdict
        if c.runs_needed is not None and c.diff is not None:
            verdict += f" (~{c.runs_needed} runs/side to detect {100 * abs(c.diff):.0f} pts)"
        out.append(f"| `{c.case_id}` | {format_side(c.before).strip()} | {format_side(c.after).strip()} | {diff} | "
                   f"{format_p(c.p_value)} | {format_p(c.p_holm)} | {verdict} |")
    out += ["", *comparison_notes(cmp)]
    if bc.changed:
        out.append(f"Changed since the baseline (not compared): {', '.join(f'`{c}`' for c in bc.changed)}.")
    if bc.given_away:
        out.append("Given to another case since the baseline (renamed, deleted or reused; not compared): "
                   f"{', '.join(f'`{c}`' for c in bc.given_away)}.")
    return out


def _command_data(text: str) -> str:
    # Workflow-command escaping (actions/toolkit `escapeData`), after cleaning control characters.
    return report_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _command_property(text: str) -> str:
    return _command_data(text).replace(":", "%3A").replace(",", "%2C")


def case_file(project_root: Path, cases_dir: Path, case_id: str, env: Mapping[str, str]) -> str:
    """cases/<id>/case.yaml relative to the repository (GITHUB_WORKSPACE) when the project is in it."""
    path = (cases_dir / case_id / "case.yaml").resolve()
    for base in (env.get("GITHUB_WORKSPACE"), str(project_root)):
        if base:
            try:
                return path.relative_to(Path(base).resolve()).as_posix()
            except ValueError:
                continue
    return path.as_posix()


def case_annotations(rep: SessionReport, against: BaselineComparison | None, files: Mapping[str, str]) -> list[str]:
    """One `::error`, `::warning` or `::notice` line per case that needs attention; nothing for a green case.
    A case --runs auto decided above whose interval still reaches under its threshold passed: a notice with its
    margin (run/gate.margin_words), or those words after the case's error or warning; a case it decided below whose
    interval still reaches over its threshold has its error with those words after it."""
    regressed = {c.case_id: c for c in against.comparison.cases if c.verdict == "regressed"} if against else {}
    lines = []
    if rep.versus is not None:  # a session of several agents: a candidate shown worse, a row without a verdict
        for cid, title, errors, warnings in versus_annotations(rep.versus, rep.runs):
            lines.append(f"::{'error' if errors else 'warning'} file={_command_property(files[cid])},"
                         f"title={_command_property(title)}::{_command_data('; '.join(errors + warnings))}")
        return lines
    for s in rep.stats:
        errors, warnings = [], []
        if s.gate == Decision.BELOW:
            errors.append(f"below threshold: pass rate {pct_beside(s.rate, s.threshold)} ({s.passes}/{s.judged}, 95% CI "
                          f"{interval_beside(s.lo, s.hi, s.threshold)}) < {threshold_pct(s.threshold)}")
        if s.case_id in regressed:
            c = regressed[s.case_id]
            errors.append(f"regressed against the baseline: {pct(c.rate_before)} -> {pct(c.rate_after)} "
                          f"({pct(c.diff, signed=True, unit='')} pts, 95% CI [{pct(c.lo, signed=True, unit='')}, {pct(c.hi, signed=True, unit='')}], "
                          f"Holm p {format_p(c.p_holm)})")
        if s.gate == Decision.NO_VERDICT:
            warnings.append("no verdict: " + ("some runs went unjudged (judge checks skipped)"
                                              if getattr(s, "unjudged", 0) else s.gate_note or "no run reached a verdict"))
        if s.gate == Decision.UNDECIDED:
            warnings.append(f"undecided: {s.gate_note}" if s.gate_note else "undecided")
        warnings += errored_warnings(s.errors, sum(1 for r in rep.runs if r.case_id == s.case_id and is_infra(r)))
        notices = [margin_words(s)] if margin_words(s) else []  # after a below case's error, or a notice of its own
        if not errors and not warnings and not notices:
            continue
        level = "error" if errors else "warning" if warnings else "notice"
        title = f"scarbook: {s.case_id} " + ("below threshold" if s.gate == Decision.BELOW else
                                              "regressed" if s.case_id in regressed else
                                              "needs attention" if warnings else "above within its margin")
        message = "; ".join(errors + warnings + notices)
        lines.append(f"::{level} file={_command_property(files[s.case_id])},title={_command_property(title)}::"
                     f"{_command_data(message)}")
    return lines


def append_step_summary(rep: SessionReport, against: BaselineComparison | None, env: Mapping[str, str]) -> bool:
    """Append the Markdown summary to $GITHUB_STEP_SUMMARY when it is set (OSError if it cannot be)."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(step_summary(rep, against) + "\n")
    return True


def annotation_lines(rep: SessionReport, against: BaselineComparison | None, project_root: Path,
                     cases_dir: Path, env: Mapping[str, str]) -> list[str]:
    """The annotations to print when running under GitHub Actions (GITHUB_ACTIONS=true), else none."""
    if env.get("GITHUB_ACTIONS") != "true":
        return []
    files = {s.case_id: case_file(project_root, cases_dir, s.case_id, env) for s in rep.stats}
    return case_annotations(rep, against, files)
