"""The noise floor, measured and quoted: `scarbook noise` runs one configuration twice (an A/A pair)
and compares the two sessions with the same Holm-corrected test as `scarbook diff`; `diff` and
`eval --against` then quote each case's A/A spread and call a smaller difference *within noise*.

A disagreement between A and A means something besides the agent moves the result (the machine,
the judge, a flaky check): a diff between two real configurations on that case needs more than it.

A pair needs MIN_AA_RUNS runs a side (4): with fewer, even n/n against 0/n is not significant (Fisher:
p = 0.33 at 2, 0.10 at 3), so A and A could never disagree, and its "spread" would be the width of a
2-run interval (±57 points at 1/2 against 1/2), not a floor under anything. `noise` refuses such a pair,
and a measurement stored before it did is not quoted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scarbook.cases.folders import ProjectFolders
from scarbook.errors import HistoryError
from scarbook.history.noise import NoiseMeasurement, NoiseStore
from scarbook.history.store import now_iso
from scarbook.models import SessionInfo
from scarbook.project import Project
from scarbook.stats.compare import ALPHA, SessionComparison, format_p, format_side, min_fisher_p
from scarbook.text import pct, plural
from scarbook.views.compare import TwoSessions, compare_two_sessions


def min_aa_runs(alpha: float = ALPHA) -> int:
    """The fewest runs a side at which an A/A pair can disagree at all: n/n against 0/n reaches Fisher's p < alpha."""
    n = 1
    while min_fisher_p(n, n, n) >= alpha:
        n += 1
    return n


MIN_AA_RUNS = min_aa_runs()


def too_few_runs(n: int) -> str | None:
    """Why `scarbook noise` refuses an A/A pair of n runs a side, with the fix; None when n is enough."""
    if n >= MIN_AA_RUNS:
        return None
    return (f"an A/A pair needs at least {MIN_AA_RUNS} runs per case a side, got {n}: at {plural(n, 'run')} even {n}/{n} against "
            f"0/{n} is p = {format_p(min_fisher_p(n, n, n))} (Fisher), so A and A could never disagree, and the spread "
            f"stored would be the width of an interval from {plural(n, 'run')}, not a noise floor — pass --runs "
            f"{MIN_AA_RUNS} or more (e.g. --runs 20)")


@dataclass
class NoiseResult:
    a: SessionInfo
    b: SessionInfo
    two: TwoSessions
    measured: list[NoiseMeasurement] = field(default_factory=list)

    @property
    def disagree(self) -> list[str]:
        return [m.case_id for m in self.measured if m.disagree]


def measure_noise(project: Project, a: SessionInfo, b: SessionInfo) -> NoiseResult:
    """Compare the A/A pair case by case and keep each case's spread (NoiseStore: `save` stores it)."""
    two = compare_two_sessions(project, a, b)
    at = now_iso()
    measured = []
    for c in two.comparison.cases:
        spread = None if c.lo is None or c.hi is None else (c.hi - c.lo) / 2
        measured.append(NoiseMeasurement(
            c.case_id, [a.id, b.id], a.runs_per_case, c.rate_before, c.rate_after, c.diff, spread, c.p_holm,
            c.verdict != "no detectable change", a.fingerprint, a.case_digests.get(c.case_id, ""), at))
    return NoiseResult(a, b, two, measured)


def _pts(x: float | None, signed: bool = False) -> str:
    return pct(x, signed=signed, unit="", none="—")


