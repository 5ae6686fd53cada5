"""Sessions: past sessions with label, date, config and overall figures. Enter asks the App for one session's case
table (screens/session_table.py), space picks two and c asks for them side by side (screens/compare.py); r asks it to
resume an interrupted, cancelled or aborted one."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from scarbook.errors import HistoryError
from scarbook.models import SessionInfo, Usage
from scarbook.session.resume import RESUMABLE
from scarbook.stats.rates import count_statuses
from scarbook.text import screen_text
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.messages import OpenComparison, OpenSession, ResumeSession, SessionEnded
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.strip import MARK_STYLE
from scarbook.views.library_rows import format_started, session_marks

SESSION_COLUMNS = [("pick", " "), ("id", "session"), ("label", "label"), ("started", "started"),
                   ("state", "state"), ("cases", "cases"), ("n", "runs/case"), ("figures", "pass/fail/err/unj"),
                   ("tokens", "tokens"), ("cost", "cost"), ("agent", "agent"), ("config", "config")]
IN_VIEW = ("pick", "id", "label", "started", "state", "cases", "n", "figures")  # the label gives way to these
LABEL_MIN = 12  # a label's cells when the terminal is narrow: the rest is cut with "…" (whole below the table)


def label_width(cells: list[list[Text]], width: int) -> int:
    """The label column's width: what the columns of IN_VIEW leave of `width` (each cell padded by 1 on both sides,
    2 for the scrollbar), at least LABEL_MIN and at most the longest label. A label may be 120 characters long
    (session/plan.MAX_LABEL_CHARS): whole, it pushed the state and the figures off an 80-column screen."""
    keys = [key for key, _ in SESSION_COLUMNS]
    need = {key: cell_len(header) for key, header in SESSION_COLUMNS}
    for row in cells:
        for key, cell in zip(keys, row, strict=True):
            need[key] = max(need[key], cell.cell_len)
    others = sum(2 + need[key] for key in IN_VIEW if key != "label")
    return max(LABEL_MIN, min(need["label"], width - 2 - others - 2))


class SessionsScreen(HostScreen):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back"), Binding("space", "pick", "Pick for compare"),
                Binding("c", "compare", "Compare the two picked"), Binding("r", "resume", "Resume")]
    watches_session = True  # a session that ends (a resumed one) is read again: its state, its figures

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[SessionInfo] = []
        self.picked: list[str] = []
        self.labels_cut = False  # the label column cuts a label: the highlighted one is shown whole below

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("Enter opens a session · space picks two · c compares them side by side · r resumes an "
                          "interrupted, cancelled or aborted one · state: complete, or what makes its figures partial "
                          "(cancelled, interrupted, budget-stopped, crashed, judge skipped) · unj = unjudged runs"),
                     id="sessions-help")
        yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="session-label")  # the highlighted session's label whole, when the column cuts one
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.query_one("#session-label", Static).display = False
        table = self.query_one("#sessions-table", DataTable)
        for key, label in SESSION_COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self._load()

    @work(thread=True, exclusive=True, group="sessions-load")
    def _load(self) -> None:
        history = self.app.project.history
        rows = []
        for info in history.sessions():
            try:
                runs = history.runs(info.id, info=info)  # a bad file or line is left out (said in the library)
            except HistoryError:
                continue
            usage = Usage()
            for r in runs:
                usage.add(r.agent_usage)
                usage.add(r.judge_usage)
            rows.append((info, count_statuses(runs), usage))
        self.app.call_from_thread(self._show, rows)

    @on(SessionEnded)
    def _session_ended(self) -> None:
        self._load()

    def _show(self, rows) -> None:
        table = self.query_one("#sessions-table", DataTable)
        table.clear()
        self.sessions = [info for info, _, _ in rows]
        current = self.app.project.config.fingerprint()
        cells = []
        for info, counts, usage in rows:
            config = info.fingerprint + ("" if info.fingerprint == current else " (differs)")
            marks = session_marks(info)
            figures = f"{counts['pass']}/{counts['fail']}/{counts['error']}/{counts['unjudged']}"
            cells.append([Text("●" if info.id in self.picked else ""), Text(info.id), Text(screen_text(info.label, one_line=True)),
                          Text(format_started(info.started_at)), Text(", ".join(marks) or "complete",
                                                                       style=MARK_STYLE if marks else "green"),
                          Text(str(len(info.case_ids))), Text(str(info.runs_per_case)), Text(figures),
                          Text(f"{usage.total_tokens:,}", justify="right"),
                          Text(f"${usage.cost_usd:.2f}" if usage.cost_usd else "–", justify="right"),
                          Text(screen_text(info.agent, one_line=True)), Text(config)])
        width = label_width(cells, self.app.size.width)
        self.labels_cut = any(row[2].cell_len > width for row in cells)
        for info, row in zip(self.sessions, cells, strict=True):
            row[2].truncate(width, overflow="ellipsis")
            table.add_row(*row, key=info.id)
        self._show_label()
        self.refresh_bindings()  # r (resume) is offered on the row under the cursor where it applies

    def _show_label(self) -> None:
        """Under the table, the highlighted session's label whole, while the label column cuts one."""
        line = self.query_one("#session-label", Static)
        line.display = self.labels_cut
        info = self._current()
        if self.labels_cut and info is not None:
            line.update(Text.assemble((f"{info.id}: ", "dim"), screen_text(info.label) or ("no label", "dim")))

    def _current(self) -> SessionInfo | None:
        table = self.query_one("#sessions-table", DataTable)
        return self.sessions[table.cursor_row] if 0 <= table.cursor_row < len(self.sessions) else None

    @on(DataTable.RowSelected, "#sessions-table")
    def _open(self) -> None:
        info = self._current()
        if info is not None:
            self.app.post_message(OpenSession(info))

    @on(DataTable.RowHighlighted, "#sessions-table")
    def _moved(self) -> None:
        self._show_label()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Resume is shown (and acts) only on an interrupted, cancelled or aborted session (session/resume.RESUMABLE):
        the others miss no runs, or cannot be taken up."""
        if action == "resume":
            info = self._current()
            return info is not None and info.state in RESUMABLE
        return True

    def action_resume(self) -> None:
        """The runs the session misses, under its own id, on the live screen (the App prepares them as
        `scarbook resume` does; a refusal is a notification in session/resume.py's words)."""
        info = self._current()
        if info is not None and info.state in RESUMABLE:
            self.app.post_message(ResumeSession(info.id))

    def action_pick(self) -> None:
        info = self._current()
        if info is None:
            return
        if info.id in self.picked:
            self.picked.remove(info.id)
        else:
            self.picked = (self.picked + [info.id])[-2:]
        table = self.query_one("#sessions-table", DataTable)
        for s in self.sessions:
            table.update_cell(s.id, "pick", Text("●" if s.id in self.picked else ""))

    def action_compare(self) -> None:
        if len(self.picked) != 2:
            self.notify("pick two sessions with space first", severity="warning")
            return
        by_id = {s.id: s for s in self.sessions}
        older, newer = sorted((by_id[i] for i in self.picked), key=SessionInfo.start_order)
        self.app.post_message(OpenComparison(older, newer))
