"""The library's trends: read after its rows in the same thread worker, then only the trend and notes
cells are updated; `t` opens the flake view (screens/flakes.py) over them."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

from textual.widgets import DataTable
from textual.worker import get_current_worker

from scarbook.text import pct_beside
from scarbook.tui.host import HostScreen
from scarbook.tui.messages import OpenFlakes
from scarbook.tui.screens.library.notes import notes_text
from scarbook.tui.widgets.trend import trend_text

if TYPE_CHECKING:
    from scarbook.stats.trends import CaseTrend, TrendPoint, Trends
    from scarbook.views.library_rows import LibraryRow

# Whether this process froze the garbage collector's objects yet (once only). Not gc.get_freeze_count():
# it walks every frozen object, 10+ ms a call once a long-lived process has frozen a few hundred thousand.
_frozen = False


def regressed_line(trend: CaseTrend, then: TrendPoint) -> str:
    """"regressed since v3: 100% then, 20% in v5" (t shows the sessions, `scarbook diff` the test).
    `then`: the trend's regressed_since."""
    now = trend.points[-1]
    return (f"{trend.regressed_note()}: {pct_beside(then.rate, trend.threshold)} then, "
            f"{pct_beside(now.rate, trend.threshold)} in {now.name}")


class TrendActions(HostScreen):
    """Mixed into LibraryScreen; what it uses of that screen is declared here."""

    rows: list[LibraryRow]
    shown: list[LibraryRow]
    sort_key: str
    columns: dict[str, int]
    trends: Trends | None
    trends_loaded: bool

    if TYPE_CHECKING:
        def _show_rows(self, rows: list[LibraryRow], history_problems: list[str]) -> None: ...
        def _tell_problems(self, history_problems: list[str]) -> None: ...
        def _show_detail(self) -> None: ...

    def _load_trends(self, app: Any, rows: list[LibraryRow]) -> None:
        """In the library's load worker, after the rows were shown: every case's trend."""
        from scarbook.views.trends import project_trends  # read in the worker, after the first paint

        trends = project_trends(app.project, [r.case for r in rows if r.case])
        if not get_current_worker().is_cancelled:
            app.call_from_thread(self._show_trends, trends, trends.problems)

    def _show_trends(self, trends: Trends, history_problems: list[str]) -> None:
        self.trends, self.trends_loaded = trends, True
        if not self.query("#cases"):
            return  # read as the app closed: the table is already taken down
        global _frozen
        if not _frozen and self.app.screen is self:
            # The rows hold the latest session's runs (1,000 cases: ~200,000 objects) and Python's full
            # collections scan every object: one ran at nearly every `e` and took 0.2-0.28 s of it.
            # Frozen out of those scans once the library is read, no screen above it: what
            # is alive then lives as long as the app (frozen objects are never collected as cycles, so
            # once only, and never with another screen whose widgets will go).
            gc.freeze()
            _frozen = True
        for row in self.rows:
            row.trend = trends.cases.get(row.key)
        if self.sort_key == "trend":
            self._show_rows(self.rows, history_problems)  # the order changes: rebuild
            return
        # Only the cells trends change: re-adding 1,000 rows would cost the UI thread a second.
        self._tell_problems(history_problems)
        table = self.query_one("#cases", DataTable)
        green = self.app.project.config.green
        for r in self.shown:
            if r.trend is None or r.case is None:
                continue
            if "trend" in self.columns and r.trend.points:
                table.update_cell(r.key, "trend", trend_text(r.trend, green))
            if "notes" in self.columns and r.trend.regressed_since is not None:
                table.update_cell(r.key, "notes", notes_text(r, self.columns["notes"]))
        self._show_detail()

    def action_trends(self) -> None:
        if self.trends is None:
            self.notify("still reading the history — press t again in a moment")
            return
        self.app.post_message(OpenFlakes(self.trends, [r.key for r in self.rows if r.case]))