def format_noise(result: NoiseResult) -> str:
    """The table `scarbook noise` prints: per case, both sides, the difference, the spread, the call."""
    head = ["case", "A (rate passes/judged)", "B (rate passes/judged)", "diff [95% CI] pts", "A/A spread",
            "p (Holm)", "A vs A"]
    by_id = {c.case_id: c for c in result.two.comparison.cases}
    rows = []
    for m in result.measured:
        c = by_id[m.case_id]
        interval = "—" if c.diff is None else f"{_pts(c.diff, True)} [{_pts(c.lo, True)}, {_pts(c.hi, True)}]"
        rows.append([m.case_id, format_side(c.before), format_side(c.after), interval,
                     "—" if m.spread is None else f"±{_pts(m.spread)} pts", format_p(m.p_holm),
                     "DISAGREE" if m.disagree else "agree"])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    cmp = result.two.comparison
    spreads = [m.spread for m in result.measured if m.spread is not None]
    lines.append("")
    lines.append(f"A/A pair: A = {result.a.id}, B = {result.b.id} (the same configuration, "
                 f"{plural(result.a.runs_per_case, 'run')} per case each)")
    if spreads:
        overall = f"overall: mean A/A spread ±{_pts(sum(spreads) / len(spreads))} pts over {plural(len(spreads), 'case')}"
        if cmp.mean_diff is not None and cmp.mean_interval is not None:
            lo, hi = cmp.mean_interval
            overall += f"; mean difference {_pts(cmp.mean_diff, True)} pts (95% CI [{_pts(lo, True)}, {_pts(hi, True)}])"
        lines.append(overall)
    if result.disagree:
        lines.append(f"the same configuration disagreed with itself on {', '.join(result.disagree)} "
                     "(Holm-corrected, as `scarbook diff`): something besides the agent moves these cases")
    else:
        lines.append("A and A agree on every case (Holm-corrected, as `scarbook diff`)")
    lines.append("stored: `scarbook diff` and `eval --against` now quote each case's A/A spread")
    return "\n".join(lines)


def scaled_spread(m: NoiseMeasurement, judged_a: int, judged_b: int) -> float | None:
    """The A/A spread at the runs of the pair compared: a half-width scales as sqrt(1/n_A + 1/n_B), so
    measured at m.runs a side it is m.spread · sqrt((1/n_A + 1/n_B) / (2/m.runs)). None without runs."""
    if m.spread is None or m.runs <= 0 or judged_a <= 0 or judged_b <= 0:
        return None
    return m.spread * math.sqrt((1 / judged_a + 1 / judged_b) / (2 / m.runs))


def noise_notes(project: ProjectFolders, comparison: SessionComparison,
                digests: Sequence[Mapping[str, str]] = ()) -> list[str]:
    """For each compared case with a comparable A/A measurement — made on the same checks (case digest)
    as both sessions compared (`digests`: each side's case digests) — its spread scaled to the runs of
    this pair, and whether this difference is within it. Never beside a verdict it contradicts: a
    case called regressed or improved with a difference inside its spread gets no line. Nothing when
    no case was measured; a damaged noise file is said in one line."""
    try:
        latest = NoiseStore(project.workspaces_dir).latest()
    except HistoryError as exc:
        return [f"noise floor not read: {exc.message}"]
    out = []
    for c in comparison.cases:
        m = latest.get(c.case_id)
        if m is None or m.spread is None:
            continue
        when = f"`scarbook noise` {m.at[:10]}"
        sides = [d.get(c.case_id, "") for d in digests]
        if not m.digest or not sides or any(d != m.digest for d in sides):
            if m.digest and sides and all(sides):
                out.append(f"{c.case_id}: its A/A spread ({when}) was measured on other checks (the case changed "
                           f"since): not quoted — measure it again with `scarbook noise {c.case_id}`")
            continue
        if m.runs < MIN_AA_RUNS:  # stored before noise refused so few: it could not have disagreed, its width is n's
            out.append(f"{c.case_id}: its A/A spread ({when}) was measured at {plural(m.runs, 'run')} a side, too few "
                       f"for A and A ever to disagree: not quoted — measure it again with `scarbook noise {c.case_id} "
                       f"--runs 20` (at least {MIN_AA_RUNS})")
            continue
        spread = scaled_spread(m, c.before.judged, c.after.judged)
        if spread is None or c.diff is None:
            continue
        changed = c.verdict != "no detectable change"
        within = abs(c.diff) <= spread
        if changed and within:  # the test saw a change the spread would call noise: say nothing that contradicts it
            continue
        line = (f"{c.case_id}: its A/A spread at these runs is ±{_pts(spread)} pts (±{_pts(m.spread)} at "
                f"{plural(m.runs, 'run')} a side, {when})")
        if within:
            line += f" — this difference ({_pts(c.diff, True)} pts) is within noise"
        elif changed:
            line += f" — this difference ({_pts(c.diff, True)} pts) is beyond it, as the test says"
        out.append(line)
    return out
