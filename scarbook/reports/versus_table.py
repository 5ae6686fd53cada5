"""A session of several agents in words: the comparison table, its JSON section, the cost lines (issue 36).

    case            base (baseline)      cand                 diff [95% CI] pts  decision  gate ±5 pts
    write-one-line   90% (70–97%) 18/20   60% (39–78%) 12/20  -30 [-52, -4]      WORSE     INFERIOR
    suite (3 cases)                                           -20 [-35, -5]      WORSE     INFERIOR

One row per case and candidate (the baseline's rate repeated beside each), then the suite row of each
candidate; the calls are stats/head_to_head.py's (run/versus.py reads them from the session).
"""

from __future__ import annotations

from typing import Any

from scarbook.models import MarginCall, Versus
from scarbook.run.gate import unbounded_note, unbounded_words
from scarbook.run.versus import SessionVersus
from scarbook.stats.head_to_head import VersusRow
from scarbook.stats.rates import CaseStats, count_text
from scarbook.text import interval_beside, pct, pct_beside, plural

CALL_WORDS = {Versus.BETTER: "better", Versus.WORSE: "WORSE", Versus.SAME: "same", Versus.UNDECIDED: "undecided",
              Versus.NO_VERDICT: "no verdict"}
MARGIN_WORDS = {MarginCall.INFERIOR: "INFERIOR", MarginCall.NON_INFERIOR: "ok", MarginCall.UNDECIDED: "undecided",
                MarginCall.NO_VERDICT: "no verdict"}

# a session of several agents: what its decisions rest on, beside the ≈ rates (this table, SessionReport.judge_note)
ON_JUDGED_COUNTS = ("the decisions are made on the judged counts: the same judge grades every agent, so its error "
                    "moves their rates alike")


def points(x: float | None, signed: bool = True) -> str:
    """A difference of rates in percentage points, bare ("-30"), or "—" without one."""
    return pct(x, signed=signed, unit="", none="—")


def interval_pts(row: VersusRow) -> str:
    """"-30 [-52, -4]" (points), or "—"."""
    if row.diff is None or row.lo is None or row.hi is None:
        return "—"
    return f"{points(row.diff)} [{points(row.lo)}, {points(row.hi)}]"


def side(s: CaseStats | None) -> str:
    """One agent's rate of a case with its 95% interval: "90% (77–96%) 36/40"; no fraction without a rate,
    "+2 err" when runs errored."""
    if s is None:
        return "–"
    text = (f"{pct_beside(s.rate, s.threshold, width=3)} ({interval_beside(s.lo, s.hi, s.threshold)}) "
            f"{s.passes}/{s.judged}" if s.rate is not None else f"n/a {count_text(s.passes, s.fails, s.unjudged)}")
    if s.corrected is not None:  # corrected for the judge's measured error (a calibration exists)
        text += f" ≈{pct_beside(s.corrected.rate, s.threshold)}"
    return text + (f" +{s.errors} err" if s.errors else "")


def format_versus(v: SessionVersus) -> str:
    """The comparison table and the lines under it (the CLI's end of an `eval --agents` session)."""
    c = v.comparison
    several = len(v.candidates) > 1
    margin = points(c.margin, signed=False)
    head = ["case", *(["candidate"] if several else []), f"{v.baseline} (baseline)",
            "candidate rate" if several else v.candidates[0], "diff [95% CI] pts", "decision", f"gate ±{margin} pts"]
    rows: list[list[str]] = []
    for row in c.rows:
        rows.append([row.case_id, *([row.candidate] if several else []), side(v.stat(v.baseline, row.case_id)),
                     side(v.stat(row.candidate, row.case_id)), interval_pts(row), CALL_WORDS[row.call],
                     MARGIN_WORDS[row.margin_call]])
    for row in c.suites:
        rows.append([f"suite ({plural(row.cases, 'case')})", *([row.candidate] if several else []), "", "",
                     interval_pts(row), CALL_WORDS[row.call], MARGIN_WORDS[row.margin_call]])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines += versus_notes(v)
    return "\n".join(lines)


