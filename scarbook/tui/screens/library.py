"""The library (home screen): every case with its latest pass rate, filter as you type, sort by column."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from scarbook.library_rows import LibraryRow, build_rows, judge_calibration_line
from scarbook.tui.widgets.rate_bar import interval_text
from scarbook.tui.widgets.strip import rate_text, strip_text

COLUMNS = [("id", "case"), ("title", "title"), ("family", "scar family"), ("rate", "rate"),
           ("ci", "95% CI"), ("runs", "runs/err"), ("last", "last run"), ("strip", "latest runs"),
           ("notes", "notes"), ("badge", "scar")]
WIDTHS = {"id": 22, "title": 36, "family": 20}  # long titles are cut; the detail line shows the task
SORT_KEYS = {
    "id": lambda r: r.key,
    "title": lambda r: r.title.lower(),
    "family": lambda r: r.family,
    "rate": lambda r: -1.0 if r.stats is None or r.stats.rate is None else r.stats.rate,
    "ci": lambda r: -1.0 if r.stats is None or r.stats.rate is None else r.stats.lo,
    "runs": lambda r: r.stats.total if r.stats else -1,
    "last": lambda r: r.last_run,
    "strip": lambda r: len(r.runs),
    "notes": lambda r: (r.marks, r.stale),
    "badge": lambda r: r.badge,
}
MARK_STYLE = "bold magenta"  # a session that did not run or judge all it planned


def notes_text(r: LibraryRow) -> Text:
    """The latest session's marks (cancelled, partial, ...) then "stale", comma-separated."""
    text = Text(", ".join(r.marks), style=MARK_STYLE)
    if r.stale:
        text.append((", " if r.marks else "") + "stale", style="yellow")
    return text


BADGE_STYLE = {"verified": "green", "misses": "bold red", "rejects good": "red", "unverified": "dim"}


