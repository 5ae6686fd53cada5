"""The import screen: from an agent transcript to a draft case, in one screen.

1. choose the file (a path Input with completion, or the path given by the caller: a failed run
   in review opens this screen on that run's transcript); 2. read the transcript as a timeline;
3. pick the failed artifact among the candidates, with a preview; 4. tick the seed suggestions
   whose content the transcript holds; 5. name the case and create the draft. The screen then
   dismisses with the new case id (None when the user leaves without creating) and asks the App to
   open the case editor on the draft (`OpenEditor`, tui/messages.py).

Every ScarbookError (unreadable file, unknown format, bad or taken id) is shown in #import-error.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, OptionList, SelectionList, Static, Tree
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection
from textual.worker import get_current_worker

from scarbook.cases.drafts import create_draft
from scarbook.cases.ids import suggest_case_id
from scarbook.cases.io import load_case
from scarbook.cases.trajectory_hints import TrajectoryHint, suggest_trajectory_checks
from scarbook.errors import ScarbookError
from scarbook.text import plural, screen_text
from scarbook.transcripts import (
    Candidate,
    SeedSuggestion,
    ToolResult,
    Transcript,
    candidates,
    default_artifact,
    load_transcript,
    pick_task,
    preview,
    suggest_seeds,
    suggest_task,
    turn_of,
    turns,
)
from scarbook.transcripts.detect import picked_word
from scarbook.transcripts.text import group_warnings, human_size
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostScreen
from scarbook.tui.key_queue import drop_held_keys, keys_welcome
from scarbook.tui.messages import CasesChanged, OpenEditor, VerifyScar
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.mount_safe import Header
from scarbook.tui.widgets.path_suggester import PathSuggester
from scarbook.tui.widgets.timeline import Timeline

PREVIEW_CHARS = 2000  # the artifact is saved whole; the pane shows its start


def list_case_ids(cases_dir: Path) -> set[str]:
    """The names in cases/ (read in the load worker, off the UI thread)."""
    return {p.name for p in cases_dir.iterdir()} if cases_dir.is_dir() else set()


def reader_bug(path: Path, exc: Exception) -> str:
    """What the screen says when reading a log failed in a way scarbook did not expect (a bug of its own)."""
    return (f"{path}: scarbook failed reading this log ({type(exc).__name__}: {exc}) — a bug in scarbook: please "
            f"report it with the log; meanwhile `scarbook import {shlex.quote(str(path))} --format plain` keeps the whole file as the "
            "failed artifact")


def candidate_prompt(c: Candidate, good: bool = False) -> Text:
    size = human_size(len(c.content.encode("utf-8")))
    style = {"file": "cyan", "final_answer": "green", "tool_input": "magenta"}.get(c.kind, "")  # (input: what it sent)
    text = Text.assemble((f"{c.number:>2} ", "bold"), ("good ", "bold green") if good else "",
                         (screen_text(c.label, one_line=True), style),
                         (f"  {size}", "dim"))
    text.no_wrap, text.overflow = True, "ellipsis"  # one line per candidate; the pane shows the rest
    return text


def preview_of(c: Candidate) -> Text:
    head = screen_text(c.content[:PREVIEW_CHARS])  # the transcript's text: no escape reaches the terminal
    text = Text.assemble((f"{screen_text(c.label, one_line=True)}\n", "bold"), head)
    if len(c.content) > PREVIEW_CHARS:
        text.append(f"\n… {len(c.content) - PREVIEW_CHARS:,} more characters (saved whole)", style="dim italic")
    elif not c.content.strip():
        text.append("(empty)", style="dim italic")
    return text


class ImportScreen(HostScreen[str | None]):
    BINDINGS = [
        Binding("ctrl+s", "create", "Create draft", priority=True),
        Binding("ctrl+o", "focus_path", "Open file"),
        # a file of several: one key, named for what it steps (an OTel trace, an Inspect sample, an export's
        # conversation, an OpenHands evaluation's instance); check_action shows the one the file's format names
        Binding("ctrl+t", "next_trace('trace')", "Next trace", priority=True),
        Binding("ctrl+t", "next_trace('sample')", "Next sample", priority=True),
        Binding("ctrl+t", "next_trace('conversation')", "Next conversation", priority=True),
        Binding("ctrl+t", "next_trace('instance')", "Next instance", priority=True),
        Binding("g", "mark_good", "Good artifact"),  # the highlighted candidate must PASS: certification
        Binding("ctrl+r", "create_drafted", "Create + draft rubric", priority=True),  # issue 35.1
        Binding("escape,q", "leave", "Back"),
    ]
    KEYS_NOT_HELD = ("escape",)  # while a transcript loads, escape leaves at once (tui/key_queue.py)

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.initial_path = Path(path) if path is not None else None
        self.transcript: Transcript | None = None
        self.transcript_path: Path | None = None
        self.cands: list[Candidate] = []
        self.seeds: list[SeedSuggestion] = []
        self.hints: dict[int, list[TrajectoryHint]] = {}  # candidate number -> trajectory checks it suggests
        self.good_number: int | None = None  # the candidate marked good (g): the draft is then certified
        # False while a transcript is read: keys typed meanwhile wait in the App's key queue and act on
        # the screen it fills (a `down` typed early moves through its candidates).
        self.accepts_keys = True

    # -- layout -------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="import-file", classes="pair"):
            yield Label("transcript")
            yield Input(str(self.initial_path) if self.initial_path else "", id="import-path",
                        placeholder="path of a transcript file, then Enter (→ completes a path)",
                        suggester=PathSuggester())
        yield Static("", id="import-error", classes="error")
        yield Static("choose a transcript: Claude Code log, Messages API JSON, OpenAI, OTel, scarbook run, "
                     "or plain text", id="import-summary")
        with Horizontal(id="import-body"):
            with Vertical(id="import-timeline-pane"):
                yield Label("timeline (Enter opens a tool call)", classes="section")
                yield Timeline(id="timeline")
            with Vertical(id="import-artifact-pane"):
                yield Label("failed artifact (the checks must FAIL it)", classes="section")
                yield OptionList(id="candidates")
                with VerticalScroll(id="candidate-preview-scroll"):
                    yield Static("", id="candidate-preview")
            with Vertical(id="import-seed-pane"):
                yield Label("seed files (space ticks one)", classes="section")
                yield SelectionList[str](id="seeds")
                yield Static("", id="seed-note")
        with Horizontal(id="import-create", classes="pair"):
            yield Label("case id")
            # Focused with its text unselected: the id is suggested to be kept or added to, and Enter on a
            # candidate with no seed to tick comes here, where a selection made the next key replace it.
            yield Input("", id="import-id", placeholder="lowercase-id (the folder cases/<id>/)",
                        select_on_focus=False)
            yield Button("Create draft", id="create", variant="primary")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        self.sub_title = "import a transcript"
        if self.initial_path is not None:
            self.load(self.resolve_typed(str(self.initial_path)))
        else:
            self.query_one("#import-path", Input).focus()

    # -- loading ------------------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        self.query_one("#import-error", Static).update(Text(screen_text(message)))

    def resolve_typed(self, typed: str) -> Path:
        path = Path(os.path.expanduser(typed.strip()))
        return path if path.is_absolute() else Path.cwd() / path

    def load(self, path: Path, trace: str | None = None) -> None:
        self.show_error("")
        self.accepts_keys = False
        self.query_one("#import-summary", Static).update(Text(screen_text(f"reading {path} …")))
        self._load(path, trace)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_trace":  # shown only for a file that holds several, in its words
            t = self.transcript
            return t is not None and len(t.traces) > 1 and parameters == (picked_word(t.format),)
        return True

    def action_next_trace(self, word: str = "trace") -> None:
        t = self.transcript
        if t is None or len(t.traces) < 2 or self.transcript_path is None:
            return
        ids = [tid for tid, _ in t.traces]
        self.load(self.transcript_path, ids[(ids.index(t.trace) + 1) % len(ids)] if t.trace in ids else ids[0])

    @work(thread=True, exclusive=True, group="import-load", exit_on_error=False)
    def _load(self, path: Path, trace: str | None = None) -> None:
        # a 5 MB log takes a moment to parse: off the event loop, so the screen stays live
        try:
            t = load_transcript(path, trace=trace)
        except ScarbookError as exc:
            self._from_worker(self._load_failed, path, str(exc))
            return
        except OSError as exc:  # load_transcript words its own; this is the last line of defence
            self._from_worker(self._load_failed, path, f"{path}: {exc.strerror or exc}")
            return
        except Exception as exc:  # noqa: BLE001 — a reader's bug: said, never a screen that takes no key
            self._from_worker(self._load_failed, path, reader_bug(path, exc))
            return
        try:  # the ids taken, for the suggested one (creating the draft checks again)
            taken = list_case_ids(self.app.project.cases_dir)
        except OSError:
            taken = set()
        self._from_worker(self._show_transcript, path, t, taken)

    def _from_worker(self, callback, *args) -> None:
        # a newer load (exclusive) or leaving the screen cancels this one: its answer is stale
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(callback, *args)

    def _load_failed(self, path: Path, message: str) -> None:
        if self not in self.app.screen_stack:  # the user left while it was loading
            return
        self.show_error(message)
        self.query_one("#import-summary", Static).update(
            Text(screen_text(f"could not read {path}")
                 + (" — still showing the previous transcript" if self.transcript else "")))
        self.query_one("#import-path", Input).focus()
        self.call_after_refresh(self._ready)

    def _ready(self) -> None:
        """The transcript (or why it could not be read) is on screen: the keys typed meanwhile act now."""
        keys_welcome(self)

    def _show_transcript(self, path: Path, t: Transcript, taken: set[str]) -> None:
        if self not in self.app.screen_stack:  # the user left while it was loading
            return
        try:
            self._fill_from(path, t, taken)
        except Exception as exc:  # noqa: BLE001 — a bug in what reads the log: said, and the keys work
            self.transcript = self.transcript_path = None
            self.refresh_bindings()
            self._load_failed(path, reader_bug(path, exc))

    def _fill_from(self, path: Path, t: Transcript, taken: set[str]) -> None:
        self.transcript, self.transcript_path = t, path
        self.refresh_bindings()
        self.cands, self.seeds, self.hints = candidates(t), suggest_seeds(t), {}
        self.good_number = None
        self.query_one("#timeline", Timeline).show(t)
        self._show_summary(path, t)
        self._fill_candidates()
        self._fill_seeds()
        case_id = self.query_one("#import-id", Input)
        case_id.value = suggest_case_id(
            suggest_task(t, self._turn_of(default_artifact(self.cands)) if self.cands else None), taken)
        case_id.cursor_position = len(case_id.value)
        self.query_one("#candidates", OptionList).focus()
        self.call_after_refresh(self._ready)

    def _show_summary(self, path: Path, t: Transcript) -> None:
        bits = [f"{path.name}: {t.format}", plural(len(t.messages), "message"), plural(len(t.tool_calls), "tool call")]
        if t.model:
            bits.append(t.model)
        # every part but the counts comes from the file: shown as text, its escapes removed
        if t.usage is not None:
            bits.append(f"{t.usage.input_tokens + t.usage.output_tokens:,} tokens")
        text = Text(screen_text(" · ".join(bits), one_line=True))
        task = pick_task(t, self._turn_of(default_artifact(self.cands)) if self.cands else None)
        task_line = screen_text(task.text.splitlines()[0], one_line=True) if task.text else None
        why = f": {t.task_hint}" if t.task_hint else ""
        text.append(f"\ntask: {task_line or f'(none in the transcript{why} — write it in the editor)'}")
        if task.note:  # a follow-up ("continue") joined with the request it continues
            text.append(f"\n{task.note}", style="bold")
        if t.traces and t.trace is not None:  # a file of several traces: one is picked
            n = next((i for i, (tid, _) in enumerate(t.traces, 1) if tid == t.trace), 0)
            what = picked_word(t.format)  # an Inspect log's samples, an OTel file's traces, an export's conversations
            text.append(screen_text(f"\n{what} {n} of {len(t.traces)}: {t.trace} ({dict(t.traces)[t.trace]}) — ctrl+t "
                                    "shows the next"), style="bold")
        for w in group_warnings([w for w in t.warnings if not (t.traces and w.startswith("the file holds"))])[:3]:
            text.append(f"\nwarning: {screen_text(w, one_line=True)}", style="yellow")
        self.query_one("#import-summary", Static).update(text)

    def _fill_candidates(self) -> None:
        options = self.query_one("#candidates", OptionList)
        options.clear_options()
        options.add_options([Option(candidate_prompt(c, c.number == self.good_number), id=str(c.number))
                             for c in self.cands])
        if self.cands:
            options.highlighted = default_artifact(self.cands) - 1
        self._show_preview()

    def action_mark_good(self) -> None:
        """g: the highlighted candidate is the good artifact (g again unmarks it). The failed one is
        the artifact highlighted when the draft is created."""
        options = self.query_one("#candidates", OptionList)
        number = self.artifact_number
        if number is None:
            return
        self.good_number = None if self.good_number == number else number
        for c in self.cands:
            options.replace_option_prompt(str(c.number), candidate_prompt(c, c.number == self.good_number))
        self.notify(f"good artifact: candidate {number} — now highlight the failed one" if self.good_number
                    else f"candidate {number} is no longer the good artifact", markup=False)

    def _fill_seeds(self) -> None:
        seeds = self.query_one("#seeds", SelectionList)
        seeds.clear_options()
        seeds.add_options([Selection(Text.assemble(screen_text(s.path, one_line=True),
                                                   (f"  {screen_text(s.reason, one_line=True)}", "dim")), s.path,
                                     disabled=s.content is None) for s in self.seeds])
        # Space ticks the highlighted row: start on the first tickable one, so Space works at once.
        seeds.highlighted = next((i for i, s in enumerate(self.seeds) if s.content is not None), None)
        self._show_seed_note()

    def _show_seed_note(self) -> None:
        tickable = sum(1 for s in self.seeds if s.content is not None)
        note = Text("no files read or listed: add seed files in the editor" if not self.seeds else
                    f"{len(self.ticked_seeds)} ticked; {tickable} of {len(self.seeds)} can be copied, the rest "
                    "are not whole in the transcript (add them in the editor)", style="dim")
        highlighted = self.query_one("#seeds", SelectionList).highlighted
        if self.seeds and highlighted is not None:
            seed = self.seeds[highlighted]
            note = Text.assemble((screen_text(seed.path, one_line=True), "bold"),
                                 f": {screen_text(seed.reason, one_line=True)}\n", note)
        self.query_one("#seed-note", Static).update(note)

    @on(SelectionList.SelectionHighlighted, "#seeds")
    @on(SelectionList.SelectedChanged, "#seeds")
    def _seed_moved(self) -> None:
        self._show_seed_note()

    # -- picking ------------------------------------------------------------------------------
    @property
    def artifact_number(self) -> int | None:
        highlighted = self.query_one("#candidates", OptionList).highlighted
        return None if highlighted is None or not self.cands else self.cands[highlighted].number

    @property
    def ticked_seeds(self) -> list[SeedSuggestion]:
        ticked = set(self.query_one("#seeds", SelectionList).selected)
        return [s for s in self.seeds if s.path in ticked]

    def _show_preview(self) -> None:
        number = self.artifact_number
        pane = self.query_one("#candidate-preview", Static)
        if number is None:
            pane.update(Text("no candidate artifacts in this transcript" if self.transcript else "", style="dim"))
        else:
            shown = preview_of(self.cands[number - 1])
            all_turns = turns(self.transcript) if self.transcript else []
            turn = self._turn_of(number)
            if len(all_turns) > 1 and turn is not None:  # a multi-turn session: the task follows the artifact
                shown.append(f"\n\ntask (turn {turn} of {len(all_turns)}): "
                             f"{screen_text(preview(all_turns[turn - 1].prompt, 70), one_line=True)}",
                             style="bold")
            for hint in self._hints(number):  # what the incident did, as trajectory checks
                shown.append("\n\n")
                shown.append(screen_text(f"suggested check {hint.yaml()}: {hint.why}", one_line=True), style="cyan")
            pane.update(shown)

    def _hints(self, number: int) -> list[TrajectoryHint]:
        """The trajectory checks suggested with candidate `number` as the artifact (worked out once each)."""
        if self.transcript is None:
            return []
        if number not in self.hints:
            self.hints[number] = suggest_trajectory_checks(self.transcript, self.cands[number - 1])
        return self.hints[number]

    def _turn_of(self, number: int) -> int | None:
        """The turn that produced candidate `number`: its prompt is the draft's task."""
        if self.transcript is None or not 1 <= number <= len(self.cands):
            return None
        return turn_of(self.transcript, self.cands[number - 1].entry)

    @on(OptionList.OptionHighlighted, "#candidates")
    def _candidate_highlighted(self) -> None:
        self._show_preview()

    @on(OptionList.OptionSelected, "#candidates")
    def _candidate_chosen(self) -> None:
        # next step of the flow: the seeds, or the id when there is nothing to tick
        self.query_one("#seeds" if self.seeds else "#import-id").focus()

    @on(Tree.NodeSelected, "#timeline")
    def _timeline_selected(self, event: Tree.NodeSelected) -> None:
        """Enter on a tool result in the timeline makes it the artifact: the user often spots the
        bad output while reading, not in the candidate list."""
        if not isinstance(event.node.data, ToolResult):
            return
        number = self.candidate_for(event.node.data)
        if number is not None:
            self.query_one("#candidates", OptionList).highlighted = number - 1
            self.notify(f"artifact: candidate {number}")

    def candidate_for(self, result: ToolResult) -> int | None:
        # equal text is an equal artifact, so the first candidate with this content is the one
        for c in self.cands:
            if c.kind == "tool_result" and c.content == result.text:
                return c.number
        return None

    @on(Input.Submitted, "#import-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.show_error("type the path of a transcript file")
            return
        self.load(self.resolve_typed(event.value))

    @on(Input.Submitted, "#import-id")
    def _id_submitted(self) -> None:
        self.action_create()

    @on(Button.Pressed, "#create")
    def _create_pressed(self) -> None:
        self.action_create()

    # -- actions ------------------------------------------------------------------------------
    def action_focus_path(self) -> None:
        self.query_one("#import-path", Input).focus()

    def action_leave(self) -> None:
        if not self.accepts_keys:  # left while loading: the keys typed for it go nowhere
            drop_held_keys(self.app)
        self.dismiss(None)

    def action_create(self) -> str | None:
        """Write the draft; on success hand over to the editor and return the case id."""
        written = self._write_draft()
        if written is not None:
            self._open(*written)
        return written[0] if written else None

    def action_create_drafted(self) -> None:
        """Write the draft, then draft its rubric from the incident (tui/dialogs/draft_rubric.py): accepted, the
        editor opens on it with each item's figures; cancelled, on the draft as written."""
        # Imported when asked for: drafting loads the judge's SDK and the certification (issue 38.5).
        from scarbook.tools.rubric_draft import item_notes
        from scarbook.tui.dialogs.draft_rubric import DraftRubricScreen

        written = self._write_draft()
        if written is None:
            return
        case_id, folder = written
        try:
            case = load_case(folder)
        except ScarbookError as exc:
            self.show_error(f"not drafted: {exc}")
            self._open(case_id, folder)
            return
        self.app.push_screen(DraftRubricScreen(self.app.project, case),
                             lambda draft: self._open(case_id, folder, item_notes(draft) if draft else None))

    def _write_draft(self) -> tuple[str, Path] | None:
        """Write the draft case (errors shown); (its id, its folder)."""
        if self.transcript is None:
            self.show_error("load a transcript first: type its path and press Enter")
            return None
        number = self.artifact_number
        if number is None:
            self.show_error("the transcript has no candidate artifact (no final answer, file or tool result)")
            return None
        case_id = self.query_one("#import-id", Input).value.strip()
        project = self.app.project
        try:
            if number == self.good_number:
                raise ScarbookError(f"candidate {number} is marked as the good artifact: highlight the "
                                    "failed one (or press g to unmark it)")
            folder = create_draft(self.transcript, project, case_id, number, self.ticked_seeds,
                                  self.transcript_path, self.good_number)
        except (ScarbookError, OSError) as exc:
            self.show_error(f"not created: {exc}")
            self.query_one("#import-id", Input).focus()
            return None
        self.show_error("")
        rel = folder.relative_to(project.root) if folder.is_relative_to(project.root) else folder
        self.notify(f"wrote draft case {rel} — add checks the failed artifact must fail, then verify it")
        return case_id, folder

    def _open(self, case_id: str, folder: Path, notes: dict[str, str] | None = None) -> None:
        """Hand the written draft over to the editor, and certify it as `scarbook import` does."""
        self.app.post_message(CasesChanged(case_id))
        self.dismiss(case_id)
        self.app.post_message(OpenEditor(case_id, notes=notes))
        try:  # the same certification `scarbook import` ends with (a notification and the library badge)
            self.app.post_message(VerifyScar(load_case(folder), imported=True))
        except ScarbookError as exc:
            self.notify(f"not certified: {exc}", severity="error", markup=False)
