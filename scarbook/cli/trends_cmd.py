"""`scarbook trends`: each case's pass rate across its last sessions, flakiest first — the TUI's flake
view (t in the library) as plain text or JSON."""

from __future__ import annotations

import json

import click

from scarbook.cli.common import (
    examples,
    friendly_errors,
    get_project,
    report_case_problems,
    report_history_problems,
    say,
)
from scarbook.session.plan import case_ids_of_args, refuse_unknown_cases
from scarbook.stats.trends import DEFAULT_DEPTH, CaseTrend, TrendPoint, Trends
from scarbook.text import pct_beside
from scarbook.views.library_rows import format_started
from scarbook.views.trends import project_trends


@click.command("trends", epilog=examples("scarbook trends", "scarbook trends write-one-line -n 20 --json"))
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("-n", "--depth", type=click.IntRange(1), default=DEFAULT_DEPTH, show_default=True,
              help="Sessions per case: the last N sessions that ran it.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
@click.pass_context
@friendly_errors
def trends_command(ctx: click.Context, case_ids: tuple[str, ...], depth: int, as_json: bool) -> None:
    """Each case's pass rate in the last N sessions that ran it, flakiest first (most crossings of its
    threshold, then the widest spread). `*` marks a session that was cancelled, interrupted, damaged...;
    `·` a session with no rate (judge skipped, or no judged run). "regressed since S" means
    `scarbook diff S <its latest session>` calls the case regressed (docs/statistics.md)."""
    project = get_project(ctx)
    found = project.load_cases()
    report_case_problems(found.problems)
    case_ids = case_ids_of_args(project, case_ids)
    refuse_unknown_cases(project, found, case_ids)
    cases = [c for c in found.cases if not case_ids or c.id in case_ids]
    trends = project_trends(project, cases, depth)
    report_history_problems(trends.problems)
    noise = trends.aa_spread
    say(json.dumps(trends_json(trends, depth, noise), indent=2) if as_json else format_trends(trends, noise))


def _cell(point: TrendPoint | None, threshold: float) -> str:
    if point is None:
        return ""
    if point.rate is None:
        return "·"
    return pct_beside(point.rate, threshold, unit="") + ("*" if point.marks else "")


def format_trends(trends: Trends, noise: dict[str, float] | None = None) -> str:
    """A legend of the sessions (numbered oldest first), then one row per case: flips, a cell per
    session, and the regressed note."""
    if not trends.sessions:
        return "no sessions yet — run `scarbook eval`"
    lines = ["sessions (oldest first):"]
    for n, info in enumerate(trends.sessions, 1):
        lines.append(f"  {n:>2} = {info.id}  {info.label or '(no label)'}  {format_started(info.started_at)}")
    ranked = trends.flakiest()
    case_w = max([len("case"), *(len(t.case_id) for t in ranked)])
    head = f"{'case':<{case_w}}  flips  " + " ".join(f"{n:>4}" for n in range(1, len(trends.sessions) + 1))
    lines += ["", head.rstrip() + "  note", "-" * (len(head) + 6)]
    for t in ranked:
        by_session = {p.session_id: p for p in t.points}
        cells = " ".join(f"{_cell(by_session.get(s.id), t.threshold):>4}" for s in trends.sessions)
        aa = f"A/A ±{100 * noise[t.case_id]:.0f} pts" if noise and t.case_id in noise else ""
        note = "; ".join(x for x in (_note(t), aa) if x)
        lines.append(f"{t.case_id:<{case_w}}  {t.flips:>5}  {cells}  {note}".rstrip())
    never = sorted(c for c, t in trends.cases.items() if not t.points)
    if never:
        lines += ["", "never run: " + ", ".join(never)]
    lines += ["", "cells: pass rate % (passes / judged runs); * the session was cancelled, interrupted, "
              "damaged or the case changed; · no rate (judge skipped or no judged run); blank: not run"
              + ("; A/A ±X: the case's noise floor (`scarbook noise`), a move smaller than it is within noise"
                 if noise else "")]
    return "\n".join(lines)


def _note(t: CaseTrend) -> str:
    if t.regressed_since is None:
        return ""
    return f"{t.regressed_note()} (scarbook diff {t.regressed_since.session_id} {t.points[-1].session_id})"


def trends_json(trends: Trends, depth: int, noise: dict[str, float] | None = None) -> dict:
    def point(p: TrendPoint) -> dict:
        c = p.counts
        return {"session": p.session_id, "label": p.label, "started_at": p.started_at, "rate": p.rate,
                "passes": c.passes, "fails": c.fails, "errors": c.errors, "unjudged": c.unjudged,
                "marks": list(p.marks)}

    return {
        "depth": depth,
        "sessions": [{"id": s.id, "label": s.label, "started_at": s.started_at, "state": str(s.state),
                      "partial": s.partial} for s in trends.sessions],
        "cases": [{"case": t.case_id, "threshold": t.threshold, "flips": t.flips, "spread": t.spread,
                   "regressed_since": t.regressed_since.session_id if t.regressed_since else None,
                   "aa_spread": (noise or {}).get(t.case_id),  # the noise floor, when measured
                   "points": [point(p) for p in t.points]}
                  for t in [*trends.flakiest(), *(t for t in trends.cases.values() if not t.points)]],
    }


COMMANDS = [trends_command]