class LibraryScreen(Screen):
    BINDINGS = [
        Binding("r", "launch", "Run…"),
        Binding("n", "new_case", "New scar"),
        Binding("i", "import_transcript", "Import transcript"),
        Binding("c", "verify", "Verify scar"),
        Binding("j", "calibrate", "Calibrate judge"),
        Binding("e", "edit_case", "Edit"),
        Binding("v", "review", "Review runs"),
        Binding("h", "sessions", "Sessions"),
        Binding("w", "watch", "Live session"),
        Binding("o", "cycle_sort", "Sort"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("escape", "focus_table", "Table", show=False),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[LibraryRow] = []
        self.shown: list[LibraryRow] = []
        self.sort_key = "id"
        self.sort_reverse = False
        self.loaded = False
        self._told: set[str] = set()  # history problems already shown
        self.judge_status = ""  # when the judge was last calibrated, and whether that still holds

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: id, title, family, tag  (/ to focus)", id="filter")
        yield DataTable(id="cases", cursor_type="row", zebra_stripes=True)
        yield Static("loading cases and history…", id="detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#cases", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key, width=WIDTHS.get(key))
        self.sub_title = self.app.project.root.name  # the folder name: no machine-specific path in the frame
        table.focus()
        self.reload()

    # -- data ---------------------------------------------------------------------------------
    def reload(self) -> None:
        self._load_rows()

    @work(thread=True, exclusive=True, group="library-load")
    def _load_rows(self) -> None:
        rows = build_rows(self.app.project)
        problems = [str(p) for p in self.app.project.history.problems]
        self.judge_status = judge_calibration_line(self.app.project, rows)
        self.app.call_from_thread(self._show_rows, rows, problems)

    def _show_rows(self, rows: list[LibraryRow], history_problems: list[str]) -> None:
        self.rows, self.loaded = rows, True
        for problem in history_problems:  # a damaged history file: said once, not at every reload
            if problem not in self._told:
                self._told.add(problem)
                self.notify(problem, title="history", severity="warning", timeout=20, markup=False)
        self._refill()

    def _refill(self) -> None:
        table = self.query_one("#cases", DataTable)
        keep = self.current_key()
        words = self.query_one("#filter", Input).value.lower().split()
        self.shown = [r for r in self.rows if all(w in r.haystack() for w in words)]
        self.shown.sort(key=SORT_KEYS[self.sort_key], reverse=self.sort_reverse)
        table.clear()
        for r in self.shown:
            table.add_row(*self._cells(r), key=r.key)
        keys = [r.key for r in self.shown]
        if keep in keys:
            table.move_cursor(row=keys.index(keep))
        self._show_detail()

    def _cells(self, r: LibraryRow) -> list:
        if r.problem is not None:
            return [Text(r.key, style="red"), Text(r.title, style="red"), "", "", "", "", "", "", "", ""]
        s = r.stats
        runs = f"{s.total}/{s.errors}" if s and s.total else ""
        return [Text(r.key), Text(r.title), Text(r.family), rate_text(s.rate, s.band) if s else "", interval_text(s) if s else "",
                Text(runs), Text(r.last_run), strip_text(r.runs), notes_text(r),
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
                          else f"no case matches the filter ({total} cases)")
            return
        if row.problem is not None:
            detail.update(Text(str(row.problem), style="red"))
            return
        lines = [f"{row.key}: {row.case.task}"]
        if row.marks:
            lines.append(f"latest session {row.session_id} is {' and '.join(row.marks)}: its rate covers only "
                         f"what that session ran and judged")
        if row.stale:
            lines.append(f"stale: {row.stale}")
        if self.judge_status:
            lines.append(self.judge_status)
        invalid = sum(1 for r in self.rows if r.problem)
        lines.append(f"{len(self.shown)} of {len(self.rows)} cases shown"
                     + (f", {invalid} invalid" if invalid else "") + f"; sorted by {self.sort_key}")
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
    def _header(self, event: DataTable.HeaderSelected) -> None:
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
        keys = [k for k, _ in COLUMNS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.sort_reverse = False
        self._refill()

    def action_new_case(self) -> None:
        from scarbook.tui.screens.editor import EditorScreen

        self.app.push_screen(EditorScreen(None))

    def action_edit_case(self) -> None:
        from scarbook.tui.screens.editor import EditorScreen

        row = self.current_row()
        if row is None:
            return
        if row.problem is not None:
            self.notify(str(row.problem), title="this case file is invalid — fix it in an editor",
                        severity="error")
            return
        self.app.push_screen(EditorScreen(row.case))

    def action_import_transcript(self) -> None:
        from scarbook.tui.screens.import_scar import ImportScreen

        self.app.push_screen(ImportScreen())

    def action_calibrate(self) -> None:
        from scarbook.tui.screens.calibrate import CalibrateScreen

        self.app.push_screen(CalibrateScreen(), lambda _=None: self.reload())

    def action_verify(self) -> None:
        row = self.current_row()
        if row is None or row.case is None:
            return
        if row.case.scar is None or not row.case.scar.failed_artifact:
            self.notify("this case has no scar.failed_artifact to verify against — add one in the editor",
                        severity="warning")
            return
        self.app.verify_in_background(row.case)

    def action_review(self) -> None:
        from scarbook.tui.screens.review import ReviewScreen

        row = self.current_row()
        if row is None or not row.session_id:
            self.notify("this case has no recorded runs yet — press r to run it")
            return
        self.app.push_screen(ReviewScreen(row.session_id, row.key))

    def action_sessions(self) -> None:
        from scarbook.tui.screens.sessions import SessionsScreen

        self.app.push_screen(SessionsScreen())

    def action_watch(self) -> None:
        from scarbook.tui.screens.live import LiveScreen

        if self.app.live is None:
            self.notify("no session yet — press r to run cases")
            return
        self.app.push_screen(LiveScreen(self.app.live))

    def action_launch(self) -> None:
        from scarbook.tui.screens.launch import LaunchScreen

        good = [r.case for r in self.rows if r.case is not None]
        if not good:
            self.notify("no valid cases to run — press n to file one", severity="warning")
            return
        row = self.current_row()
        selected = [row.case] if row and row.case else []
        filtered = [r.case for r in self.shown if r.case is not None]
        self.app.push_screen(LaunchScreen(selected, filtered, good), self._launched)

    def _launched(self, req) -> None:
        if req is not None:
            self.app.start_session(req)
