"""The live distribution: one row per case filling in as runs finish, a histogram across cases,
overall progress. Escape asks to cancel while it runs (cancelling keeps every finished run), and goes back
once it ended: the footer says which."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, ProgressBar, Static

from scarbook.models import Decision, Versus
from scarbook.reports.versus_table import CALL_WORDS, headline, interval_pts
from scarbook.stats.head_to_head import MARGIN
from scarbook.stats.rates import count_text
from scarbook.text import cut_chars, plural, screen_text
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.messages import BackToLibrary, CancelSession, OpenReview, SessionEnded, SessionUpdated
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.diff_bar import CALL_STYLE, diff_bar
from scarbook.tui.widgets.distribution import BARS, Distribution
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.rate_bar import interval_text, rate_bar
from scarbook.tui.widgets.strip import BAND_STYLE, rate_text, strip_text
from scarbook.views.live_state import LiveSession

LIVE_COLUMNS = [("case", "case"), ("strip", "runs"), ("count", "pass/n"), ("err", "err"), ("retried", "retried"),
                ("rate", "rate"), ("ci", "95% CI"), ("bar", "0–100%, | threshold"),
                ("band", "band"), ("decided", "decided"), ("gate", "gate")]
# Rows start empty, so every column gets its final width up front. On a narrow terminal the columns
# are dropped in the reverse of LIVE_KEEP (the least useful first: the band repeats the rate's colour,
# the strip the progress bar) and the interval bar narrows to BAR_MIN before it goes. The gate's decision
# is what the screen is for: where its words do not fit (80 columns), the compact `gate` column shows it
# as a symbol (GATE_SYMBOL), kept before the interval bar, and a line under the progress bar says what
# each symbol means and how many cases it holds.
DECIDED_STYLE = {"above": "green", "below": "red", "undecided": "yellow", "no verdict": "yellow"}
GATE_SYMBOL: dict[str, str] = {Decision.ABOVE: "✓", Decision.BELOW: "✗", Decision.UNDECIDED: "?", Decision.NO_VERDICT: "–"}
LIVE_WIDTHS = {"strip": 22, "count": 7, "err": 3, "retried": 7, "rate": 5, "ci": 8, "bar": 24, "band": 6,
               "decided": max(len(d.value) for d in Decision),  # every decision whole ("no verdict" was cut at 9)
               "gate": len("gate")}
LIVE_KEEP = ["case", "rate", "count", "err", "ci", "bar", "retried", "strip", "decided", "band"]
COMPACT_KEEP = ["case", "rate", "count", "err", "ci", "gate", "bar", "retried", "strip", "band"]
BAR_MIN, CASE_MAX = 19, 24
BARS_MIN = 2  # the histogram's bars give up lines for the figures' down to this


def fit_live_columns(width: int, case_width: int, retried: bool = False) -> dict[str, int]:
    """The live table's columns that fit in `width` terminal columns, in display order, with their
    widths (each cell is padded by one column on either side). The retried column comes only once a
    run was retried after an infra error. Where the decided column's words do not fit, the compact gate
    column takes their place, before the interval bar."""
    columns = _fit_live(LIVE_KEEP, width, case_width, retried)
    return columns if "decided" in columns else _fit_live(COMPACT_KEEP, width, case_width, retried)


def _fit_live(keep: list[str], width: int, case_width: int, retried: bool) -> dict[str, int]:
    widths = {"case": min(CASE_MAX, max(4, case_width))} | LIVE_WIDTHS
    chosen, used = [], 0
    for key in keep:
        if key == "retried" and not retried:
            continue
        need = widths[key] + 2
        if key == "bar" and used + need > width and used + BAR_MIN + 2 <= width:
            widths["bar"] = width - used - 2
            need = widths["bar"] + 2
        if used + need <= width:
            chosen.append(key)
            used += need
    if case_width > widths["case"]:  # a wide terminal: the room left over goes to the ids first
        widths["case"] += min(case_width - widths["case"], max(0, width - used))
    return {key: widths[key] for key, _ in LIVE_COLUMNS if key in chosen}


# A session of several agents: one row per case and agent — its strip filling in, its rate — and on each
# candidate's row the difference from the baseline with its interval against the margin, and the decision
# once it is reached (at a look of --runs auto, or when the session ends).
VERSUS_COLUMNS = [("case", "case"), ("agent", "agent"), ("strip", "runs"), ("count", "pass/n"), ("rate", "rate"),
                  ("diff", "diff [95% CI]"), ("bar", "−100 ┊ +100 pts"), ("decided", "decision")]
VERSUS_WIDTHS = {"agent": 10, "strip": 16, "count": 7, "rate": 5, "diff": 15, "bar": 21, "decided": 9}
VERSUS_KEEP = ["case", "agent", "rate", "count", "decided", "bar", "diff", "strip"]


def fit_versus_columns(width: int, case_width: int, agent_width: int) -> dict[str, int]:
    """The comparison table's columns that fit in `width`, in display order (the least useful dropped first)."""
    widths = {"case": min(CASE_MAX, max(4, case_width))} | VERSUS_WIDTHS | {"agent": min(16, max(5, agent_width))}
    chosen, used = [], 0
    for key in VERSUS_KEEP:
        if used + widths[key] + 2 <= width:
            chosen.append(key)
            used += widths[key] + 2
    return {key: widths[key] for key, _ in VERSUS_COLUMNS if key in chosen}


