"""Sessions: past sessions with label, date, config and overall figures; open one to see its
case table; pick two (space) and press c to see them side by side per case."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from scarbook.cases.lineage import GIVEN_AWAY
from scarbook.errors import HistoryError, ScarbookError
from scarbook.history.judge_truth import calibration_for
from scarbook.models import SessionInfo, Usage
from scarbook.reports.table import build_report, strip_of
from scarbook.reports.versus_table import CALL_WORDS, interval_pts
from scarbook.run.versus import SessionVersus
from scarbook.session.resume import RESUMABLE
from scarbook.stats.compare import Counts
from scarbook.stats.rates import count_statuses, count_text
from scarbook.text import pct
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import keys_welcome
from scarbook.tui.messages import OpenReview, ResumeSession, SessionEnded
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.diff_bar import CALL_STYLE
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.rate_bar import interval_text, rate_bar
from scarbook.tui.widgets.strip import BAND_STYLE, MARK_STYLE, rate_text
from scarbook.views.compare import TwoSessions, compare_two_sessions
from scarbook.views.library_rows import format_started, session_marks

AGENT_KEY = "\x1f"  # a session of several agents: a row's key is case id, this, the agent's name


def ready(screen: SessionTableScreen | CompareScreen) -> None:
    """The screen shows what it read (or why it could not): the keys typed meanwhile act now."""
    screen.loaded = True
    keys_welcome(screen)


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
            cells.append([Text("●" if info.id in self.picked else ""), Text(info.id), Text(info.label),
                          Text(format_started(info.started_at)), Text(", ".join(marks) or "complete",
                                                                       style=MARK_STYLE if marks else "green"),
                          Text(str(len(info.case_ids))), Text(str(info.runs_per_case)), Text(figures),
                          Text(f"{usage.total_tokens:,}", justify="right"),
                          Text(f"${usage.cost_usd:.2f}" if usage.cost_usd else "–", justify="right"),
                          Text(info.agent), Text(config)])
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
            line.update(Text.assemble((f"{info.id}: ", "dim"), info.label or ("no label", "dim")))

    def _current(self) -> SessionInfo | None:
        table = self.query_one("#sessions-table", DataTable)
        return self.sessions[table.cursor_row] if 0 <= table.cursor_row < len(self.sessions) else None

    @on(DataTable.RowSelected, "#sessions-table")
    def _open(self) -> None:
        info = self._current()
        if info is not None:
            self.app.push_screen(SessionTableScreen(info))

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
        self.app.push_screen(CompareScreen(older, newer))


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
        ready(self)

    def _show(self, runs, rep) -> None:
        table = self.query_one("#session-table", DataTable)
        if rep.versus is not None:
            self._show_versus(table, runs, rep.versus)
        else:
            self._show_cases(table, runs, rep)
        self.sub_title = f"session {self.info.label or self.info.id}"
        self.query_one("#sessions-help", Static).update(Text(
            f"{self.info.id}{f' · {self.info.label}' if self.info.label else ''} · {self.info.state} · exit code "
            f"{rep.exit_code} · Enter reviews a case's runs"
            + (f"\n{rep.calibration_changed}" if rep.calibration_changed else "")))
        table.focus()
        ready(self)

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


def _side(rate: float | None, c: Counts) -> str:
    """One session's side of a compared case: "80% (8/10)", or without a rate its counts ("– (1 fail, 9 unjudged)")."""
    return f"{pct(rate)} ({count_text(c.passes, c.fails, c.unjudged)})"


NARROW_VERDICT = len("no detectable")  # "no detectable change" in two lines on a narrow terminal
SIDE_HEADER_MAX = len("A prompt-v12")  # a longer "A <name>" is headed "A" on a narrow terminal


def _interval(ci: tuple[float | None, float | None] | str, short: bool = False) -> str:
    """The difference's 95% interval: "-98% … -49%", or short "-98…-49%" (a text cell as it is)."""
    if isinstance(ci, str):
        return ci
    lo, hi = ci
    if lo is None or hi is None:
        return "–"
    if short:
        return f"{pct(lo, signed=True).removesuffix('%')}…{pct(hi, signed=True)}"
    return f"{pct(lo, signed=True)} … {pct(hi, signed=True)}"


