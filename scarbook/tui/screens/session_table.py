"""One session's case table, the report the CLI prints: a row per case (a session of several agents: a row per case
and agent, each candidate's difference and decision, from run/versus.py as `scarbook report` prints it); Enter asks
the App for the runs of the case under the cursor (OpenReview)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from scarbook.errors import ScarbookError
from scarbook.history.judge_truth import calibration_for
from scarbook.models import SessionInfo, SessionState
from scarbook.reports.table import build_report, strip_of
from scarbook.reports.versus_table import CALL_WORDS, interval_pts
from scarbook.run.versus import SessionVersus
from scarbook.stats.rates import count_text
from scarbook.text import screen_text
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import keys_welcome
from scarbook.tui.messages import OpenReview
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.diff_bar import CALL_STYLE
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.rate_bar import interval_text, rate_bar
from scarbook.tui.widgets.strip import BAND_STYLE, rate_text

AGENT_KEY = "\x1f"  # a session of several agents: a row's key is case id, this, the agent's name

CASE_COLUMNS = [("case", "case"), ("count", "pass/total"), ("err", "err"), ("rate", "rate"), ("ci", "95% CI"),
                ("bar", "interval vs threshold"), ("band", "band"), ("strip", "runs")]
NARROW_DROPS = ("band", "strip")  # in this order, while the session's table is wider than the terminal


class SessionTableScreen(HostScreen):
    """One session's case x pass-rate table (the same report the CLI prints)."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    accepts_keys = False  # until its runs are read: keys typed meanwhile wait (tui/key_queue.py)
    loaded = False

    def __init__(self, info: SessionInfo) -> None:
        super().__init__()
        self.info = info

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="sessions-help")
        yield DataTable(id="session-table", cursor_type="row")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.query_one("#sessions-help", Static).update(Text("loading…", style="dim"))
        self._read(self.app)

    @work(thread=True, exclusive=True, group="session-table-load")
    def _read(self, app) -> None:
        """The session's runs and the cases, read off the UI thread (keys typed meanwhile wait for them)."""
        project = app.project
        try:
            runs = project.history.runs(self.info.id)
            cases = project.load_cases().by_id()
            rep = build_report(self.info, runs, cases, project.config,
                               calibration_for(project.history, project.workspaces_dir, project.config.judge, cases))
        except ScarbookError as exc:
            app.call_from_thread(self._failed, str(exc))
            return
        app.call_from_thread(self._show, runs, rep)

    def _failed(self, message: str) -> None:
        self.query_one("#sessions-help", Static).update(Text(message, style="bold red"))
        self._ready()

    def _show(self, runs, rep) -> None:
        table = self.query_one("#session-table", DataTable)
        if rep.versus is not None:
            self._show_versus(table, runs, rep.versus)
        else:
            self._show_cases(table, runs, rep)
        label = screen_text(self.info.label, one_line=True)  # a session.json is within an agent's reach
        self.sub_title = f"session {label or self.info.id}"
        self.query_one("#sessions-help", Static).update(Text(
            f"{self.info.id}{f' · {label}' if label else ''} · {self.info.state} · exit code "
            f"{rep.exit_code} · Enter reviews a case's runs"
            + (f"\n{screen_text(self.info.note)}" if self.info.state == SessionState.JUDGING and self.info.note else "")
            + (f"\n{rep.calibration_changed}" if rep.calibration_changed else "")))
        table.focus()
        self._ready()

    def _ready(self) -> None:
        """The screen shows what it read (or why it could not): the keys typed meanwhile act now."""
        self.loaded = True
        keys_welcome(self)

    def _show_cases(self, table: DataTable, runs, rep) -> None:
        """A row per case; where the table would scroll sideways (80 columns), the band goes, then the runs' strip,
        as on the live screen: the rate is coloured by its band, and Enter reviews the runs."""
        rows = {s.case_id: {"case": Text(s.case_id), "count": Text(count_text(s.passes, s.fails, s.unjudged)),
                            "err": Text(str(s.errors)), "rate": rate_text(s.rate, s.band, s.threshold),
                            "ci": Text(interval_text(s)), "bar": rate_bar(s), "band": Text(s.band, style=BAND_STYLE[s.band]),
                            "strip": Text(strip_of([r for r in runs if r.case_id == s.case_id]))} for s in rep.stats}
        need = {key: 2 + max([cell_len(label)] + [row[key].cell_len for row in rows.values()])
                for key, label in CASE_COLUMNS}
        shown = [key for key, _ in CASE_COLUMNS]
        for key in NARROW_DROPS:
            if sum(need[k] for k in shown) <= self.app.size.width - 2:  # (2: the vertical scrollbar)
                break
            shown.remove(key)
        for key, label in CASE_COLUMNS:
            if key in shown:
                table.add_column(label, key=key)
        for case_id, row in rows.items():
            table.add_row(*(row[key] for key in shown), key=case_id)

    @staticmethod
    def _show_versus(table: DataTable, runs, versus: SessionVersus) -> None:
        """A session of several agents (eval --agents): a row per case and agent, its runs only; on each
        candidate's row the difference from the baseline with its interval and the decision (run/versus.py,
        as `scarbook report` prints it)."""
        for key, label in [("case", "case"), ("agent", "agent"), ("count", "pass/total"), ("err", "err"),
                           ("rate", "rate"), ("ci", "95% CI"), ("diff", "diff [95% CI] pts"), ("decision", "decision"),
                           ("strip", "runs")]:
            table.add_column(label, key=key)
        for case_id in dict.fromkeys(s.case_id for s in versus.stats[versus.baseline]):
            for name in versus.names:
                s = versus.stat(name, case_id)
                row = versus.comparison.row(case_id, name) if name != versus.baseline else None
                decision = (Text("baseline", style="dim") if row is None else
                            Text(CALL_WORDS[row.call], style=CALL_STYLE.get(row.call, "")))
                mine = [r for r in runs if r.case_id == case_id and r.agent == name]
                table.add_row(Text(case_id if name == versus.baseline else ""), Text(name),
                              Text(count_text(s.passes, s.fails, s.unjudged) if s else ""),
                              Text(str(s.errors) if s else ""),
                              rate_text(s.rate, s.band, s.threshold) if s else Text(""),
                              Text(interval_text(s) if s else ""), Text(interval_pts(row) if row else ""), decision,
                              Text(strip_of(mine)), key=f"{case_id}{AGENT_KEY}{name}")

    @on(DataTable.RowSelected, "#session-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        case_id = str(event.row_key.value).split(AGENT_KEY)[0]  # (a session of several agents: a row per agent)
        self.app.post_message(OpenReview(self.info.id, case_id))
