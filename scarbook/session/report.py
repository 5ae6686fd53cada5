"""A finished session's report: the case table's numbers and the gate (reports/table.build_report, which
decides through run/gate.py as the live screen does), with the judge's calibration handed in (read once,
as the session was prepared: session/prepare.py) and the baseline compared. `eval`, `rejudge`, `resume` and
`report` print it; the TUI's live screen decides the same way."""

from __future__ import annotations

from dataclasses import dataclass

from scarbook.config import GatePolicy
from scarbook.history.baseline import Baseline, BaselineComparison
from scarbook.history.judge_truth import Calibration
from scarbook.models import Case, RunRecord, SessionInfo
from scarbook.reports.table import SessionReport, build_report
from scarbook.run.plan import SessionSite
from scarbook.views.compare import compare_with_baseline


@dataclass
class Outcome:
    report: SessionReport
    against: BaselineComparison | None = None  # the baseline comparison, when one was asked for


def report_session(site: SessionSite, info: SessionInfo, runs: list[RunRecord], cases: dict[str, Case],
                   calibration: Calibration | None, *, policy: GatePolicy | None = None,
                   baseline: Baseline | None = None) -> Outcome:
    """The session's report under `policy` (else the gate it ran under), compared with `baseline`; its
    judged rates corrected with `calibration`, the one the session was prepared with (never read again here)."""
    rep = build_report(info, runs, cases, site.config, calibration, policy=policy)
    against = compare_with_baseline(site, baseline, info, runs) if baseline is not None else None
    rep.regressed = against.regressed if against else []
    return Outcome(rep, against)
