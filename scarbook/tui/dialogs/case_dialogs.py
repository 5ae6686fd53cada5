"""Case management dialogs: the new id for a rename (checked as you type), and the trash, from which a
deleted case is restored. The file work is scarbook.cases.admin's and case_trash's; the library runs it (case_actions.py)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Static

from scarbook.cases.ids import check_new_case_id
from scarbook.cases.trash import TrashEntry, list_trash, purge_trash
from scarbook.errors import ScarbookError
from scarbook.text import cut_chars, cut_words, screen_text
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostModalScreen
from scarbook.tui.mounting import unless_removed

CASE_WIDTH, TITLE_WIDTH = 24, 22  # what the 72-column dialog (80-column terminal) has for the id and title


class RenameCaseScreen(HostModalScreen[str | None]):
    """Returns the new id, or None (cancelled). The id is checked on every key; Enter on a bad one
    shows why and stays."""

    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, case_id: str, cases_dir: Path) -> None:
        super().__init__()
        self.case_id, self.cases_dir = case_id, cases_dir

    def compose(self) -> ComposeResult:
        with Vertical(id="rename-case", classes="case-dialog"):
            yield Static(f"Rename case {self.case_id}", classes="title")
            yield Input(self.case_id, id="new-id", placeholder="new id: lowercase letters, digits, '-' and '_'")
            yield Static("", id="rename-error", classes="field-error -empty")
            yield Static(f"Its folder and the id in case.yaml change. Runs recorded so far stay under "
                         f"{self.case_id}; the renamed case starts with none.", classes="hint")
            with Horizontal(classes="buttons"):
                yield Button("Rename", id="rename", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    @unless_removed
    def on_mount(self) -> None:
        self.query_one("#new-id", Input).focus()

    def problem(self) -> str:
        new = self.query_one("#new-id", Input).value.strip()
        if new == self.case_id:
            return f"type the new id (it is {self.case_id} now)"
        try:
            check_new_case_id(self.cases_dir, new)
        except ScarbookError as exc:
            return str(exc)
        return ""

    def _show(self, text: str) -> None:
        error = self.query_one("#rename-error", Static)
        error.update(Text(text))
        error.set_class(not text, "-empty")

    @on(Input.Changed, "#new-id")
    def _changed(self) -> None:
        self._show(self.problem())

    @on(Input.Submitted, "#new-id")
    @on(Button.Pressed, "#rename")
    def _submit(self) -> None:
        why = self.problem()
        self._show(why)
        if not why:
            self.dismiss(self.query_one("#new-id", Input).value.strip())

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class TrashScreen(HostModalScreen[str | None]):
    """The deleted cases, newest first. Returns the trash folder name to restore, or None. x deletes
    the highlighted one for good, after a yes."""

    BINDINGS = [Binding("enter,r", "restore", "Restore"), Binding("x,delete", "purge", "Delete for good"),
                Binding("escape,q", "close", "Close")]

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[TrashEntry] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        with Vertical(id="trash", classes="case-dialog"):
            yield Static("Trash: deleted cases (workspaces/.trash/)", classes="title")
            yield DataTable(id="trash-table", cursor_type="row")
            yield Static("reading the trash…", id="trash-help", classes="hint")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        table = self.query_one("#trash-table", DataTable)
        table.add_column("case", key="case", width=CASE_WIDTH)
        table.add_column("deleted (UTC)", key="when", width=16)
        table.add_column("title", key="title", width=TITLE_WIDTH)
        table.focus()
        self._load()

    @work(thread=True, exclusive=True, group="trash-load")
    def _load(self) -> None:
        self.app.call_from_thread(self._show, *self._read())

    def _read(self) -> tuple[list[TrashEntry], str]:
        try:
            return list_trash(self.app.project), ""
        except ScarbookError as exc:  # the trash is a link: refused, said here
            return [], str(exc)

    def _show(self, entries: list[TrashEntry], problem: str = "") -> None:
        self.entries, self.loaded = entries, True
        table = self.query_one("#trash-table", DataTable)
        table.clear()
        for e in entries:
            table.add_row(Text(cut_chars(screen_text(e.case_id, one_line=True), CASE_WIDTH)), Text(e.trashed_at[:16].replace("T", " ")),
                          Text(cut_words(screen_text(e.title, one_line=True), TITLE_WIDTH)), key=e.name)
        self.query_one("#trash-help", Static).update(Text(problem) if problem else
            "Enter restores the highlighted case to cases/; x deletes it for good; Esc closes" if entries else
            "the trash is empty: a case deleted with d comes here, and can be restored from here")

    @on(DataTable.RowSelected, "#trash-table")
    def _selected(self) -> None:  # Enter on the table
        self.action_restore()

    def action_restore(self) -> None:
        table = self.query_one("#trash-table", DataTable)
        if self.entries and 0 <= table.cursor_row < len(self.entries):
            self.dismiss(self.entries[table.cursor_row].name)

    def action_purge(self) -> None:
        table = self.query_one("#trash-table", DataTable)
        if not self.entries or not 0 <= table.cursor_row < len(self.entries):
            return
        entry = self.entries[table.cursor_row]
        question = Text(f"Delete {screen_text(entry.case_id, one_line=True)} for good?\n\nIts folder in the trash "
                        f"({screen_text(entry.name, one_line=True)}) is deleted and cannot be restored. Runs "
                        "recorded under its id stay in history.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._purge(entry)

        self.app.push_screen(ConfirmScreen(question, yes="Delete for good", no="Keep"), answered)

    @work(thread=True, exclusive=True, group="trash-load")
    def _purge(self, entry: TrashEntry) -> None:
        try:
            purge_trash(self.app.project, [entry])
        except ScarbookError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="not done", severity="error", timeout=15,
                                      markup=False)
        else:
            self.app.call_from_thread(self.notify, f"deleted {entry.name} for good", markup=False)
        self.app.call_from_thread(self._show, *self._read())

    def action_close(self) -> None:
        self.dismiss(None)
