"""The library (home screen): every case with its latest pass rate, filter as you type, sort by column."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey

from scarbook.models.words import SessionState
from scarbook.stats.trends import DEFAULT_DEPTH
from scarbook.text import cut_chars, cut_words, plural, screen_text
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.messages import (
    OpenCalibrate,
    OpenEditor,
    OpenImport,
    OpenLaunch,
    OpenLive,
    OpenReview,
    OpenSessions,
    VerifyScar,
)
from scarbook.tui.mounting import unless_removed
from scarbook.tui.screens.library.case_actions import CaseActions
from scarbook.tui.screens.library.notes import notes_text
from scarbook.tui.screens.library.quitting import QuitAsks
from scarbook.tui.screens.library.trends import TrendActions, regressed_line
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.rate_bar import interval_text
from scarbook.tui.widgets.strip import rate_text, strip_text
from scarbook.tui.widgets.trend import trend_text

if TYPE_CHECKING:
    from scarbook.stats.trends import Trends
    from scarbook.views.library_rows import LibraryRow

# What reads and words the rows (scarbook.views.library_rows, and with it the history, the verifications and the
# judge's calibration) is imported in the load worker, after the first paint: the library takes keys before it
# (issue 38.5; tests/tui/test_startup_imports.py).

COLUMNS = [("id", "case"), ("title", "title"), ("family", "scar family"), ("rate", "rate"),
           ("ci", "95% CI"), ("runs", "runs/err"), ("last", "last run"), ("strip", "latest runs"),
           ("trend", "trend"), ("notes", "notes"), ("badge", "scar")]
TITLES = dict(COLUMNS)
# Each column's width; the title takes what is left (at least TITLE_MIN). On a narrow terminal the
# columns are dropped in the reverse of KEEP_ORDER (the least useful first); the detail line below
# the table always shows the highlighted case's task, rate and marks.
WIDTHS = {"id": 22, "family": 20, "rate": 5, "ci": 8, "runs": 8, "last": 16, "strip": 12, "trend": DEFAULT_DEPTH, "notes": 18,
          "badge": 12}
KEEP_ORDER = ["id", "rate", "notes", "badge", "ci", "runs", "trend", "strip", "last", "family"]
ESSENTIAL = {"id", "rate", "notes", "badge"}  # kept while the title has TITLE_MIN; the rest need TITLE_GOOD
TITLE_MIN, TITLE_GOOD, TITLE_MAX = 20, 36, 60
ID_MAX = 64  # a longer id is cut with … even on the widest terminal
CELL_PADDING = 2  # DataTable pads each cell by one column on either side


def fit_columns(width: int, id_width: int = 0) -> dict[str, int]:
    """The columns that fit in `width` terminal columns, in display order, with their widths: a
    column less useful than the title is shown only when the title still gets TITLE_GOOD. The case
    column is as wide as the longest id (`id_width`, up to ID_MAX) when the essential columns still fit
    beside it (a wide terminal: ids whole, the least useful columns give way); otherwise it is
    WIDTHS["id"] plus any room left over, and a longer id is cut with `…`."""
    whole = min(ID_MAX, max(WIDTHS["id"], id_width))
    widths = _choose_columns(width, whole)
    if whole > WIDTHS["id"] and not set(widths) >= ESSENTIAL:
        widths = _choose_columns(width, WIDTHS["id"])
        if "id" in widths:  # (below ~50 columns even the short case column gives way to the title)
            spare = max(0, width - sum(w + CELL_PADDING for w in widths.values()))
            widths["id"] += min(whole - widths["id"], spare)
    return {key: widths[key] for key, _ in COLUMNS if key in widths}


def _choose_columns(width: int, id_width: int) -> dict[str, int]:
    chosen: list[str] = []
    used = CELL_PADDING
    sizes = WIDTHS | {"id": id_width}
    for key in KEEP_ORDER:
        need = sizes[key] + CELL_PADDING
        if used + need + (TITLE_MIN if key in ESSENTIAL else TITLE_GOOD) <= width:
            chosen.append(key)
            used += need
    title = min(TITLE_MAX, max(TITLE_MIN, width - used))
    return {key: sizes[key] for key in chosen} | {"title": title}


SORT_KEYS = {
    "id": lambda r: r.key,
    "title": lambda r: r.title.lower(),
    "family": lambda r: r.family,
    "rate": lambda r: -1.0 if r.stats is None or r.stats.rate is None else r.stats.rate,
    "ci": lambda r: -1.0 if r.stats is None or r.stats.rate is None else r.stats.lo,
    "runs": lambda r: r.stats.total if r.stats else -1,
    "last": lambda r: r.last_run,
    "strip": lambda r: len(r.runs),
    "trend": lambda r: (r.trend is None or r.trend.regressed_since is None,  # regressed, then flakiest first
                        *((-r.trend.flips, -r.trend.spread) if r.trend else (0, 0.0))),
    "notes": lambda r: (r.marks, bool(r.damaged), r.stale),
    "badge": lambda r: r.badge,
}
BADGE_STYLE = {"certified": "bold green", "verified": "green", "misses": "bold red", "rejects good": "red",
               "judge unstable": "yellow", "unverified": "dim"}


# keys that act on no case: taken before the rows are there
NOT_ON_A_ROW = frozenset({"slash", "question_mark", "ctrl+p", "q", "tab", "shift+tab", "escape"})


class LibraryScreen(CaseActions, TrendActions, QuitAsks, HostScreen):
    # The footer shows the everyday keys; `?` lists them all, and Ctrl+P reaches every action.
    BINDINGS = [
        Binding("r", "launch", "Run…"),
        Binding("n", "new_case", "New"),
        Binding("e", "edit_case", "Edit"),
        Binding("v", "review", "Review"),
        Binding("h", "sessions", "Sessions"),
        Binding("i", "import_transcript", "Import transcript", show=False),
        Binding("c", "verify", "Verify scar", show=False),
        Binding("j", "calibrate", "Calibrate judge", show=False),
        Binding("w", "watch", "Live session", show=False),
        Binding("d", "delete_case", "Delete case", show=False),  # case_actions.py
        Binding("R", "rename_case", "Rename case", show=False),
        Binding("D", "duplicate_case", "Duplicate case", show=False),
        Binding("T", "trash", "Restore from trash", show=False),
        Binding("t", "trends", "Trends: cases × sessions", show=False),
        Binding("o", "cycle_sort", "Sort by the next column", show=False),
        Binding("O", "reverse_sort", "Reverse the sort", show=False),
        Binding("slash", "focus_filter", "Filter", show=False),  # the filter box says "/ to focus"
        Binding("escape", "focus_table", "Back to the table", show=False),
        Binding("q", "quit_asking", "Quit"),  # quitting.py: a running session asks first
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[LibraryRow] = []
        self.shown: list[LibraryRow] = []
        self.sort_key = "id"
        self.sort_reverse = False
        self.loaded = False
        self._read_begun = False  # the first read of the rows was started (once the empty table is painted)
        self._told: set[str] = set()  # history problems already shown
        self.judge_status = ""  # when the judge was last calibrated, and whether that still holds
        self.land_on: str | None = None  # the case the cursor goes to at the next reload
        self.trends: Trends | None = None  # read after the rows, in the same worker (trends.py)
        self.trends_loaded = False
        self.columns: dict[str, int] = {}  # the table's columns and their widths, fitted to the terminal

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: id, title, family, tag  (/ to focus)", id="filter")
        yield DataTable(id="cases", cursor_type="row", zebra_stripes=True)
        yield Static("loading cases and history…", id="detail")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        table = self.query_one("#cases", DataTable)
        self._fit_columns(self.app.size.width)
        self.sub_title = self.app.project.root.name  # the folder name: no machine-specific path in the frame
        table.focus()
        # The rows are read once the empty table is on screen: the first paint, and the keys typed at it,
        # do not share the interpreter with that read (issue 38.5).
        self.call_after_refresh(self._first_read)

    def on_screen_resume(self) -> None:
        """Back on top before the first read began: ask for it again. Textual hands a `call_after_refresh`
        callback to the screen on top when it is handled, so `?` typed at launch (help never waits for the
        rows) could take it, and help left before its next paint dropped it: "loading cases" for ever."""
        if not self._read_begun:
            self.call_after_refresh(self._first_read)

    @unless_removed
    def _first_read(self) -> None:
        if self._read_begun:  # asked again (on_screen_resume) after it began
            return
        self._read_begun = True
        self.reload()

    # -- data ---------------------------------------------------------------------------------
    def reload(self) -> None:
        # The app is taken here, on the UI thread: in the worker `self.app` is looked up in a context
        # variable, which is gone when the app is closing as a reload starts (NoActiveAppError).
        self._load_rows(self.app)

    @work(thread=True, exclusive=True, group="library-load")
    def _load_rows(self, app: Any) -> None:
        from scarbook.views.library_rows import build_rows, correct_rows, judge_calibration_line

        project = app.project
        rows = build_rows(project)
        problems = [str(p) for p in rows.problems]
        self.judge_status = "\n".join(line for line in (judge_calibration_line(project, rows),
                                                          correct_rows(project, rows)) if line)
        app.call_from_thread(self._show_rows, rows, problems)
        self._load_trends(app, rows)  # trends.py: older sessions, read after the rows are on screen

    def _show_rows(self, rows: list[LibraryRow], history_problems: list[str]) -> None:
        self.rows, self.loaded = rows, True
        if not self.query("#cases"):
            return  # read as the app closed (a reload after a save, say): the table is already taken down
        self._tell_problems(history_problems)
        self._fit_columns(self.app.size.width)  # the case column fits the longest id
        self._refill(self.land_on)
        self.land_on = None
        self.app.keys.release()  # keys typed before the rows were there act on them now

    @property
    def accepts_keys(self) -> bool:
        return True  # from the first paint; `takes_key` holds what needs the rows until they are there

    def takes_key(self, event) -> bool:
        """Keys go at once from the first paint (issue 38.5), except those that act on a case while the
        rows are still being read: they wait (with every key after them) until the rows are there, and
        then act on them. Typing into the filter, `/`, `?`, the palette, Tab and quitting never wait."""
        if self.loaded or isinstance(self.app.focused, Input):
            return True
        return event.key in NOT_ON_A_ROW

    def _tell_problems(self, history_problems: list[str]) -> None:
        for problem in history_problems:  # a damaged history file: said once, not at every reload
            if problem not in self._told:
                self._told.add(problem)
                self.notify(problem, title="history", severity="warning", timeout=20, markup=False)

    @unless_removed
    def on_resize(self, event) -> None:
        if self._fit_columns(event.size.width):
            self._refill()

    def _fit_columns(self, width: int) -> bool:
        """Rebuild the table's columns for this width; True when they changed."""
        columns = fit_columns(width - 2, max((len(r.key) for r in self.rows), default=0))  # the scrollbar
        if columns == self.columns:
            return False
        self.columns = columns
        table = self.query_one("#cases", DataTable)
        table.clear(columns=True)
        for key, width in columns.items():
            table.add_column(self._column_title(key), key=key, width=width)
        return True

    def _column_title(self, key: str) -> str:
        """A column's title, with the sort direction on the sorted one."""
        arrow = (" ▼" if self.sort_reverse else " ▲") if key == self.sort_key else ""
        return TITLES[key] + arrow

    def show_case(self, key: str) -> None:
        """Clear the filter and put the cursor on the case `key` (the palette's "open"/"run" a case)."""
        self.query_one("#filter", Input).value = ""
        self._refill()
        keys = [r.key for r in self.shown]
        if key in keys:
            self.query_one("#cases", DataTable).move_cursor(row=keys.index(key))

    def _refill(self, keep: str | None = None) -> None:
        table = self.query_one("#cases", DataTable)
        keep = keep or self.current_key()
        words = self.query_one("#filter", Input).value.lower().split()
        self.shown = [r for r in self.rows if all(w in r.haystack() for w in words)]
        self.shown.sort(key=SORT_KEYS[self.sort_key], reverse=self.sort_reverse)
        table.clear()
        for key in self.columns:
            table.columns[ColumnKey(key)].label = Text(self._column_title(key))
        for r in self.shown:
            cells = dict(zip([k for k, _ in COLUMNS], self._cells(r), strict=False))
            table.add_row(*[cells[key] for key in self.columns], key=r.key)
        keys = [r.key for r in self.shown]
        if keep in keys:
            table.move_cursor(row=keys.index(keep))
        self._show_detail()

    def _cells(self, r: LibraryRow) -> list:
        if r.problem is not None:
            return [Text(cut_chars(screen_text(r.key, one_line=True), self.columns.get("id", 0)), style="red"), Text(screen_text(r.title, one_line=True), style="red"), "", "", "", "", "", "", "", "", ""]
        s = r.stats
        runs = f"{s.total}/{s.errors}" if s and s.total else ""
        title_w, family_w = self.columns.get("title", TITLE_MAX), self.columns.get("family", WIDTHS["family"])
        return [Text(cut_chars(screen_text(r.key, one_line=True), self.columns.get("id", 0))), Text(cut_words(screen_text(r.title, one_line=True), title_w)), Text(cut_words(screen_text(r.family, one_line=True), family_w)), rate_text(s.rate, s.band, s.threshold) if s else "", interval_text(s) if s else "",
                Text(runs), Text(r.last_run), strip_text(r.runs), trend_text(r.trend, self.app.project.config.green),
                notes_text(r, self.columns.get("notes", 0)),
                Text(r.badge, style=BADGE_STYLE.get(r.badge, ""))]

    def current_row(self) -> LibraryRow | None:
        table = self.query_one("#cases", DataTable)
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def current_key(self) -> str | None:
        row = self.current_row() if self.shown else None
        return row.key if row else None

    def _show_detail(self) -> None:
        detail = self.query_one("#detail", Static)
        row = self.current_row()
        if row is None:
            total = len(self.rows)
            detail.update("no cases yet — press n to file a new scar" if not total
                          else f"no case matches the filter ({plural(total, 'case')})")
            return
        if row.problem is not None:
            # Relative to the project (its name is the screen's subtitle): short enough to read whole.
            detail.update(Text(screen_text(str(row.problem)).replace(f"{self.app.project.root}{os.sep}", "", 1), style="red"))
            return
        assert row.case is not None  # a row is a case or a problem, and the problem was shown above
        from scarbook.views.library_rows import corrected_line, damage_line, figures_line  # loaded with the rows

        lines = [figures_line(row), f"task: {screen_text(row.case.task)}"]  # an imported incident's words
        if row.trend is not None and row.trend.regressed_since is not None:
            lines.append(regressed_line(row.trend, row.trend.regressed_since))
        if SessionState.JUDGING in row.marks:  # eval --judge-batch: its runs wait for the judge's batch
            lines.append(f"latest session {row.session_id} is judging: no verdicts until its judge batch is "
                         f"collected (`scarbook resume {row.session_id}`)")
        elif row.marks:
            lines.append(f"latest session {row.session_id} is {' and '.join(row.marks)}: its rate covers only "
                         f"what that session ran and judged")
        if row.damaged:
            lines.append(damage_line(row).replace(f"{self.app.project.root}{os.sep}", ""))
        if row.stale:
            lines.append(f"stale: {row.stale}")
        if row.history_note:
            lines.append(row.history_note)
        if self.judge_status:
            lines.append(self.judge_status)
        if corrected_line(row.stats):
            lines.append(corrected_line(row.stats))
        invalid = sum(1 for r in self.rows if r.problem)
        direction = "descending" if self.sort_reverse else "ascending"
        lines.append(f"{plural(len(self.shown), 'case')} of {len(self.rows)} shown"
                     + (f", {invalid} invalid" if invalid else "")
                     + f"; sorted by {TITLES[self.sort_key]}, {direction} (o: next column, O: reverse)")
        detail.update(Text("\n".join(lines)))

    # -- events -------------------------------------------------------------------------------
    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self._refill()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.action_focus_table()

    @on(DataTable.RowHighlighted, "#cases")
    def _highlighted(self) -> None:
        self._show_detail()

    @on(DataTable.RowSelected, "#cases")
    def _row_selected(self) -> None:
        self.action_edit_case()

    @on(DataTable.HeaderSelected, "#cases")
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def sort_by(self, key: str) -> None:
        self.sort_reverse = not self.sort_reverse if key == self.sort_key else False
        self.sort_key = key
        self._refill()

    # -- actions ------------------------------------------------------------------------------
    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_focus_table(self) -> None:
        self.query_one("#cases", DataTable).focus()

    def action_cycle_sort(self) -> None:
        keys = list(self.columns) or [k for k, _ in COLUMNS]
        at = keys.index(self.sort_key) if self.sort_key in keys else -1
        self.sort_key = keys[(at + 1) % len(keys)]
        self.sort_reverse = False
        self._refill()

    def action_reverse_sort(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self._refill()

    def action_new_case(self) -> None:
        self.app.post_message(OpenEditor())

    def action_edit_case(self) -> None:
        row = self.current_row()
        if row is None:
            return
        if row.problem is not None:
            self.notify(str(row.problem), title="this case file is invalid — fix it in an editor",
                        severity="error")
            return
        self.app.post_message(OpenEditor(row.key))  # read from disk in a thread; keys typed meanwhile wait

    def action_import_transcript(self) -> None:
        self.app.post_message(OpenImport())

    def action_calibrate(self) -> None:
        self.app.post_message(OpenCalibrate())

    def action_verify(self) -> None:
        row = self.current_row()
        if row is None or row.case is None:
            return
        if row.case.scar is None or not row.case.scar.failed_artifact:
            self.notify("this case has no scar.failed_artifact to verify against — add one in the editor",
                        severity="warning")
            return
        self.app.post_message(VerifyScar(row.case))

    def action_review(self) -> None:
        row = self.current_row()
        if row is None or not row.session_id:
            self.notify("this case has no recorded runs yet — press r to run it")
            return
        self.app.post_message(OpenReview(row.session_id, row.key))

    def action_sessions(self) -> None:
        self.app.post_message(OpenSessions())

    def action_watch(self) -> None:
        if self.app.live is None:
            self.notify("no session yet — press r to run cases")
            return
        self.app.post_message(OpenLive())

    def action_launch(self) -> None:
        good = [r.case for r in self.rows if r.case is not None]
        if not good:
            self.notify("no valid cases to run — press n to file one", severity="warning")
            return
        row = self.current_row()
        selected = [row.case] if row and row.case else []
        filtered = [r.case for r in self.shown if r.case is not None]
        self.app.post_message(OpenLaunch(selected, filtered, good))
