"""The live distribution: one row per case filling in as runs finish, a histogram across cases,
overall progress. Escape asks to cancel; cancelling keeps every finished run."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static

from scarbook.live_state import LiveSession
from scarbook.wording import plural
from scarbook.tui.messages import SessionEnded, SessionUpdated
from scarbook.tui.widgets.distribution import Distribution
from scarbook.tui.widgets.rate_bar import interval_text, rate_bar
from scarbook.tui.widgets.strip import BAND_STYLE, rate_text, strip_text

LIVE_COLUMNS = [("case", "case"), ("strip", "runs"), ("count", "pass/total"), ("err", "err"),
                ("rate", "rate"), ("ci", "95% CI"), ("bar", "0%  interval  |threshold  100%"),
                ("band", "band"), ("decided", "decided")]
# Rows start empty, so columns that fill in later get their final width up front.
LIVE_WIDTHS = {"strip": 22, "count": 10, "rate": 5, "ci": 8, "band": 7, "decided": 10}
DECIDED_STYLE = {"above": "green", "below": "red", "undecided": "yellow"}


def format_elapsed(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}:{s:02d}"


class LiveScreen(Screen):
    watches_session = True
    BINDINGS = [
        Binding("escape", "leave", "Cancel / back"),
        Binding("v", "review", "Review runs"),
        Binding("l", "library", "Library"),
    ]

    def __init__(self, live: LiveSession) -> None:
        super().__init__()
        self.live = live
        self._shown: dict[str, tuple[int, int]] = {}  # case id -> (finished, running) last drawn

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="live-status")
        with Horizontal(id="live-progress"):
            yield ProgressBar(total=max(1, self.live.planned), show_eta=False, id="progress")
            yield Static("", id="live-figures")
        yield DataTable(id="live-table", cursor_type="row")
        yield Distribution(id="histogram")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#live-table", DataTable)
        for key, label in LIVE_COLUMNS:
            table.add_column(label, key=key, width=LIVE_WIDTHS.get(key))
        for case in self.live.cases:
            table.add_row(*self._cells(case), key=case.id)
        table.focus()
        self.refresh_from_live()

    def _cells(self, case) -> list:
        s = self.live.stats(case)
        runs = self.live.runs.get(case.id, [])
        return [Text(case.id), strip_text(runs, width=20, running=self.live.running.get(case.id, 0)),
                f"{s.passes}/{s.judged}", str(s.errors) if s.errors else "", rate_text(s.rate, s.band),
                interval_text(s), rate_bar(s), Text(s.band if s.rate is not None else "", style=BAND_STYLE[s.band]),
                self._decided(case.id)]

    def _decided(self, case_id: str) -> Text:
        decision = self.live.decided.get(case_id, "")
        return Text(decision, style=DECIDED_STYLE.get(decision, ""))

    def refresh_from_live(self) -> None:
        live = self.live
        table = self.query_one("#live-table", DataTable)
        keys = [k for k, _ in LIVE_COLUMNS]
        for case in live.cases:
            now = (len(live.runs.get(case.id, [])), live.running.get(case.id, 0), live.decided.get(case.id))
            if self._shown.get(case.id) == now:
                continue  # only rows that changed since the last tick are redrawn
            self._shown[case.id] = now
            for key, value in zip(keys, self._cells(case)):
                table.update_cell(case.id, key, value)
        bar = self.query_one("#progress", ProgressBar)
        saved = live.runs_saved
        # An adaptive session that ended by deciding every case is complete: its bar is full.
        total = live.finished_runs if saved else live.planned
        bar.update(total=max(1, total), progress=live.finished_runs)
        figures = (f"{live.finished_runs}/{total} runs"
                   + (f" ({plural(saved, 'run')} saved by adaptive stopping)" if saved else "")
                   + f" · elapsed {format_elapsed(live.elapsed)} · errors {live.errors} · tokens {live.tokens:,}")
        if live.cost_usd:
            figures += f" · ${live.cost_usd:.4f}"
        if live.nodes:
            figures += f" · on {len(live.nodes)} Ray node{'s' if len(live.nodes) != 1 else ''}" + (
                f", {live.infra_retried} retried after a lost worker" if live.infra_retried else "")
        self.query_one("#live-figures", Static).update(Text(figures))
        label = live.info.label if live.info and live.info.label else "unlabelled"
        if not live.done:
            state = "running — Escape to cancel"
        else:
            state = (live.info.state if live.info else "ended") + " — Enter reviews a case's runs, Escape goes back"
        partial = " · judge checks skipped (no API key)" if live.info and live.info.partial else ""
        status = f"session [{label}] {state}{partial}"
        if live.abort_message:
            status += f"\n{live.abort_message}"
        self.query_one("#live-status", Static).update(Text(status))
        self.query_one("#histogram", Distribution).show([live.stats(c) for c in live.cases],
                                                         live.config.threshold)

    @on(DataTable.RowSelected, "#live-table")
    def _row_selected(self) -> None:
        """Enter on a case row: the table takes the key and says so with this message."""
        self.action_review()

    @on(SessionUpdated)
    @on(SessionEnded)
    def _session_changed(self, message: SessionUpdated | SessionEnded) -> None:
        if message.state is self.live:
            self.refresh_from_live()

    def action_leave(self) -> None:
        from scarbook.tui.screens.confirm import ConfirmScreen

        if self.live.done or self.app.live is not self.live:
            self.app.pop_screen()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.cancel_session()

        self.app.push_screen(ConfirmScreen("Cancel the session? Running agents are killed; "
                                           "finished runs are kept.", yes="Cancel session", no="Keep running"),
                             answered)

    def action_library(self) -> None:
        from scarbook.tui.screens.library import LibraryScreen

        while len(self.app.screen_stack) > 1 and not isinstance(self.app.screen, LibraryScreen):
            self.app.pop_screen()

    def action_review(self) -> None:
        from scarbook.tui.screens.review import ReviewScreen

        table = self.query_one("#live-table", DataTable)
        if self.live.info is None or not self.live.cases:
            return
        case = self.live.cases[table.cursor_row]
        self.app.push_screen(ReviewScreen(self.live.info.id, case.id))
