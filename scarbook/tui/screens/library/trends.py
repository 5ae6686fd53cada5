"""The library's trends: read after its rows in the same thread worker, then only the trend and notes
cells are updated; `t` opens the flake view (screens/flakes.py) over them."""

from __future__ import annotations

from textual.widgets import DataTable
from textual.worker import get_current_worker

from scarbook.stats.trends import CaseTrend, Trends
from scarbook.tui.messages import OpenFlakes
from scarbook.tui.screens.library.notes import notes_text
from scarbook.tui.widgets.trend import trend_text
from scarbook.views.library_rows import LibraryRow
from scarbook.views.trends import project_trends


def regressed_line(trend: CaseTrend) -> str:
    """"regressed since v3: 100% then, 20% in v5" (t shows the sessions, `scarbook diff` the test)."""
    then, now = trend.regressed_since, trend.points[-1]
    return f"{trend.regressed_note()}: {100 * then.rate:.0f}% then, {100 * now.rate:.0f}% in {now.name}"


class TrendActions:
    """Mixed into LibraryScreen (which has rows, shown, columns, sort_key, trends and its refill)."""

    def _load_trends(self, rows: list[LibraryRow]) -> None:
        """In the library's load worker, after the rows were shown: every case's trend."""
        project = self.app.project
        trends = project_trends(project, [r.case for r in rows if r.case])
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_trends, trends, trends.problems)

    def _show_trends(self, trends: Trends, history_problems: list[str]) -> None:
        self.trends, self.trends_loaded = trends, True
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