class CompareScreen(HostScreen):
    """Two sessions side by side per case, with the difference and its 95% interval (scarbook.stats.compare)."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back")]

    accepts_keys = False  # until its runs are read: keys typed meanwhile wait (tui/key_queue.py)
    loaded = False

    def __init__(self, a: SessionInfo, b: SessionInfo) -> None:
        super().__init__()
        self.a, self.b = a, b

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="sessions-help")
        yield DataTable(id="compare-table", cursor_type="row")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.query_one("#sessions-help", Static).update(Text("loading…", style="dim"))
        self._read(self.app)

    @work(thread=True, exclusive=True, group="compare-load")
    def _read(self, app) -> None:
        """Both sessions' runs, read and compared off the UI thread (keys typed meanwhile wait)."""
        try:
            two = compare_two_sessions(app.project, self.a, self.b)
        except ScarbookError as exc:
            app.call_from_thread(self._failed, str(exc))
            return
        app.call_from_thread(self._show, two)

    def _failed(self, message: str) -> None:
        self.query_one("#sessions-help", Static).update(Text(message, style="bold red"))
        ready(self)

    def _show(self, two: TwoSessions) -> None:
        cmp, given_away = two.comparison, two.given_away
        la, lb = self.a.label or self.a.id, self.b.label or self.b.id
        table = self.query_one("#compare-table", DataTable)
        # (case, A, B, diff, the interval or a note in its place, p, verdict)
        rows: list[tuple[str, str, str, str, tuple[float | None, float | None] | str, str, Text]] = []
        for c in cmp.cases:
            style = {"regressed": "red", "improved": "green"}.get(c.verdict, "")
            rows.append((c.case_id, _side(c.rate_before, c.before), _side(c.rate_after, c.after),
                         pct(c.diff, signed=True), (c.lo, c.hi), "–" if c.p_value is None else f"{c.p_value:.3f}",
                         Text(c.verdict, style=style)))
        for cid in cmp.only_in_a + cmp.only_in_b:
            rows.append((cid, "", "", "", "only in " + ("A" if cid in cmp.only_in_a else "B"), "", Text("")))
        headers = [("case", "case"), ("a", f"A {la}"), ("b", f"B {lb}"), ("diff", "B − A"),
                   ("ci", "95% CI of diff"), ("p", "p"), ("verdict", "verdict")]
        wide = [[r[0], r[1], r[2], r[3], _interval(r[4]), r[5], r[6].plain] for r in rows]
        need = sum(2 + max([len(h)] + [len(w[i]) for w in wide]) for i, (_, h) in enumerate(headers))
        # 80 columns: the p-value goes (the verdict says what it means), the interval is written short,
        # a long verdict wraps in its cell and a side with a long name is headed A or B alone (the line
        # above names it: a session id in the header made the table scroll sideways); every header is whole.
        narrow = need > self.size.width - 2
        for key, label in headers:
            if narrow and key == "p":
                continue
            short = {"ci": "95% CI", **{side: side.upper() for side in "ab" if len(label) > SIDE_HEADER_MAX}}
            label = short.get(key, label) if narrow else label
            table.add_column(label, key=key, width=NARROW_VERDICT if narrow and key == "verdict" else None)
        for r in rows:
            cells = [Text(r[0]), Text(r[1]), Text(r[2]), Text(r[3]), Text(_interval(r[4], short=narrow)),
                     *([] if narrow else [Text(r[5])]), r[6]]
            table.add_row(*cells, key=r[0], height=None if narrow else 1)
        mean = "–" if cmp.mean_diff is None else pct(cmp.mean_diff, signed=True)
        help_text = Text(
            f"A = {la} ({self.a.state}) · B = {lb} ({self.b.state}) · mean change per case {mean}"
            f" · regressed: {', '.join(cmp.regressed) or 'none'} · improved: {', '.join(cmp.improved) or 'none'}")
        changed = two.changed
        if changed:  # the CLI refuses these without --force; here they are shown, with the warning
            help_text.append(f"\nchanged task or checks between the sessions (rates measure different things): "
                             f"{', '.join(changed)}", style="bold yellow")
        if given_away:
            help_text.append("\n" + GIVEN_AWAY + ", ".join(given_away), style="bold yellow")
        mismatch = two.mismatch
        if mismatch:  # the CLI refuses this pair without --force
            help_text.append("\n" + mismatch.split(" — ")[0] + " — their rates measure different checks",
                             style="bold yellow")
        self.query_one("#sessions-help", Static).update(help_text)
        table.focus()
        ready(self)
