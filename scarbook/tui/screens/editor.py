"""The case editor: every field of a case, its rubric items, checks and seed files.

Saving runs `scarbook.cases.editing.save_form_case` on a thread (the id check, the scar and seed files,
`save_case`: the core validates, nothing invalid is ever written; keys typed meanwhile wait) and a
CaseError is shown at the top and next to the field it is about. A new case is the same screen, empty;
a draft (from a failed run) is a new case whose files are written only when it is saved.

An existing case is opened by its folder: the screen shows "loading…" at once and reads the case, its
seed listing and its artifact preview in a thread, then builds the form in two steps. Until the first
screenful (the id to the artifact preview) is built and the form's clean state taken, `accepts_keys` is
False, so the App keeps the keys typed meanwhile and hands them over in order once it is ready
(tui/key_queue.py). Typing into those fields (and Escape) goes in from then on, while the rest of the
form (rubric, checks, seed files) is built after that screenful is painted; a key that may need the
rest (Tab, Ctrl+S, an arrow...) waits for it, with every key typed after it (`takes_key`, `built`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widget import AwaitMount, Widget
from textual.widgets import Input, Label, Static, TextArea

from scarbook.cases.drafts import CaseDraft
from scarbook.cases.editing import SavedCase, SeedChanges, form_problem, save_form_case
from scarbook.cases.io import load_case
from scarbook.errors import CaseError, ScarbookError
from scarbook.models import Case, Check, Scar
from scarbook.text import screen_text, visible_text
from scarbook.tools.item_certify import describe_check
from scarbook.tools.rubric_edits import redundant_partner, rule_check_for
from scarbook.transcripts.tool_input import artifact_words
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.dialogs.rejudge_offer import offer_rejudge
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import drop_held_keys, keys_welcome, release_held_keys, when_keys_handled
from scarbook.tui.messages import CasesChanged, OpenEditor, VerifyScar
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.check_editor import CheckEditor
from scarbook.tui.widgets.item_list import ItemList
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.seed_files import SeedFiles, list_seed, preview_text
from scarbook.views.item_figures import item_note

if TYPE_CHECKING:
    from scarbook.stats.items import ItemFigures

# Which field a core validation message is about (by the words it starts with).
FIELD_OF_PROBLEM = [("id ", "id"), ("missing required key 'id'", "id"), ("task", "task"),
                    ("missing required key 'task'", "task"), ("title", "title"), ("tags", "tags"),
                    ("threshold", "threshold"), ("llm_judge.rubric", "rubric"), ("seed", "seed"),
                    ("scar", "scar")]
FIELDS = ("id", "title", "tags", "threshold", "task", "rubric", "checks", "seed", "scar")
SCAR_INPUTS = {"failed_artifact": "#scar-failed", "good_artifact": "#scar-good"}
# Keys that act inside the focused field (with the printable ones): typed while the rest of the form is
# still being built they go in at once; any other key (Tab, Ctrl+S, Enter, an arrow up or down...) may
# reach the part not built yet, so it waits for it (and the keys after it wait behind it).
FIELD_KEYS = frozenset({"backspace", "delete", "left", "right", "home", "end", "escape"})
ERROR_UNDER = {"id": "#case-id", "title": "#case-title", "tags": "#case-tags", "threshold": "#case-threshold",
               "task": "#task", "scar": "#scar-at", "rubric": "#rubric", "checks": "#checks", "seed": "#seed"}


def field_of(problem: str) -> str:
    for prefix, name in FIELD_OF_PROBLEM:
        if problem.startswith(prefix):
            return name
    return "checks"


class EditorScreen(HostScreen):
    # No focus until the form is built, then the first field's: Textual's auto-focus would focus the
    # scrolling body first, and each focus change restyles every widget of the form (measured: it was
    # about half the time `e` took to open a case; benchmarks/tui_bench.py).
    AUTO_FOCUS = ""
    BINDINGS = [Binding("ctrl+s", "save", "Save", priority=True),
                Binding("ctrl+t", "verify", "Save + verify scar", priority=True),
                Binding("ctrl+r", "draft_rubric", "Draft rubric", priority=True),
                Binding("escape,q", "leave", "Back")]

    def __init__(self, case: Case | None, *, draft: CaseDraft | None = None, folder: Path | None = None,
                 notes: dict[str, str] | None = None) -> None:
        """`case` to edit (None: a new case), a `draft` to finish, or the `folder` of a case to read; `notes`:
        a figure line per rubric item, by its words (a rubric just drafted: what certification found)."""
        super().__init__()
        self.notes = notes or {}
        self.figures: dict[str, ItemFigures] = {}  # each rubric item's figures across history, by its id
        self.case = draft.case if draft else case
        self.is_new = case is None and folder is None
        self.folder = folder if self.case is None else None  # read in a thread when the screen opens
        self.accepts_keys = False  # until the first screenful is built and the form's clean state taken
        self.built = False  # the whole form is built (the rubric, checks and seed files below the first screenful)
        self.shown = folder is None  # a case read from its folder: once its first screenful is painted
        self._rest_asked = False  # the first screenful asked for the rest of the form (after its paint)
        self._rest_started = False  # the rest of the form is being mounted (once)
        self._seed_listing: list[str] | None = None  # read with the case (None: SeedFiles lists it)
        self._preview: Text | None = None
        # Files a draft brings, written on save: scar/ evidence here, seed/ files staged in SeedFiles.
        files = draft.files if draft else {}
        self.scar_files = {rel: src for rel, src in files.items() if not rel.startswith("seed/")}
        self.staged_seed = {rel.removeprefix("seed/"): src for rel, src in files.items()
                            if rel.startswith("seed/") and isinstance(src, Path)}
        self._clean_state: str = ""
        self.saving = False  # a save is being written (on a thread)
        self._escaped: dict[str, tuple[str, str]] = {}  # field: (what it shows, the case's own text) — _shown
        self.refusal: str | None = None  # the shown "not saved" problem, while the form's own fields cause it

    # -- layout -------------------------------------------------------------------------------
    @property
    def KEYS_NOT_HELD(self) -> tuple[str, ...]:  # noqa: N802 (the name tui/key_queue.py reads)
        """While the case loads, escape leaves at once; while a save is written, it waits for the save."""
        return () if self.saving else ("escape",)

    def takes_key(self, event: events.Key) -> bool:
        """Once the first screenful is built (`accepts_keys`), typing into its fields and Escape act at
        once; other keys wait until the whole form is (`built`): Tab must reach the rubric, a save needs
        every field."""
        return self.built or event.is_printable or event.key in FIELD_KEYS

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="editor-error", classes="error")
        with VerticalScroll(id="editor-body"):
            if self.folder is not None:
                yield Static(f"loading {self.folder.name}…", id="editor-loading")
            else:
                yield from self._form_top()
        yield Footer()

    def _form_top(self) -> ComposeResult:
        """The fields a first screenful shows (at 80x24 and wide): the id to the artifact preview."""
        c, scar = self.case, (self.case.scar if self.case and self.case.scar else Scar())
        yield from self._field("id", Input(c.id if c else "", id="case-id", disabled=not self.is_new,
                                           placeholder="lowercase-id (the folder name)"))
        yield from self._field("title", Input(self._shown("#case-title", c.title if c else ""), id="case-title",
                                              placeholder="what went wrong, in one line"))
        yield from self._field("tags", Input(self._shown("#case-tags", ", ".join(c.tags) if c else ""), id="case-tags",
                                             placeholder="files, json (comma separated)"))
        yield from self._field("threshold", Input("" if not c or c.threshold is None else f"{c.threshold:g}",
                                                  id="case-threshold",
                                                  placeholder="0.8 (empty: scarbook.yaml's)"))
        yield Label("task (what the agent is asked)", classes="section")
        yield TextArea(self._shown("#task", c.task if c else ""), id="task")
        yield Label("scar: what went wrong, family, date", classes="section")
        yield from self._field("what went wrong", Input(self._shown("#scar-what", scar.what_went_wrong or ""),
                                                        id="scar-what"))
        yield from self._field("family", Input(self._shown("#scar-family", scar.family or ""), id="scar-family",
                                               placeholder="e.g. false-completion-claim"))
        yield from self._field("date", Input(self._shown("#scar-date", scar.date or ""), id="scar-date",
                                             placeholder="2026-11-14"))
        yield from self._field("failed artifact", Input(self._shown("#scar-failed", scar.failed_artifact or ""),
                                                        id="scar-failed",
                               placeholder="a file the checks must FAIL (copied into scar/)"))
        yield from self._field("good artifact", Input(self._shown("#scar-good", scar.good_artifact or ""), id="scar-good",
                               placeholder="optional: a file the checks must PASS"))
        yield from self._field("artifact at", Input(self._shown("#scar-at", artifact_words(scar.artifact_at)), id="scar-at",
                               placeholder="output, or a workspace path (empty: guessed)"))
        preview = self._preview if self._preview is not None else self._artifact_preview(scar.failed_artifact)
        if preview is not None:
            yield Static(Text(f"failed artifact {screen_text(scar.failed_artifact or '', one_line=True)}:\n", style="bold") + preview,
                         id="artifact-preview")

    def _artifact_at(self, before: str | dict[str, str] | None) -> str | dict[str, str] | None:
        """The artifact-at field's value; a tool call's input shown unchanged keeps its mapping."""
        text = self._text_of("#scar-at")
        return before if before is not None and text == artifact_words(before) else text or None

    def _form_below(self) -> ComposeResult:
        """The part of the form below the first screenful (rubric, checks, seed files)."""
        c = self.case
        yield Label("rubric items (one judgeable statement each; Enter on one to edit it)", classes="section")
        yield ItemList(self._rubric(), name="rubric", placeholder="a statement graded PASS/FAIL",
                       id="rubric", notes=self.notes, keys=self._rubric_ids())
        yield Static("", id="lint-hints", classes="hints")
        yield Label("checks in cost order (the first failure stops the run); Enter: choose a type", classes="section")
        yield CheckEditor([ch.to_dict() for ch in c.checks] if c else [], id="checks")
        yield Label("seed files (copied into a fresh workspace before every run)", classes="section")
        yield SeedFiles(c.seed_dir if c else None, id="seed", staged=self.staged_seed,
                        existing=self._seed_listing)

    def _field(self, label: str, widget) -> ComposeResult:
        yield Horizontal(Label(label), widget, classes="pair")

    def _artifact_preview(self, rel: str | None) -> Text | None:
        if not rel:
            return None
        staged = self.scar_files.get(rel)
        if isinstance(staged, bytes):
            return Text(screen_text(staged[:2000].decode("utf-8", errors="replace")))  # the agent's bytes
        path = staged if isinstance(staged, Path) else (self.case.root / rel if self.case and self.case.root else None)
        return Text(preview_text(path)) if path is not None else None

    def _rubric(self) -> list[str]:
        judges = self.case.judge_checks if self.case else []
        return list(judges[0].params.get("rubric", [])) if judges else []

    def _rubric_ids(self) -> list[str]:
        judges = self.case.judge_checks if self.case else []
        return judges[0].written_item_ids if judges else []

    @unless_removed
    def on_mount(self) -> None:
        if self.folder is not None:
            self.sub_title = f"case {self.folder.name} — loading…"
            self._load(self.folder)
        else:
            self._top_built()

    @work(thread=True, exclusive=True, group="editor-load", exit_on_error=False)
    def _load(self, folder: Path) -> None:
        """Every file the form shows, read off the UI thread: the case, its seed listing, its preview."""
        try:
            case = load_case(folder)
            listing = list_seed(case.seed_dir)
            rel = case.scar.failed_artifact if case.scar else None
            preview = Text(preview_text(case.root / rel)) if rel and case.root else None
        except ScarbookError as exc:
            self.app.call_from_thread(self._load_failed, str(exc))
            return
        except OSError as exc:
            self.app.call_from_thread(self._load_failed, f"{folder}: {exc.strerror or exc}")
            return
        except Exception as exc:  # never a screen stuck at "loading…": say what went wrong
            self.app.call_from_thread(self._load_failed, f"{folder}: {type(exc).__name__}: {exc}")
            return
        # mypy cannot solve Textual's `T | Awaitable[T]` for a coroutine function (it picks Never): the call is right
        figures = self._figures_of(case)
        self.app.call_from_thread(self._show_case, case, listing, preview, figures)  # type: ignore[arg-type]

    def _figures_of(self, case: Case) -> list[ItemFigures]:
        """Each rubric item's figures across history (issue 35.3), read with the case; [] when they cannot be."""
        from scarbook.session.rubric_stats import case_item_figures  # history's readers: loaded in this worker

        try:
            return case_item_figures(self.app.project, case)
        except Exception:  # the figures are advice: a history that cannot be read leaves the list without them
            return []

    async def _show_case(self, case: Case, listing: list[str], preview: Text | None,
                         figures: list[ItemFigures] | None = None) -> None:
        if self not in self.app.screen_stack:  # left while it was loading
            return
        self.case, self.folder, self._seed_listing, self._preview = case, None, listing, preview
        self.figures = {f.item_id: f for f in figures or []}
        texts = {ident: text for check in case.judge_checks for ident, text in zip(check.rubric_ids, check.rubric,
                                                                                  strict=True)}
        self.notes = {texts[i]: item_note(f) for i, f in self.figures.items() if i in texts} | self.notes
        await self.query_one("#editor-loading").remove()
        await self.query_one("#editor-body").mount_all(self._form_top())
        self._top_built()

    def _top_built(self) -> None:
        """The first screenful is built: its fields take keys now (those typed meanwhile first). The rest
        (about half the form's widgets: the rubric list, the check editor, the seed files) is mounted
        after those keys and this screenful's paint, in one batch (benchmarks/tui_bench.py times both)."""
        self.sub_title = ("draft case (written when you save it)" if self.scar_files and self.is_new
                          else f"case {self.case.id}" if self.case is not None and not self.is_new else "new case")
        self.set_focus(self.query_one("#case-id" if self.is_new else "#case-title", Input))
        self._mark_clean()  # the part not built yet counts as the case's own (build_case)
        keys_welcome(self)
        # The keys typed meanwhile act first (a burst of them takes milliseconds when nothing competes),
        # then this screenful is painted, then the rest is built.
        self._rest_asked = True
        when_keys_handled(self.app, lambda: self.call_after_refresh(self._show_rest))

    def on_screen_resume(self) -> None:
        """Back on top (a dialog was dismissed) with the rest of the form asked for and not begun: ask
        again. Textual hands a `call_after_refresh` callback to the screen on top when it is handled, so
        a dialog opened meanwhile (Escape's "discard changes?") takes it, and one dismissed before its
        next paint drops it unrun: the form stayed half built, holding Tab and Ctrl+S for ever."""
        if self._rest_asked and not self._rest_started:
            self.call_after_refresh(self._show_rest)

    def _show_rest(self) -> None:
        self.shown = True  # the first screenful is painted (what benchmarks/tui_bench.py times)
        if self._rest_started or self not in self.app.screen_stack:
            return
        self._rest_started = True
        self._rest_mounted(self.query_one("#editor-body").mount_all(self._form_below()))

    @work(exclusive=True, group="editor-rest", exit_on_error=False)
    async def _rest_mounted(self, mounting: AwaitMount) -> None:
        """Waits for the rest of the form in a worker of its own: awaited in the screen's handler it would
        hold the screen's queue, which every key typed meanwhile passes through (tui/key_queue.py)."""
        await mounting
        if self not in self.app.screen_stack:  # left (Escape) while the rest was built
            return
        self.built = True
        self.update_hints()
        release_held_keys(self.app)  # the keys that waited for the whole form (Tab, Ctrl+S...)

    def _load_failed(self, message: str) -> None:
        self.shown, self.built = True, True
        self.sub_title = f"case {self.folder.name if self.folder else ''} — not opened"
        self.query_one("#editor-loading", Static).update(Text(f"cannot open the case: {message}\n"
                                                               "Escape goes back", style="red"))
        keys_welcome(self)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("save", "verify", "draft_rubric"):  # nothing to save until the case is read
            return self.case is not None or self.is_new
        return True

    # -- live rubric hints (scarbook lint): advice, never a block ------------------------------
    @on(ItemList.Changed)
    @on(CheckEditor.Changed)
    def update_hints(self, _event=None) -> None:
        from scarbook.agents import project_keeps_transcript
        from scarbook.cases.lint import lint_case

        try:
            case = self.build_case()
            cfg = self.app.project.config
            hints = lint_case(case, keeps_transcript=project_keeps_transcript(cfg.agent, cfg.record)) if case.checks \
                else []
        except (TypeError, ValueError, AttributeError, KeyError):
            hints = []  # a half-typed form: the hints wait until it makes sense
        text = "\n".join(f"hint ({h.rule}): {h.message}" + (f" — {h.suggestion}" if h.suggestion else "")
                         for h in hints)
        self.query_one("#lint-hints", Static).update(Text(text, style="yellow"))

    @on(CheckEditor.Changed)
    @on(ItemList.Changed)
    @on(Input.Changed)
    @on(TextArea.Changed)
    def recheck_refusal(self, _event=None) -> None:
        """A save's refusal stays shown only while it is true: the form is asked again as it changes."""
        if self.refusal is None or not self.built:
            return
        problem = form_problem(self.app.project.cases_dir, self.build_case(), is_new=self.is_new)
        if problem is None or problem.problem != self.refusal:
            self.show_error(problem)
            self.refusal = problem.problem if problem else None

    @on(ItemList.Asked)
    def _item_asked(self, event: ItemList.Asked) -> None:
        """m merges the item with the one history says it is redundant with; c makes it the rule check lint
        (and the draft step) proposes for it (issue 35.4). Both edit the form: ctrl+s saves, and the saved
        rubric's rejudge offer shows the case's rate under it."""
        items, n = event.item_list, event.index
        if event.what == "convert":
            check = rule_check_for(self.build_case(), n)
            if check is None:
                self.notify(f"no rule check decides item {n + 1}: it stays for the judge", severity="warning")
                return
            self.query_one("#checks", CheckEditor).add_check(check)
            items.delete(n)
            self.notify(f"item {n + 1} is now the rule check {describe_check(check)} — ctrl+s saves", markup=False)
            return
        partner = redundant_partner(self.case, self.figures, items.items[n], items.items) if self.case else None
        if partner is None:
            self.notify(f"item {n + 1} is not redundant with another item (scarbook rubric stats)",
                        severity="warning")
            return
        kept, gone = items.items[n], items.items.index(partner)
        items.delete(gone)
        self.notify(f"merged: item {gone + 1} went; {kept!r} stays — ctrl+s saves", markup=False)

    def action_draft_rubric(self) -> None:
        """Draft the rubric from the incident (tui/dialogs/draft_rubric.py) for the case as saved."""
        # Imported when asked for: drafting loads the judge's SDK and the certification (~1.5 s), which
        # opening the editor must not wait for (issue 38.5).
        from scarbook.tools.rubric_draft import RubricDraft, item_notes
        from scarbook.tui.dialogs.draft_rubric import DraftRubricScreen

        if self.case is None or self.is_new or self.dirty:
            self.notify("save the case first (ctrl+s): the rubric is drafted for the case as saved",
                        severity="warning")
            return
        case_id = self.case.id

        def accepted(draft: RubricDraft | None) -> None:
            if draft is not None:  # the editor opens again on the case as written, with each item's figures
                self.app.pop_screen()
                self.app.post_message(CasesChanged(case_id))
                self.app.post_message(OpenEditor(case_id, notes=item_notes(draft)))

        self.app.push_screen(DraftRubricScreen(self.app.project, self.case), accepted)

    def action_verify(self) -> None:
        """Save, then check the case against its own scar (its failed artifact must fail)."""
        if self.dirty or self.is_new:
            self._start_save(verify=True)
            return
        self._verify()

    def _verify(self) -> None:
        if self.case is None or self.case.scar is None or not self.case.scar.failed_artifact:
            self.notify("this case has no scar.failed_artifact to verify against", severity="warning")
            return
        assert self.case.root is not None  # an edited case was loaded from its folder (a new one is saved first)
        self.app.post_message(VerifyScar(load_case(self.case.root)))

    # -- the case the form describes ----------------------------------------------------------
    def _shown(self, selector: str, text: str) -> str:
        """`text` as the field `selector` shows it: an incident's control characters (ESC [2J, OSC 52) and bidi
        controls written as escapes, never drawn raw. A field left as shown saves the case's own text (_text_of)."""
        shown = visible_text(text)
        if shown != text:
            self._escaped[selector] = (shown, text)
        return shown

    def _text_of(self, selector: str) -> str:
        value = self.query_one(selector, TextArea).text if selector == "#task" else self.query_one(selector, Input).value
        shown, own = self._escaped.get(selector, (None, ""))
        return (own if value == shown else value).strip()

    def build_case(self) -> Case:
        """The form as a Case, typed as far as the text allows (the core validates the rest)."""
        base = self.case
        threshold_text = self._text_of("#case-threshold")
        threshold: Any = None
        if threshold_text:
            try:
                threshold = float(threshold_text)
            except ValueError:
                threshold = threshold_text  # save_case reports it: "threshold must be a number ..."
        if self.built:
            checks = [dict(c) for c in self.query_one("#checks", CheckEditor).checks]
            items = self.query_one("#rubric", ItemList)
            rubric, ids = list(items.items), list(items.keys)
        else:  # the part of the form below the first screenful is not built yet: it shows the case's own
            checks, rubric = [ch.to_dict() for ch in base.checks] if base else [], self._rubric()
            ids = self._rubric_ids()
        judge_at = next((i for i, c in enumerate(checks) if c.get("type") == "llm_judge"), None)
        if judge_at is None and rubric:
            checks.append({"type": "llm_judge", "artifact": "output", "rubric": rubric})
        elif judge_at is not None and rubric:
            checks[judge_at]["rubric"] = rubric
        elif judge_at is not None:
            del checks[judge_at]  # no rubric items left: the judge check has nothing to grade
        old_scar = base.scar if base and base.scar else Scar()
        scar = Scar(date=self._text_of("#scar-date") or None, what_went_wrong=self._text_of("#scar-what") or None,
                    family=self._text_of("#scar-family") or None, transcript=old_scar.transcript,
                    failed_artifact=self._text_of("#scar-failed") or None,
                    good_artifact=self._text_of("#scar-good") or None,
                    artifact_at=self._artifact_at(old_scar.artifact_at))
        built = [Check(c["type"], {k: v for k, v in c.items() if k != "type"}) for c in checks]
        if rubric:  # each item keeps the id written beside it (issue 35.3)
            next(c for c in built if c.is_judge).keep_written_ids(ids)
        return Case(id=self._text_of("#case-id"), task=self._text_of("#task"),
                    title=self._text_of("#case-title"),
                    tags=[t.strip() for t in self._text_of("#case-tags").split(",") if t.strip()],
                    threshold=threshold, checks=built,
                    scar=scar if scar.to_dict() else None, seed_files=dict(base.seed_files) if base else {},
                    timeout_s=base.timeout_s if base else None, root=base.root if base else None)

    def _form_state(self) -> str:
        case = self.build_case()
        seed = self.query_one("#seed", SeedFiles).changes() if self.built else SeedChanges(self.staged_seed, set())
        return json.dumps([case.id, case.task, case.title, case.tags, str(case.threshold),
                           [c.to_dict() for c in case.checks], case.scar.to_dict() if case.scar else None,
                           sorted(seed.add), sorted(seed.remove)], sort_keys=True, default=str)

    def _mark_clean(self) -> None:
        self._clean_state = self._form_state()

    @property
    def dirty(self) -> bool:
        """Changed since the last save; an unsaved draft always is (it exists nowhere else)."""
        return (self.is_new and bool(self.scar_files)) or self._form_state() != self._clean_state

    # -- saving -------------------------------------------------------------------------------
    def _error_slot(self, name: str) -> Static:
        """The line under a field that says what is wrong with it, made the first time it is needed
        (ten empty lines built with every form were a tenth of the time the editor took to open)."""
        for slot in self.query(f"#err-{name}").results(Static):
            return slot
        anchor = self.query_one(ERROR_UNDER[name])
        if isinstance(anchor.parent, Widget) and anchor.parent.has_class("pair"):
            anchor = anchor.parent
        form = anchor.parent
        assert isinstance(form, Widget)  # every field sits in the form
        slot = Static("", id=f"err-{name}", classes="field-error")
        form.mount(slot, after=anchor)
        return slot

    def show_error(self, error: CaseError | None) -> None:
        for name in FIELDS:
            for slot in self.query(f"#err-{name}").results(Static):
                slot.update("")
        top = self.query_one("#editor-error", Static)
        if error is None:
            top.update("")
            return
        text = error.problem + (f" — {error.fix}" if error.fix else "")
        top.update(Text(f"not saved: {text}"))
        self._error_slot(field_of(error.problem)).update(Text(f"↑ {text}"))

    def action_save(self) -> bool:
        """Save on a thread (scarbook.cases.editing: the id check, the scar and seed files, the write);
        keys typed meanwhile wait for the result. False when there is nothing to save yet."""
        return self._start_save(verify=False)

    def _start_save(self, verify: bool) -> bool:
        if not self.built or not self.accepts_keys or self.saving:  # a click on the footer before the whole form is built
            return False
        self.saving, self.accepts_keys = True, False
        seed = self.query_one("#seed", SeedFiles)
        self._save(self.build_case(), self.is_new, dict(self.scar_files), seed.changes(), verify)
        return True

    @work(thread=True, exclusive=True, group="editor-save", exit_on_error=False)
    def _save(self, case: Case, is_new: bool, staged: dict[str, bytes | Path], seed: SeedChanges,
              verify: bool) -> None:
        app = self.app
        project = app.project
        try:
            saved = save_form_case(project, case, is_new=is_new, staged=staged, seed=seed)
        except CaseError as exc:
            app.call_from_thread(self._save_failed, exc)
        except Exception as exc:  # never a screen stuck holding the keys: say what went wrong
            app.call_from_thread(self._save_failed, CaseError(
                project.cases_dir / case.id, f"could not write the case: {type(exc).__name__}: {exc}"))
        else:
            app.call_from_thread(self._saved, saved, verify)

    def _save_failed(self, error: CaseError) -> None:
        self.saving = False
        if self not in self.app.screen_stack:  # left (a click on Back) while the save was written
            self.notify(str(error), title="not saved", severity="error", timeout=15, markup=False)
            return
        self.show_error(error)
        # Re-asked as the form changes when the form alone explains it (not a file that could not be written).
        again = form_problem(self.app.project.cases_dir, self.build_case(), is_new=self.is_new)
        self.refusal = error.problem if again is not None and again.problem == error.problem else None
        keys_welcome(self)

    def _saved(self, saved: SavedCase, verify: bool) -> None:
        self.saving = False
        case, project = saved.case, self.app.project
        if self not in self.app.screen_stack:  # left (a click on Back) while the save was written
            self.notify(f"saved {saved.path.relative_to(project.root)}")
            self.app.post_message(CasesChanged(case.id))
            return
        for key, rel in saved.moved.items():  # a file typed into an artifact field now lives in scar/
            self.query_one(SCAR_INPUTS[key], Input).value = rel
        self.scar_files, self.refusal = {}, None
        self.query_one("#seed", SeedFiles).applied(saved.path.parent / "seed", saved.seed_listing)
        self.show_error(None)
        before, self.case, self.is_new = self.case, case, False
        self.query_one("#case-id", Input).disabled = True
        self.sub_title = f"case {case.id}"
        self._mark_clean()
        self.notify(f"saved {saved.path.relative_to(project.root)}")
        self.app.post_message(CasesChanged(case.id))
        if verify:
            self._verify()
        offer_rejudge(self, before, case)  # a changed rubric: grade the last session's kept artifacts with it
        keys_welcome(self)

    def action_leave(self) -> None:
        # Not opened, or still being built (nothing typed yet: keys wait for `accepts_keys`): nothing to lose.
        if (self.case is None and not self.is_new) or not self.accepts_keys or not self.dirty:
            if not self.accepts_keys:  # left while loading: the keys typed for it go nowhere
                drop_held_keys(self.app)
            self.app.pop_screen()
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.app.pop_screen()

        self.app.push_screen(ConfirmScreen("This case has unsaved changes. Leave without saving?",
                                           yes="Discard changes", no="Keep editing"), answered)
