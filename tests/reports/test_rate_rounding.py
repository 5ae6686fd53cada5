"""One rate formatter everywhere (issue 39.5): 39/49 against 80% is 79.6%, never "80%", in `eval`,
`list`, `trends`, the corrected-rate cell, the HTML, JUnit and step summary, and the TUI's cells; an
interval's end never rounds across the threshold either (60/67 has a Wilson lower end of 79.97%)."""

from __future__ import annotations

import re

import pytest

from scarbook.config import GatePolicy
from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo
from scarbook.reports.github import step_summary
from scarbook.reports.html import render_html
from scarbook.reports.junit import build_junit
from scarbook.reports.table import SessionReport, format_table
from scarbook.stats.compare import Counts
from scarbook.stats.corrected import Corrected
from scarbook.stats.decisions import gate_stats
from scarbook.stats.rates import summarize_counts
from scarbook.stats.trends import TrendPoint
from scarbook.text import interval_beside, pct_beside, threshold_pct

pytestmark = pytest.mark.usefixtures("inprocess_demo")

CLOSE = "p" * 39 + "f" * 10  # 39/49 = 79.59%


def _record(history: History, n: int, runs: dict[str, str]) -> SessionInfo:
    info = SessionInfo(id=f"20260101-0{n:05d}-000a", label=f"s{n}", started_at=f"2026-01-{n:02d}T09:00:00+00:00",
                       runs_per_case=max(len(v) for v in runs.values()), case_ids=list(runs), agent="demo")
    history.start_session(info)
    for cid, marks in runs.items():
        for k, m in enumerate(marks, 1):
            status = {"p": "pass", "f": "fail"}[m]
            history.record_run(RunRecord(info.id, cid, k, status, status, started_at=info.started_at))
    history.finish_session(info)
    return info


def _whole_80(text: str) -> bool:
    """An "80" that is not part of 79.6 / 80.x: the rounding the formatter must never do."""
    return re.search(r"(?<![\d.])80(?![\d.])", text) is not None


def test_list_and_trends_show_79_6_not_80(project) -> None:
    project.bundled()
    _record(History(project.workspaces), 1, {"write-one-line": CLOSE})
    listed = project.cli("list")
    row = next(x for x in listed.output.splitlines() if x.startswith("write-one-line"))
    assert "79.6%" in row and not _whole_80(row.split("write-one-line")[1].split("%")[0])
    shown = project.cli("trends", "write-one-line")
    row = next(x for x in shown.output.splitlines() if x.startswith("write-one-line"))
    assert "79.6" in row and not _whole_80(row)


def _report() -> SessionReport:
    close = summarize_counts("close", 39, 10, 0, 0.8)
    edge = summarize_counts("edge", 60, 7, 0, 0.8)  # Wilson 95% lower end 0.79969
    session = SessionInfo("s1", case_ids=["close", "edge"], state="finished")
    stats = gate_stats([close, edge], GatePolicy(), {"close": ["pass"] * 39 + ["fail"] * 10,
                                                    "edge": ["pass"] * 60 + ["fail"] * 7})
    stats[0].corrected = Corrected(39 / 49, 0.7996, 0.95, 0.9, 0.9, 60, "2026-01-01", 0.001, 0.001)
    return SessionReport(session, stats, [])


def test_every_report_face_keeps_79_6_and_the_interval_end_below_80() -> None:
    rep = _report()
    table = format_table(rep)
    row = next(x for x in table.splitlines() if x.startswith("close "))
    assert row.count("79.6%") == 2 and "79.96" in row  # the raw and the ≈ rate, the ≈ interval's end
    edge = next(x for x in table.splitlines() if x.startswith("edge "))
    assert "79.97–" in edge
    md = step_summary(rep)
    assert "| `close` | 79.6% |" in md and "≈79.6% (79.96–95%)" in md and "| 79.97–" in md
    page = render_html(rep)
    assert ">79.6%<" in page and "≈79.6% (79.96–95%)" in page and "79.97–" in page
    import xml.etree.ElementTree as ET

    text = ET.tostring(build_junit(rep), encoding="unicode")
    assert "pass rate 79.6%" in text and "79.97-" in text


def test_the_tui_cells_keep_79_6() -> None:
    from scarbook.tui.widgets.rate_bar import interval_text
    from scarbook.tui.widgets.strip import rate_text
    from scarbook.tui.widgets.trend import grid_cell

    s = summarize_counts("close", 39, 10, 0, 0.8)
    assert rate_text(s.rate, s.band, s.threshold).plain == "79.6%"
    assert interval_text(summarize_counts("edge", 60, 7, 0, 0.8)).startswith("79.97–")
    point = TrendPoint("s1", "s1", "2026-01-01", Counts(39, 10))
    assert grid_cell(point, 0.8, width=7).plain.strip() == "79.6"


@pytest.mark.parametrize(("line", "shown"), [(0.8, "80%"), (0.795, "79.5%"), (0.9, "90%"), (1.0, "100%"),
                                             (0.7, "70%")])
def test_a_threshold_prints_as_the_percent_it_is(line, shown) -> None:
    assert threshold_pct(line) == shown


def test_an_interval_keeps_each_end_on_its_side() -> None:
    assert interval_beside(0.7996, 0.95, 0.8) == "79.96–95%"
    assert interval_beside(0.49, 0.94, 0.8) == "49–94%"
    assert pct_beside(0.8, 0.8) == "80%"
