"""The flake view: cases × sessions, each cell the case's rate in that session on a red-to-green
background, flakiest cases first (most threshold crossings, then the widest spread), so a case that
flips between sessions stands out. Enter on a cell opens that case's runs in that session.

It shows the trends the library already read (no file reading here, so it opens at once)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Static

from scarbook.stats.trends import CaseTrend, TrendPoint, Trends
from scarbook.text import pct_beside, plural, threshold_pct
from scarbook.tui.footer import Footer
from scarbook.tui.messages import OpenReview
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.trend import grid_cell

CASE_W, FLIPS_W = (16, 28), 5  # the case column's width range; the flips column
ROWS_AT_ONCE = 100  # rows added per refresh (the first chunk: more than a tall terminal shows)
CELL_W = (5, 12)  # a session column's width range: "100*" at least, a whole label (or id) when there is room
PADDING = 2  # DataTable pads each cell by one column on either side


def grid_widths(width: int, sessions: int, longest: int = CELL_W[1], case_longest: int = CASE_W[1]) -> tuple[int, int]:
    """(case column, session column) widths for a terminal `width` columns wide: sessions get at least
    CELL_W[0] (the grid scrolls sideways when they do not fit), the case id what is left, within CASE_W
    and no wider than the `case_longest` id; a session column grows to the `longest` name when there is
    room (an unlabelled session's id is 20: two of them whole beside short case ids at 80 columns)."""
    case_w = max(CASE_W[0], min(CASE_W[1], case_longest,
                                width - PADDING * 2 - FLIPS_W - sessions * (CELL_W[0] + PADDING)))
    room = width - case_w - FLIPS_W - PADDING * 2
    cell_w = max(CELL_W[0], min(max(CELL_W[1], longest), room // max(1, sessions) - PADDING))
    return case_w, cell_w


def column_label(name: str, width: int) -> Text:
    """A session's name in `width` columns: its end when it is longer ("prompt-v12" -> "…-v12"), where
    labels of a series differ. A Text, never a str: DataTable reads a str label as markup, and a label is
    whatever `--label` was given ("[/]" ended the screen)."""
    return Text(name if len(name) <= width else "…" + name[len(name) - width + 1:])


class FlakeScreen(Screen):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back"), Binding("enter", "open_cell", "Open runs")]

    def __init__(self, trends: Trends, case_ids: list[str]) -> None:
        super().__init__()
        wanted = set(case_ids)
        self.trends = trends
        self.cases: list[CaseTrend] = [t for t in trends.flakiest() if t.case_id in wanted]
        self.sessions = trends.sessions
        self.never = sorted(c for c in wanted if not trends.cases.get(c) or not trends.cases[c].points)
        self.widths: tuple[int, int] | None = None
        self._generation = 0
        self._rows_added = 0  # rows of this generation's grid already added (chunks come in order, once)
        self._cursor = Coordinate(0, 0)  # where the cursor goes back to once its row is in (a rebuild's)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("each cell: the case's pass rate in that session (* marked session, · no rate); "
                          "flakiest first · arrows move · Enter opens the runs", style="dim"), id="flake-help")
        yield DataTable(id="flake-grid", cursor_type="cell", zebra_stripes=False)
        yield Static("", id="flake-detail")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.sub_title = f"{plural(len(self.cases), 'case')} × {plural(len(self.sessions), 'session')}"
        grid = self.query_one("#flake-grid", DataTable)
        grid.fixed_columns = 2
        self._build(self.app.size.width)
        grid.focus()
        if self.cases and self.sessions:  # the newest session: the right end, in view at any width
            grid.move_cursor(row=0, column=len(self.sessions) + 1)
        self._show_detail()

    @unless_removed
    def on_resize(self, event) -> None:
        self._build(event.size.width)

    def _build(self, width: int) -> None:
        widths = grid_widths(width - 2, len(self.sessions),  # (the scrollbar)
                             max((len(info.label or info.id) for info in self.sessions), default=0),
                             max((len(t.case_id) for t in self.cases), default=0))
        if widths == self.widths:
            return
        self.widths = case_w, cell_w = widths
        grid = self.query_one("#flake-grid", DataTable)
        at = grid.cursor_coordinate
        grid.clear(columns=True)
        grid.add_column("case", key="case", width=case_w)
        grid.add_column("flips", key="flips", width=FLIPS_W)
        for info in self.sessions:
            grid.add_column(column_label(info.label or info.id, cell_w), key=info.id, width=cell_w)
        self._generation += 1
        self._rows_added, self._cursor = 0, at
        self._add_rows(0, self._generation)

    def on_screen_resume(self) -> None:
        """Back on top with rows still to add: ask for the next chunk again. Textual hands a
        `call_after_refresh` callback to the screen on top when it is handled, so the screen Enter opened
        took it, and one left before its next paint dropped it: the grid stopped filling."""
        if self.widths is not None and self._rows_added < len(self.cases):
            self.call_after_refresh(self._add_rows, self._rows_added, self._generation)

    def _add_rows(self, start: int, generation: int) -> None:
        """Rows start.. in chunks of ROWS_AT_ONCE, one chunk per refresh: t opens at once with 1,000
        cases, and keys are handled between chunks."""
        if generation != self._generation or start != self._rows_added:
            return  # the grid was rebuilt (resized) since, or this chunk is in already (asked again)
        stop = start + ROWS_AT_ONCE
        self._rows_added = min(stop, len(self.cases))
        if stop < len(self.cases):
            self.call_after_refresh(self._add_rows, stop, generation)
        cursor = self._cursor
        assert self.widths is not None  # rows are added after the grid was laid out
        case_w, cell_w = self.widths
        grid = self.query_one("#flake-grid", DataTable)
        for trend in self.cases[start:stop]:
            by_session = {p.session_id: p for p in trend.points}
            style = "bold red" if trend.regressed_since else ""
            grid.add_row(Text(trend.case_id[:case_w], style=style), Text(f"{trend.flips:>{FLIPS_W}}"),
                         *[grid_cell(by_session.get(info.id), trend.threshold, cell_w) for info in self.sessions],
                         key=trend.case_id)
        if start <= cursor.row < stop or (start == 0 and cursor.row >= stop and grid.row_count):
            grid.cursor_coordinate = cursor  # back where it was before a resize (clamped until its row is in)

    # -- what is under the cursor -------------------------------------------------------------
    def current(self) -> tuple[CaseTrend | None, TrendPoint | None, str]:
        """The highlighted case, its point in the highlighted session (None if it did not run there),
        and that session's id ("" on the case or flips column)."""
        grid = self.query_one("#flake-grid", DataTable)
        row, column = grid.cursor_coordinate
        if not self.cases or not 0 <= row < len(self.cases):
            return None, None, ""
        trend = self.cases[row]
        sid = self.sessions[column - 2].id if 2 <= column < len(self.sessions) + 2 else ""
        point = next((p for p in trend.points if p.session_id == sid), None)
        return trend, point, sid

    def _show_detail(self) -> None:
        detail = self.query_one("#flake-detail", Static)
        trend, point, sid = self.current()
        if trend is None:
            detail.update("no case has run yet — press r in the library to run cases"
                          if not self.cases else "")
            return
        lines = []
        if point is not None:
            c = point.counts
            rate = "no rate" if point.rate is None else pct_beside(point.rate, trend.threshold)
            figures = f"{c.passes} pass, {c.fails} fail" + (f", {c.errors} err" if c.errors else "") + \
                      (f", {c.unjudged} unjudged" if c.unjudged else "")
            named = point.name + (f" ({point.session_id})" if point.name != point.session_id else "")
            lines.append(f"{trend.case_id} in {named}: {rate} ({figures})"
                         + (f" — {', '.join(point.marks)}" if point.marks else ""))
        elif sid:
            lines.append(f"{trend.case_id} did not run in session {sid}")
        else:
            lines.append(f"{trend.case_id}: {plural(len(trend.points), 'session')}, "
                         f"crossed its {threshold_pct(trend.threshold)} line {plural(trend.flips, 'time')}")
        spread = self.trends.aa_spread.get(trend.case_id)
        if spread is not None:
            lines.append(f"A/A spread ±{100 * spread:.0f} pts (`scarbook noise`): a move smaller than that is within noise")
        if trend.regressed_since is not None:
            lines.append(trend.regressed_note() + f" (scarbook diff {trend.regressed_since.session_id} "
                         f"{trend.points[-1].session_id})")
        if self.never:
            lines.append(f"never run: {plural(len(self.never), 'case')}")
        detail.update(Text("\n".join(lines)))

    @on(DataTable.CellHighlighted, "#flake-grid")
    def _highlighted(self) -> None:
        self._show_detail()

    @on(DataTable.CellSelected, "#flake-grid")
    def _selected(self) -> None:
        self.action_open_cell()

    def action_open_cell(self) -> None:
        trend, point, sid = self.current()
        if trend is None:
            return
        if point is None:
            self.notify(f"{trend.case_id} did not run in that session — pick a coloured cell" if sid else
                        "move right to a session (arrows), then Enter opens the case's runs there")
            return
        self.app.post_message(OpenReview(point.session_id, trend.case_id))