def versus_notes(v: SessionVersus) -> list[str]:
    """The sentences under the table: who the agents are, what the calls promise, each row left
    undecided or without a verdict, and what each candidate cost against the baseline."""
    c = v.comparison
    out = ["agents: " + "; ".join(f"{n}{' (baseline)' if n == v.baseline else ''} = {v.labels.get(n) or n}"
                                  for n in v.names)]
    rows = len(c.rows) + len(c.suites)
    # (Tarone's family: a row whose most lopsided outcome at its run counts could not be significant spends no alpha)
    tested = ("no row can be called better or worse at these run counts (not even its most lopsided outcome, "
              "e.g. 3/3 against 0/3, would be significant) — more runs a side decide" if not c.family else
              f"better/worse when the Holm-corrected Fisher test (over the {c.family} of {plural(rows, 'row')}, cases × "
              f"candidates and the suite, whose run counts could reach significance) and the 95% interval agree — at "
              f"most {c.alpha:.0%} chance of any wrong one")
    m = points(c.margin, False)
    # the margin calls are one-sided tests at alpha: the (1 - 2 alpha) interval's ends, not the 95% one printed
    out.append(f"decisions: {tested}; same when two one-sided tests put the difference within ±{m} points; the gate "
               f"is red when a candidate is shown worse by more than that margin and ok when shown not worse, each "
               f"one-sided at {c.alpha:.0%} — the {1 - 2 * c.alpha:.0%} interval's end, so an ok row's 95% interval "
               f"can reach past −{m} (docs/statistics.md)")
    if any(s.corrected is not None for s in v.all_stats()):
        out.append(f"≈ rates corrected for the judge's measured error (its calibration); {ON_JUDGED_COUNTS}")
    out += unbounded_notes(v)
    out += no_verdict_notes(v)
    out += cost_lines(v)
    return out


def no_verdict_notes(v: SessionVersus) -> list[str]:
    """'alpha (cand): no verdict — only 4 of the candidate's 20 runs reached a verdict (16 errors); …': each case
    a side's errors (or unjudged runs) leave without a comparison (the CLI's, the step summary's and the HTML's)."""
    return [f"{row.case_id} ({row.candidate}): no verdict — {row.why}" for row in v.comparison.rows
            if row.call == Versus.NO_VERDICT and row.why]


def unbounded_notes(v: SessionVersus) -> list[str]:
    """The footnotes of the comparison's tables: 'alpha (cand): ≈58%, 90% CI 0–100%: …' for each agent's case whose
    judge-corrected interval is the whole range (the CLI's, the step summary's and the HTML's)."""
    out = []
    for cid in dict.fromkeys(r.case_id for r in v.comparison.rows):
        for name in v.names:
            s = v.stat(name, cid)
            note = unbounded_note(s) if s is not None else ""
            if note:
                out.append(f"{cid} ({name}): {note}")
    return out


def headline(v: SessionVersus, candidate: str) -> str:
    """"candidate: -30 points (worse), 1.1× the time" — quality and cost together, from the suite row."""
    suite = v.comparison.suite(candidate)
    text = f"{candidate}: "
    if suite is None or suite.diff is None:
        text += "no difference to say (no case has a verdict on both sides: see the no-verdict lines above)"
    else:
        text += f"{points(suite.diff)} points on the mean of {plural(suite.cases, 'case')} ({CALL_WORDS[suite.call].lower()})"
    ratio = v.cost_ratio(candidate)
    if ratio is not None:
        text += f", {ratio[0]:.1f}× {ratio[1]}"
    return text


def cost_lines(v: SessionVersus) -> list[str]:
    """Per agent: runs, tokens, dollars (agent + judge), wall time a run; then each candidate's headline."""
    out = []
    for name in v.names:
        cost = v.costs[name]
        wall = cost.wall_per_run
        out.append(f"cost {name}: {plural(cost.runs, 'run')}, {cost.agent_usage.total_tokens} agent tokens, "
                   f"${cost.agent_usage.cost_usd:.4f} agent + ${cost.judge_usage.cost_usd:.4f} judge"
                   + (f", {wall:.2f} s a run" if wall is not None else ""))
    out += [headline(v, name) for name in v.candidates]
    return out


def versus_to_dict(v: SessionVersus) -> dict[str, Any]:
    """The JSON report's `agents` section."""
    c = v.comparison
    return {
        "baseline": v.baseline, "candidates": list(v.candidates), "margin": c.margin, "alpha": c.alpha,
        "family": c.family,
        "list": [{"name": n, "label": v.labels.get(n, ""), "errors": sum(s.errors for s in v.stats.get(n, [])),
                  "cost": v.costs[n].to_dict()} for n in v.names],
        "cases": [{"case": cid, "agents": {n: _stats_dict(v.stat(n, cid)) for n in v.names},
                   "comparisons": [r.to_dict() for r in c.rows if r.case_id == cid]}
                  for cid in dict.fromkeys(r.case_id for r in c.rows)],
        "suite": [r.to_dict() for r in c.suites],
        "headlines": [headline(v, n) for n in v.candidates],
    }


def _stats_dict(s: CaseStats | None) -> dict[str, Any] | None:
    if s is None:
        return None
    d: dict[str, Any] = {"passes": s.passes, "fails": s.fails, "errors": s.errors, "unjudged": s.unjudged,
                         "rate": s.rate, "ci": None if s.rate is None else [s.lo, s.hi]}
    if s.corrected is not None:  # with why a 0–100% interval is the whole range, as a case of one agent's JSON
        d["corrected"] = s.corrected.to_dict() | {"ci_note": unbounded_words(s.corrected, s.threshold) or None}
    return d
