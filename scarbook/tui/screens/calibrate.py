"""Calibrate the judge: grade judged rubric items yourself, then see how often the judge agreed.

One item at a time: the case id, the rubric item and the artifact the judge graded — never the
judge's verdict or reason, so the human grade is not anchored on it. p = PASS, f = FAIL, s = skip,
escape stops early. Each answer is stored at once (`CalibrationStore.save_label`), so stopping or
quitting keeps what was graded. An item drawn that you labelled before (under another judge) is not asked
again: your label is paired with this judge's verdict at once and counted as "labelled before". Then the reveal: agreement rate and Cohen's kappa per case and
overall (from `scarbook.judge.calibrate.agreement`), the disagreements side by side, and the result is
recorded against the current judge — model, prompt and sampling (`record_calibration`) — which is what the
library's "last calibrated" figure and its staleness read. Only when the judge in use graded the items: a draw from
another judge's verdicts (the judge changed, nothing rejudged yet) is said, not recorded as this judge's.

The sampling, storage and statistics live in `scarbook.judge.calibrate`; this screen only shows and asks.
"""

from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from scarbook.errors import ScarbookError
from scarbook.history.judge_truth import labelling_pool, measure, recorded_report
from scarbook.judge.calibrate import (
    CalibrationItem,
    CalibrationLabel,
    CalibrationReport,
    agreement,
    judged_items,
    pick_items,
)
from scarbook.judge.label_store import CalibrationStore
from scarbook.judge.unjudged import never_judged_words, unjudged_reasons
from scarbook.judge.verdict import VERDICTS
from scarbook.stats.rates import wilson
from scarbook.text import screen_text
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import drop_held_keys, keys_welcome
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.mount_safe import Header

NO_ITEMS = "no judged rubric items to grade — run cases with llm_judge checks first"
ALL_LABELED = ("no judged rubric items left to grade — all {n} labeled item(s) already have your grade; "
               "run cases with llm_judge checks to judge new artifacts")
NO_LABELS = "no labels given — nothing to compare with the judge"
NEVER_JUDGED = "{why}. Grade its verdicts here once it has graded some."
OTHER_JUDGES = ("judge {model} graded none of these items (run or rejudge the cases with it): your labels stand beside "
                "the verdicts of the judges that did, and its own calibration is not recorded from them")
SKIP = "SKIP"  # an item passed over (s) in this sitting's answers
FEW_LABELS = 20  # below this many labels, agreement and kappa swing widely from one label to the next
HELP = ("p PASS · f FAIL · s skip · u back one item (grade it again) · escape stop and see the agreement · "
        "arrows/page keys scroll the artifact")


def fmt_agreement(x: float, n: int) -> str:
    """"67% (21–94%)": the agreement rate with its 95% Wilson interval over n labels."""
    if math.isnan(x) or n == 0:
        return "n/a"
    lo, hi = wilson(round(x * n), n)
    return f"{x:.0%} ({100 * lo:.0f}–{100 * hi:.0f}%)"


def fmt_kappa(x: float) -> str:
    # Same wording as `format_report`: a NaN kappa means both raters used one and the same class.
    return "n/a (one class)" if math.isnan(x) else f"{x:.2f}"


def report_table(report: CalibrationReport) -> Table:
    table = Table(title="agreement with the judge", title_justify="left", expand=False)
    table.add_column("case")
    table.add_column("n", justify="right")
    table.add_column("agreement", justify="right")
    table.add_column("kappa", justify="right")
    for case, (agree, kappa, n) in report.per_case.items():
        table.add_row(case, str(n), fmt_agreement(agree, n), fmt_kappa(kappa))
    agree, kappa, n = report.overall
    table.add_section()
    table.add_row(Text("overall", style="bold"), str(n), Text(fmt_agreement(agree, n), style="bold"),
                  Text(fmt_kappa(kappa), style="bold"))
    return table