def format_elapsed(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}:{s:02d}"


class LiveScreen(HostScreen):
    watches_session = True
    BINDINGS = [
        Binding("escape,q", "cancel", "Cancel session"),  # while it runs; once it ended, the same keys go back
        Binding("escape,q", "leave", "Back"),
        Binding("v", "review", "Review runs"),
        Binding("l", "library", "Library"),
    ]

    def __init__(self, live: LiveSession) -> None:
        super().__init__()
        self.live = live
        # case id -> (finished, running, decided, gate, retries, retrying) as last drawn
        self._shown: dict[str, tuple] = {}
        self.columns: dict[str, int] = {}  # the table's columns and their widths, fitted to the terminal

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="live-status")
        with Horizontal(id="live-progress"):
            yield ProgressBar(total=max(1, self.live.planned), show_eta=False, id="progress")
        yield Static("", id="live-figures")  # its own line under the bar: at 80 columns it fits whole
        yield DataTable(id="live-table", cursor_type="row")
        yield Distribution(id="histogram")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self._fit_columns(self.app.size.width)
        self.query_one("#live-table", DataTable).focus()
        self.refresh_from_live()

    @unless_removed
    def on_resize(self, event) -> None:
        if self._fit_columns(event.size.width):
            self.refresh_from_live()

    def _fit_columns(self, width: int) -> bool:
        """Rebuild the table for this width (its rows too); True when the columns changed."""
        case_width = max((len(c.id) for c in self.live.cases), default=4)
        names = self.live.agent_names
        columns = (fit_versus_columns(width - 2, case_width, max(map(len, names))) if names else
                   fit_live_columns(width - 2, case_width, retried=bool(self.live.retried_runs)))  # (the scrollbar)
        if columns == self.columns:
            return False
        self.columns = columns
        table = self.query_one("#live-table", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        labels = dict(VERSUS_COLUMNS if names else LIVE_COLUMNS)
        for key, w in columns.items():
            table.add_column(labels[key], key=key, width=w)
        for case in self.live.cases:
            if names:
                for name in names:
                    table.add_row(*self._versus_cells(case, name), key=f"{case.id}\x1f{name}")
                continue
            table.add_row(*self._cells(case), key=case.id)
        if 0 <= row < table.row_count:
            table.move_cursor(row=row)
        self._shown.clear()
        return True

    def _cells(self, case) -> list:
        s = self.live.stats(case)
        runs = self.live.runs.get(case.id, [])
        cells = {"case": Text(cut_chars(case.id, self.columns.get("case", 0))),
                 "strip": strip_text(runs, width=LIVE_WIDTHS["strip"] - 2, running=self.live.running.get(case.id, 0)),
                 "count": count_text(s.passes, s.fails, s.unjudged, short=True), "err": str(s.errors) if s.errors else "",
                 "retried": self._retried(case.id),
                 "rate": rate_text(s.rate, s.band, s.threshold), "ci": interval_text(s),
                 "bar": rate_bar(s, width=self.columns.get("bar", LIVE_WIDTHS["bar"])),
                 "band": Text(s.band if s.rate is not None else "", style=BAND_STYLE[s.band]),
                 "decided": self._decided(case.id), "gate": self._gate_symbol(case.id)}
        return [cells[key] for key in self.columns]

    def _versus_cells(self, case, name: str) -> list:
        """One agent's row of a case: its strip and rate; a candidate's also its difference from the baseline."""
        live, versus = self.live, self.live.versus()
        names = live.agent_names
        runs = [r for r in live.runs.get(case.id, []) if r.agent == name]
        s = versus.stat(name, case.id) if versus is not None else None
        cells: dict[str, Text | str] = {
            "case": Text(cut_chars(case.id, self.columns.get("case", 0)) if name == names[0] else ""),
            "agent": Text(cut_chars(name, self.columns.get("agent", 0)), style="bold" if name == names[0] else ""),
            "strip": strip_text(runs, width=VERSUS_WIDTHS["strip"] - 2),
            "count": count_text(s.passes, s.fails, s.unjudged, short=True) if s is not None else "",
            "rate": rate_text(s.rate, s.band, s.threshold) if s is not None else "",
            "diff": "", "bar": "", "decided": ""}
        if name != names[0]:
            row = versus.comparison.row(case.id, name) if versus is not None else None
            call = live.call_of(case.id, name)
            margin = versus.comparison.margin if versus is not None else MARGIN
            cells["diff"] = interval_pts(row) if row is not None else "—"
            cells["bar"] = diff_bar(row, margin, width=self.columns.get("bar", VERSUS_WIDTHS["bar"]), call=call)
            cells["decided"] = Text(CALL_WORDS.get(Versus(call), call) if call else "…",
                                    style=CALL_STYLE.get(Versus(call), "") if call else "dim")
        elif name == names[0]:
            cells["decided"] = Text("baseline", style="dim")
        return [cells[key] for key in self.columns]

    def _retried(self, case_id: str) -> Text:
        # retries started for the case's runs after infra errors; "now" while one runs
        n = self.live.retries.get(case_id, 0)
        return Text(f"{n}{' now' if self.live.retrying_in(case_id) else ''}" if n else "", style="yellow")

    def _decided(self, case_id: str) -> Text:
        decision = self.live.decision_of(case_id)
        return Text(decision, style=DECIDED_STYLE.get(decision, ""))

    def _gate_symbol(self, case_id: str) -> Text:
        decision = self.live.decision_of(case_id)
        return Text(GATE_SYMBOL.get(decision, ""), style=DECIDED_STYLE.get(decision, ""))

    def _gate_line(self) -> str:
        """Beside the compact gate column: each symbol shown, with its meaning and how many cases it holds,
        and the cases still to decide ("" before any decision: no symbol to explain)."""
        counts = Counter(self.live.decision_of(c.id) for c in self.live.cases)
        shown = [f"{symbol} {counts[word]} {word}" for word, symbol in GATE_SYMBOL.items() if counts[word]]
        if not shown:
            return ""
        pending = f" · {counts['']} not decided yet" if counts[""] else ""
        return "gate: " + " · ".join(shown) + pending

    def refresh_from_live(self) -> None:
        live = self.live
        if live.retried_runs and "retried" not in self.columns:  # the first retry: its column comes
            self._fit_columns(self.app.size.width)
        table = self.query_one("#live-table", DataTable)
        keys = list(self.columns)
        if live.agent_names:
            self._refresh_versus(table, keys)
        for case in live.cases if not live.agent_names else []:
            now = (len(live.runs.get(case.id, [])), live.running.get(case.id, 0), live.decided.get(case.id),
                   live.gate.get(case.id), live.retries.get(case.id, 0), live.retrying_in(case.id))
            if self._shown.get(case.id) == now:
                continue  # only rows that changed since the last tick are redrawn
            self._shown[case.id] = now
            for key, value in zip(keys, self._cells(case), strict=False):
                table.update_cell(case.id, key, value)
        bar = self.query_one("#progress", ProgressBar)
        saved = live.runs_saved
        # An adaptive session that ended by deciding every case is complete: its bar is full.
        total = live.finished_runs if saved else live.planned
        bar.update(total=max(1, total), progress=live.finished_runs)
        # Wraps on a terminal too narrow for it rather than being cut (#live-figures is height: auto).
        figures = (f"{live.finished_runs}/{total} runs"
                   + (f" ({plural(saved, 'run')} saved by adaptive stopping)" if saved else "")
                   + f" · {format_elapsed(live.elapsed)} elapsed · {plural(live.errors, 'error')}"
                   + f" · {live.tokens:,} {'token' if live.tokens == 1 else 'tokens'}")
        if live.cost_usd:
            figures += f" · ${live.cost_usd:.4f}"
        if live.retried_line():
            figures += f" · {live.retried_line()}"
        if live.nodes:
            figures += f" · on {len(live.nodes)} Ray node{'s' if len(live.nodes) != 1 else ''}" + (
                f", {live.infra_retried} retried after a lost worker" if live.infra_retried else "")
        gate = self._gate_line() if "gate" in self.columns else ""
        room = self.query_one("#live-figures", Static).content_region.width or self.app.size.width - 2
        if gate:  # on the figures' line where it fits whole, else on its own under it
            figures += (" · " if len(figures) + 3 + len(gate) <= room else "\n") + gate
        shown_figures = Text(figures)
        self.query_one("#live-figures", Static).update(shown_figures)
        label = screen_text(live.info.label, one_line=True) if live.info and live.info.label else "unlabelled"
        if not live.done:
            state = "running — Escape to cancel"
        else:
            state = (live.info.state if live.info else "ended") + " — Enter reviews a case's runs, Escape goes back"
        partial = " · judge checks skipped (no API key)" if live.info and live.info.partial else ""
        status = f"session [{label}] {state}{partial}"
        if live.corrected_line():
            status += f"\n{live.corrected_line()}"
        if live.margin_line():
            status += f"\n{live.margin_line()}"
        if live.abort_message:
            status += f"\n{screen_text(live.abort_message)}" + _resume_words(live)
        final = live.final_versus
        if final is not None:  # a session of several agents, ended: each candidate's quality and cost together
            status += "".join(f"\n{headline(final, name)}" for name in final.candidates)
        shown_status = Text(status)
        self.query_one("#live-status", Static).update(shown_status)
        versus = live.versus()
        shown = [versus.stat(versus.baseline, c.id) for c in live.cases] if versus is not None else \
            [live.stats(c) for c in live.cases]  # (a session of several agents: the baseline's rates)
        # Each line the status and the figures take past their first comes out of the histogram's bars, not out
        # of the table's rows (at 80x24 the gate's counts on a line of their own hid the table's last row).
        extra = sum(len(block.wrap(self.app.console, max(1, room))) - 1 for block in (shown_status, shown_figures))
        self.query_one("#histogram", Distribution).show([s for s in shown if s is not None], live.config.threshold,
                                                        bars=max(BARS_MIN, BARS - extra))

    def _refresh_versus(self, table: DataTable, keys: list[str]) -> None:
        """Redraw the rows of the cases with a run finished (or a call reached) since the last tick."""
        live = self.live
        for case in live.cases:
            now = (len(live.runs.get(case.id, [])), tuple(live.call_of(case.id, n) for n in live.agent_names), live.done)
            if self._shown.get(case.id) == now:
                continue
            self._shown[case.id] = now
            for name in live.agent_names:
                for key, value in zip(keys, self._versus_cells(case, name), strict=False):
                    table.update_cell(f"{case.id}\x1f{name}", key, value)

    @on(DataTable.RowSelected, "#live-table")
    def _row_selected(self) -> None:
        """Enter on a case row: the table takes the key and says so with this message."""
        self.action_review()

    @on(SessionUpdated)
    @on(SessionEnded)
    def _session_changed(self, message: SessionUpdated | SessionEnded) -> None:
        if message.state is self.live:
            self.refresh_from_live()
            if self.live.done:
                self.refresh_bindings()  # the footer offers Back, no longer Cancel

    @property
    def running(self) -> bool:
        return not self.live.done and self.app.live is self.live

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("cancel", "leave"):
            return self.running == (action == "cancel")
        return True

    def action_leave(self) -> None:
        self.app.pop_screen()

    def action_cancel(self) -> None:
        if not self.running:  # ended between the key and this
            self.app.pop_screen()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.post_message(CancelSession())

        self.app.push_screen(ConfirmScreen("Cancel the session? Running agents are killed; "
                                           "finished runs are kept.", yes="Cancel session", no="Keep running"),
                             answered)

    def action_library(self) -> None:
        self.app.post_message(BackToLibrary())

    def action_review(self) -> None:
        table = self.query_one("#live-table", DataTable)
        if self.live.info is None or not self.live.cases:
            return
        case = self.live.cases[table.cursor_row // max(1, len(self.live.agent_names))]  # (a row per agent)
        self.app.post_message(OpenReview(self.live.info.id, case.id))


def _resume_words(live: LiveSession) -> str:
    """Under a session the judge's rejected key aborted, when `scarbook resume` can finish it: how the TUI does."""
    from scarbook.session.resume import resume_hint  # only for an aborted session: not on the screen's way in

    if live.info is None or not live.done or not resume_hint(live.info):
        return ""
    return "\nits finished runs are kept: once the key is fixed, r on the sessions screen (h) runs the rest of it"
