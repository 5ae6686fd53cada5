"""Two sessions side by side per case (the older one A, the newer B), with the difference and its 95% interval
(scarbook.stats.compare through views/compare.py, as `scarbook diff` compares them), and what makes the pair
measure different things."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from scarbook.cases.lineage import GIVEN_AWAY
from scarbook.errors import ScarbookError
from scarbook.models import SessionInfo
from scarbook.stats.compare import Counts
from scarbook.stats.rates import count_text
from scarbook.text import pct
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import keys_welcome
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.mount_safe import Header
from scarbook.views.compare import TwoSessions, compare_two_sessions


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
        self._ready()

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
        self._ready()

    def _ready(self) -> None:
        """The screen shows what it read (or why it could not): the keys typed meanwhile act now."""
        self.loaded = True
        keys_welcome(self)