def disagreements_table(labels: list[CalibrationLabel]) -> Table:
    table = Table(title=f"disagreements ({len(labels)}): human vs judge", title_justify="left", expand=True)
    table.add_column("case", no_wrap=True)
    table.add_column("rubric item", ratio=2)
    table.add_column("artifact (start)", ratio=2, no_wrap=True, overflow="ellipsis")
    table.add_column("human", no_wrap=True)
    table.add_column("judge", no_wrap=True)
    table.add_column("judge's reason", ratio=3)
    for lab in labels:  # each cell a Text: a str cell is read as markup, and the reason may quote the artifact
        start = next((line for line in lab.artifact.splitlines() if line.strip()), "")
        table.add_row(*(Text(screen_text(cell)) for cell in (lab.case_id, lab.item, start, lab.human_verdict,
                                                              lab.judge_verdict, lab.judge_reason or "–")))
    return table


class CalibrateScreen(HostScreen):
    BINDINGS = [Binding("p", "grade('PASS')", "PASS"),
                Binding("f", "grade('FAIL')", "FAIL"),
                Binding("s", "skip", "Skip"),
                Binding("u", "back", "Back one item"),
                Binding("escape,q", "stop", "Stop / back")]
    KEYS_NOT_HELD = ("escape",)  # while loading, escape leaves at once (tui/key_queue.py)
    # Screen-scoped layout only (scarbook.tcss belongs to the app): the artifact pane takes the rest.
    def __init__(self, sample: int = 20, seed: int = 0) -> None:
        super().__init__()
        self.sample, self.seed = sample, seed
        self.store: CalibrationStore | None = None
        self.items: list[CalibrationItem] = []
        self.position = 0
        self.labels: list[CalibrationLabel] = []
        self.skipped = 0
        self.loaded = False  # items picked (tests wait on this)
        # Keys typed while calibration.json and the history are read wait in the App's key queue
        # (tui/key_queue.py) and act once the first item is shown: a `p` typed early grades it.
        self.accepts_keys = False
        self.left = False  # unmounted (the store is closed); `gone` is what the load worker checks
        self.revealed = False  # grading over: the report is on screen
        self.report: CalibrationReport | None = None
        self.judged: list[CalibrationItem] = []  # every judged item in history (read with the items)
        self.known = 0  # items drawn you labelled before: paired with this judge's verdicts, not asked
        self.answers: dict[int, str] = {}  # position: PASS, FAIL or SKIP, this sitting's (u goes back and changes it)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(HELP, style="dim"), id="calibrate-help")
        yield Static("loading judged runs…", id="calibrate-progress")
        yield Static("", id="calibrate-item")
        with VerticalScroll(id="calibrate-artifact"):
            yield Static("", id="calibrate-artifact-text")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.sub_title = "calibrate the judge"
        self.query_one("#calibrate-artifact").border_title = "artifact the judge graded"
        self._load(self.app)

    @property
    def gone(self) -> bool:
        """Left already: popping (escape, the palette going back to the library) takes the screen off the
        stack at once, while its unmount comes a few messages later; a read that ends in between must see
        it gone, not only once `on_unmount` ran."""
        return self.left or self not in self.app.screen_stack

    def on_unmount(self) -> None:
        self.left = True
        if self.store is not None:
            self.store.close()
            self.store = None

    @work(thread=True, exclusive=True, group="calibrate-load")
    def _load(self, app) -> None:
        """calibration.json (the labels given before) and the history, read off the UI thread. The store
        opened here is used only on the UI thread once it is handed over by `_loaded`. `app` is passed in:
        `self.app` is gone once the screen is left, and the store must still reach `_loaded` to be closed."""
        store = CalibrationStore(app.project.workspaces_dir / "history" / "calibration.json")
        try:
            labels = store.labels()
        except (ScarbookError, TypeError) as exc:  # damaged calibration.json: said on the screen, the file left as it is
            store.close()
            app.call_from_thread(self._load_failed, str(exc))
            return
        runs = list(app.project.history.iter_all_runs())
        self.judged = judged_items(runs)  # the strata's sizes, to weight the labels back at reveal
        judge, done = labelling_pool(labels, self.judged, app.project.config.judge)
        drawn = pick_items(runs, sample=self.sample, seed=self.seed, exclude=done, judge=judge)
        if self.gone:  # left while history was read: nothing written for a screen no one sees
            store.close()
            return
        paired, items = store.pair_known(drawn)  # (the store is this worker's until _loaded takes it)
        never_judged = "" if self.judged else never_judged_words(unjudged_reasons(runs),
                                                                  app.project.config.judge.api_key_env)
        app.call_from_thread(self._loaded, items, len({lab.key for lab in labels}), never_judged, store, paired)

    def _loaded(self, items: list[CalibrationItem], already_labeled: int, never_judged: str = "",
                store: CalibrationStore | None = None, paired: list[CalibrationLabel] | None = None) -> None:
        if self.gone:  # the screen was left while the history was read
            if store is not None:
                store.close()
            return
        self.store = store if store is not None else self.store
        self.items, self.loaded = items, True
        self.labels, self.known = list(paired or ()), len(paired or ())
        self._say_migrated()
        self.call_after_refresh(self._ready)
        if not items and self.known:  # every item drawn you labelled before: nothing to ask, the agreement shown
            self.reveal()
            return
        if not items:
            if already_labeled:
                self._finish_with(ALL_LABELED.format(n=already_labeled))
            elif never_judged:
                self._finish_with(NEVER_JUDGED.format(why=never_judged))
            else:
                self._finish_with(NO_ITEMS)
            return
        self._show_item()
        self.query_one("#calibrate-artifact", VerticalScroll).focus()

    def _load_failed(self, message: str) -> None:
        if self.gone:
            return
        self.loaded = True
        self._finish_with(message)
        self.call_after_refresh(self._ready)

    def _ready(self) -> None:
        """The first item (or the reason there is none) is on screen: the keys typed meanwhile act now."""
        keys_welcome(self)

    # -- grading ------------------------------------------------------------------------------
    @property
    def current(self) -> CalibrationItem | None:
        if self.revealed or not self.loaded or self.position >= len(self.items):
            return None
        return self.items[self.position]

    def _show_item(self) -> None:
        item = self.items[self.position]
        # Deliberately nothing from item.judge_verdict / item.judge_reason here.
        self.query_one("#calibrate-progress", Static).update(Text.assemble(
            (f"[{self.position + 1}/{len(self.items)}] ", "bold"), "case ", (screen_text(item.case_id), "bold cyan"),
            (f"   graded {len(self.labels) - self.known} · skipped {self.skipped}{self._known_words}", "dim")))
        self.query_one("#calibrate-item", Static).update(Text.assemble(
            ("rubric item: ", "bold"), screen_text(item.item), ("\nPASS or FAIL for this artifact?", "dim")))
        artifact = item.artifact if item.artifact.strip() else "(the judged artifact was empty)"
        self.query_one("#calibrate-artifact-text", Static).update(Text(screen_text(artifact)))
        self.query_one("#calibrate-artifact", VerticalScroll).scroll_home(animate=False)

    @property
    def _known_words(self) -> str:
        return f" · {self.known} labelled before, not asked" if self.known else ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("grade", "skip"):
            return self.current is not None
        if action == "back":
            return self.current is not None and self.position > 0
        return True

    def action_grade(self, verdict: str) -> None:
        item = self.current
        if item is None or self.store is None:
            return
        before = self.answers.get(self.position)
        if before in VERDICTS and before != verdict:  # a grade changed after u: the person's explicit act, relabel
            self.store.relabel(item.key, verdict)
        self.answers[self.position] = verdict
        self.labels.append(self.store.save_label(item, verdict))
        self._say_migrated()
        self._advance()

    def action_back(self) -> None:
        """Back to the item before, to grade it again (a key typed by mistake): its grade of this sitting is taken
        out of the count until it is given again — the judge's verdict still unseen, so nothing anchors it."""
        if self.current is None or self.position == 0:
            return
        self.position -= 1
        before = self.answers.get(self.position)
        if before == SKIP:
            self.skipped -= 1
            del self.answers[self.position]
        elif before is not None:
            key = self.items[self.position].key
            self.labels = [lab for lab in self.labels if lab.key != key]
        self._show_item()
        self.refresh_bindings()

    def _say_migrated(self) -> None:
        """An older calibration.json moved to the per-judge layout by the first label saved: said, once."""
        if self.store is not None and self.store.migrated:
            self.notify(self.store.migrated, title="calibration.json", timeout=15)
            self.store.migrated = ""

    def action_skip(self) -> None:
        if self.current is None:
            return
        before = self.answers.get(self.position)
        if before in VERDICTS and self.store is not None:  # graded before u went back to it: s keeps that grade
            self.labels.append(self.store.save_label(self.current, before))
        else:
            self.skipped += 1
            self.answers[self.position] = SKIP
        self._advance()

    def _advance(self) -> None:
        self.position += 1
        if self.position < len(self.items):
            self._show_item()
            self.refresh_bindings()
        else:
            self.reveal()

    def action_stop(self) -> None:
        if self.revealed or not self.loaded:
            if not self.accepts_keys:  # left while loading: the keys typed for it go nowhere
                drop_held_keys(self.app)
            self.app.pop_screen()
        else:
            self.reveal()

    # -- reveal -------------------------------------------------------------------------------
    def reveal(self) -> None:
        """Grading is over (last item or stopped): score the labels given in this sitting."""
        if not self.labels:
            self._finish_with(NO_LABELS)
            return
        report = agreement(self.labels)
        settings = self.app.project.config.judge
        weighted = ""
        if self.store is not None:
            # recorded (the library's calibration line) as weighted back from the stratified sample
            cal = measure(self.store.labels(), self.judged, settings)
            recorded = recorded_report(cal, report)
            if cal.error is not None and recorded is not None:
                agree = cal.error.pooled.agreement
                weighted = (f"all {cal.labels} labels of this judge, weighted back from the stratified sample: "
                            f"agreement {agree.value:.0%} ({100 * agree.lo:.0f}–{100 * agree.hi:.0f}%), kappa "
                            f"{fmt_kappa(cal.error.pooled.kappa.value)} — `scarbook calibrate --report` for q0 and q1")
                self.store.record_calibration(recorded, settings)
            else:
                weighted = OTHER_JUDGES.format(model=settings.model)
        self.report = report
        self._finish_with(f"graded {len(self.labels) - self.known} · skipped {self.skipped}{self._known_words} · "
                          f"judge {settings.model} — labels saved; press escape to go back")
        table: Table | Group = report_table(report)
        n = report.overall[2]
        if n < FEW_LABELS:
            table = Group(table, Text(f"only {n} label{'' if n == 1 else 's'}: agreement and kappa can swing "
                                      f"widely at this size (the agreement's 95% interval is shown) — grade at "
                                      f"least {FEW_LABELS} before trusting them", style="yellow"))
        if weighted:
            table = Group(table, Text(weighted, style="dim"))
        self.query_one("#calibrate-item", Static).update(table)
        body = (disagreements_table(report.disagreements) if report.disagreements
                else Text("no disagreements: the judge gave your verdict on every item", style="green"))
        self.query_one("#calibrate-artifact-text", Static).update(body)

    def _finish_with(self, message: str) -> None:
        self.revealed = True
        self.query_one("#calibrate-progress", Static).update(Text(message, style="bold"))
        self.query_one("#calibrate-item", Static).update("")
        self.query_one("#calibrate-artifact-text", Static).update("")
        self.query_one("#calibrate-help", Static).update(Text("escape goes back", style="dim"))
        self.query_one("#calibrate-artifact").border_title = ""
        self.refresh_bindings()
