"""Run review: the runs of one case in one session, filtered by status, and everything about the
highlighted run — status, each check's detail, judge items, output, stderr log, the −/+ diff of each
changed file against the seed — or (T) its transcript as a timeline.

Every file read happens on a thread (scarbook.views.run_review); until the runs are there the screen says
"loading…" and `accepts_keys` is False, so the App keeps the keys typed meanwhile (tui/key_queue.py)
and they act once the runs are there. So with `c`: the draft case is read on a thread, and the keys
typed meanwhile reach the editor (or the review again, if the draft cannot be made).
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import ContentSwitcher, OptionList, Static

from scarbook.cases.drafts import draft_from_run
from scarbook.cases.io import load_case
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.models import CAUSE_KINDS, STATUS_GLYPH, RunRecord, RunStatus
from scarbook.text import plural
from scarbook.transcripts import Transcript
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import drop_held_keys, keys_welcome
from scarbook.tui.messages import OpenEditor, OpenImport
from scarbook.tui.mounting import being_removed, unless_removed
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.run_detail import describe_run
from scarbook.tui.widgets.strip import STATUS_STYLE
from scarbook.tui.widgets.timeline import Timeline
from scarbook.views.run_review import (
    FAILED,
    FILTERS,
    ReviewData,
    RunDetail,
    filter_counts,
    filter_names,
    load_review,
    load_run_detail,
    load_run_transcript,
    shown_runs,
)

FILTER_NAMES = list(FILTERS)
FILTER_STYLE: dict[str, str] = {"failed": "red", **STATUS_STYLE}


class ReviewScreen(HostScreen):
    BINDINGS = [Binding("escape,q", "leave", "Back"),
                Binding("f", "next_failed", "Next failed"),
                Binding("F", "previous_failed", "Previous failed", show=False),
                Binding("s", "next_filter", "Filter", show=False),  # the status line says so
                Binding("S", "previous_filter", "Previous filter", show=False),
                Binding("T", "toggle_timeline", "Timeline"),
                Binding("c", "draft_case", "New scar"),
                Binding("t", "import_transcript", "Import transcript", show=False)]

    def __init__(self, session_id: str, case_id: str) -> None:
        super().__init__()
        self.session_id, self.case_id = session_id, case_id
        self.data: ReviewData | None = None
        self.runs: list[RunRecord] = []  # every run of the case in the session
        self.shown: list[RunRecord] = []  # the runs the filter lets through, as listed
        self.filter = "all"
        self.details: dict[int, RunDetail] = {}  # by k: read once, on a thread
        self.transcripts: dict[int, tuple[Transcript | None, str]] = {}
        self.accepts_keys = False  # the App keeps keys typed while the runs (or a draft) are read
        self._drafted = False  # a draft case was handed to the editor: keys wait for it, then for this screen

    @property
    def KEYS_NOT_HELD(self) -> tuple[str, ...]:  # noqa: N802 (the name tui/key_queue.py reads)
        """While the runs load, escape leaves at once; while a draft is written (`c`), it waits for it."""
        return () if self.data is not None else ("escape",)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="review-status")
        yield Static("loading the runs…", id="review-loading")
        with Horizontal(id="review-body"):
            yield OptionList(id="runs-list")
            with ContentSwitcher(initial="run-detail", id="review-pane"):
                with VerticalScroll(id="run-detail"):
                    yield Static("", id="run-body")
                with Vertical(id="run-timeline-pane"):
                    yield Static("", id="timeline-note")
                    yield Timeline(id="run-timeline")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.sub_title = f"{self.case_id} · loading…"
        self._load()

    def _hold_keys(self, why: str) -> None:
        self.query_one("#review-loading", Static).update(why)
        self.query_one("#review-loading").display = True
        self.accepts_keys = False

    def _release_keys(self) -> None:
        """The keys kept meanwhile go to the screen on top: this one, or the editor `c` opened."""
        self.query_one("#review-loading").display = False
        self.query_one("#runs-list", OptionList).focus()
        keys_welcome(self)

    @work(exclusive=True, group="review-load")
    async def _load(self) -> None:
        project = self.app.project

        def read() -> tuple[ReviewData, RunDetail | None]:
            data = load_review(project, self.session_id, self.case_id)
            first = self._first_bad(data.runs)
            return data, (load_run_detail(project, data.runs[first], data) if data.runs else None)

        try:
            data, detail = await asyncio.to_thread(read)
        except (ScarbookError, OSError) as exc:  # the history cannot be read: say so, keep the keys working
            data, detail = ReviewData([], "", None, ""), None
            self.notify(str(exc), title="could not read the runs", severity="error")
        self.data, self.runs = data, data.runs
        first = self.runs[self._first_bad(self.runs)] if self.runs else None
        if first is not None and detail is not None:
            self.details[first.k] = detail
        self.sub_title = f"{self.case_id} · session {data.label or 'unlabelled'} · {plural(len(self.runs), 'run')}"
        self._refill(prefer=first)
        self._release_keys()

    @property
    def loaded(self) -> bool:
        """The runs are listed and the highlighted run's detail is shown."""
        if self.data is None:
            return False
        run = self.current_run
        return run is None or run.k in self.details

    @staticmethod
    def _first_bad(runs: list[RunRecord]) -> int:
        """The first failed run (fail or error), else the first that did not pass (unjudged), else the first."""
        return next((i for i, r in enumerate(runs) if r.status in FAILED),
                    next((i for i, r in enumerate(runs) if r.status != RunStatus.PASS), 0))

    # -- the runs list and its filter ----------------------------------------------------------
    def _status_line(self, width: int) -> Text:
        """The filters with their counts, wrapped between filters to `width` columns (at 80 the cause
        filters go on a second line rather than being cut off)."""
        counts = filter_counts(self.runs)
        names = filter_names(self.runs)
        groups = [Text("show", style="dim")]
        for name in names:
            label = f"{name} {counts[name]}"
            group = Text("· why: ", style="dim") if name in CAUSE_KINDS and name == names[len(FILTER_NAMES)] \
                else Text()  # the cause filters follow the status ones
            if name == self.filter:
                group.append(f"[{label}]", style="bold reverse " + FILTER_STYLE.get(name, ""))
            else:
                group.append(label, style=FILTER_STYLE.get(name, ""))
            groups.append(group)
        groups.append(Text("s: filter", style="dim"))
        t, used = Text(), 0
        for group in groups:
            gap = 2 if group is groups[-1] else 1  # the key's hint stands apart from the filters
            if used and used + gap + group.cell_len > width:
                t.append("\n")
                used = 0
            elif used:
                t.append(" " * gap)
                used += gap
            t.append_text(group)
            used += group.cell_len
        return t

    def _show_status(self) -> None:
        status = self.query_one("#review-status", Static)
        status.update(self._status_line(max(20, self.size.width - 2)))  # (its padding)

    @unless_removed
    def on_resize(self) -> None:
        if self.data is not None:
            self._show_status()

    def _refill(self, prefer: RunRecord | None = None) -> None:
        self.shown = shown_runs(self.runs, self.filter)
        self._show_status()
        ol = self.query_one("#runs-list", OptionList)
        ol.clear_options()
        if not self.shown:
            what = "no runs recorded" if not self.runs else f"no {self.filter} runs"
            ol.add_option(Text(f"({what})", style="dim"))
            self.query_one("#run-body", Static).update(Text(f"{what}: s shows another filter" if self.runs else what,
                                                            style="dim"))
            self._show_transcript(None)
            return
        ol.add_options([self._prompt(r) for r in self.shown])
        index = self.shown.index(prefer) if prefer in self.shown else 0
        ol.highlighted = index
        self.show_run(index)

    @staticmethod
    def _prompt(run: RunRecord) -> Text:  # one line (CSS: no wrap); the detail has the whole reason
        agent = (f"{run.agent} ", "bold") if run.agent else ""  # a session of several agents: whose run
        return Text.assemble((f"{STATUS_GLYPH[run.status]} ", STATUS_STYLE[run.status]), f"#{run.k:<3} ", agent,
                             run.reason)

    def _set_filter(self, step: int) -> None:
        if self.data is None:
            return
        names = filter_names(self.runs)
        self.filter = names[(names.index(self.filter) + step) % len(names)]
        self._refill(prefer=self.current_run)

    def action_leave(self) -> None:
        if not self.accepts_keys:  # left while loading: the keys typed for it go nowhere
            drop_held_keys(self.app)
        self.app.pop_screen()

    def action_next_filter(self) -> None:
        self._set_filter(1)

    def action_previous_filter(self) -> None:
        self._set_filter(-1)

    @property
    def current_run(self) -> RunRecord | None:
        """The highlighted run; None on a review being closed (a read that comes back late asks too)."""
        if being_removed(self):
            return None
        h = self.query_one("#runs-list", OptionList).highlighted
        return self.shown[h] if h is not None and 0 <= h < len(self.shown) else None

    @on(OptionList.OptionHighlighted, "#runs-list")
    def _run_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.shown):
            self.show_run(event.option_index)

    def _jump_failed(self, step: int) -> None:
        if self.data is None:
            return
        bad = [i for i, r in enumerate(self.shown) if r.status in FAILED]
        if not bad:
            where = "" if self.filter == "all" else f" among the {self.filter} runs shown"
            self.notify(f"no failed run{where}", severity="information")
            return
        ol = self.query_one("#runs-list", OptionList)
        at = ol.highlighted if ol.highlighted is not None else -1
        after = [i for i in bad if (i - at) * step > 0]
        ol.highlighted = (min(after) if step > 0 else max(after)) if after else (bad[0] if step > 0 else bad[-1])

    def action_next_failed(self) -> None:
        self._jump_failed(1)

    def action_previous_failed(self) -> None:
        self._jump_failed(-1)

    # -- the highlighted run: detail, or its transcript as a timeline --------------------------
    def show_run(self, index: int) -> None:
        run = self.shown[index]
        if run.k in self.details:
            self.query_one("#run-body", Static).update(describe_run(run, self.details[run.k]))
        else:
            self.query_one("#run-body", Static).update(Text(f"run #{run.k}: loading…", style="dim"))
            self._load_detail(run)
        if self.query_one(ContentSwitcher).current == "run-timeline-pane":
            self._show_transcript(run)

    @work(exclusive=True, group="review-detail")
    async def _load_detail(self, run: RunRecord) -> None:
        assert self.data is not None  # runs are shown only once the data is read
        detail = await asyncio.to_thread(load_run_detail, self.app.project, run, self.data)
        self.details[run.k] = detail
        if self.current_run is run:
            self.query_one("#run-body", Static).update(describe_run(run, detail))

    def action_toggle_timeline(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        if switcher.current == "run-timeline-pane":
            switcher.current = "run-detail"
            return
        switcher.current = "run-timeline-pane"
        self._show_transcript(self.current_run)

    def _show_transcript(self, run: RunRecord | None) -> None:
        note, timeline = self.query_one("#timeline-note", Static), self.query_one("#run-timeline", Timeline)
        if run is None:
            note.update(Text("no run highlighted", style="dim"))
            timeline.clear()
        elif run.k in self.transcripts:
            transcript, why = self.transcripts[run.k]
            note.update(Text(f"run #{run.k}'s transcript · Enter opens a call", style="dim")
                        if transcript is not None else Text(why, style="yellow"))
            timeline.display = transcript is not None
            if transcript is not None:
                timeline.show(transcript)
                timeline.cursor_line = 0  # the first row highlighted (a Tree starts before it): Down goes to the 2nd
        else:
            note.update(Text(f"run #{run.k}: loading its transcript…", style="dim"))
            timeline.display = False
            self._load_transcript(run)

    @work(exclusive=True, group="review-transcript")
    async def _load_transcript(self, run: RunRecord) -> None:
        self.transcripts[run.k] = await asyncio.to_thread(load_run_transcript, run)
        if self.current_run is run and self.query_one(ContentSwitcher).current == "run-timeline-pane":
            self._show_transcript(run)

    # -- making a scar of the run -------------------------------------------------------------
    def action_import_transcript(self) -> None:
        """The full import flow, starting from this run's transcript ($SCARBOOK_TRANSCRIPT)."""
        run = self.current_run
        why = "this run left no transcript (the agent did not write $SCARBOOK_TRANSCRIPT)"
        if run is not None and run.transcript_path:
            try:  # the agent could have put a link (to a secret) or a pipe there: never follow or open it
                st = safefs.entry(*os.path.split(run.transcript_path))
                why = "" if stat.S_ISREG(st.st_mode) else (
                    f"transcript not imported: {Path(run.transcript_path).name} is "
                    + ("a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"))
            except safefs.Refused as exc:
                why = why if exc.missing else f"transcript not imported: {exc}"
            except OSError as exc:
                why = f"transcript not imported: {exc.strerror or exc}"
        if why:
            self.notify(why, severity="warning")
            return
        assert run is not None and run.transcript_path  # nothing refused: the run has a transcript file
        self.app.post_message(OpenImport(Path(run.transcript_path)))

    def action_draft_case(self) -> None:
        run = self.current_run
        if run is None:
            return
        if run.status == RunStatus.PASS:
            self.notify("this run passed — pick a failed run (f jumps to the next one)", severity="warning")
            return
        self._hold_keys(f"making a draft case from run #{run.k}…")  # now, before the next key goes on
        self._draft_case(run)

    @work(exclusive=True, group="review-draft")
    async def _draft_case(self, run: RunRecord) -> None:
        """Read the case and the run's artifact and transcript on a thread; keys typed meanwhile are kept
        and reach the editor once it is open (or the review again, if the draft cannot be made)."""
        project = self.app.project
        try:
            draft = await asyncio.to_thread(
                lambda: draft_from_run(project, load_case(project.cases_dir / run.case_id), run))
        except (ScarbookError, OSError) as exc:
            self._release_keys()
            self.notify(str(exc), title="could not make the draft case", severity="error")
            return
        self.notify(f"draft case {draft.case.id} from run #{run.k}: rename it if you like; Ctrl+S writes it")
        # The review keeps holding the keys: the editor takes them once its form is built, and the
        # review takes keys again when it is back on top.
        self._drafted = True
        self.app.post_message(OpenEditor(draft=draft))

    def on_screen_resume(self) -> None:
        if self._drafted:  # back from the editor the draft opened
            self._drafted = False
            self._release_keys()
