"""The library's case management actions: delete (to the trash, after a yes), rename, duplicate, and
restore from the trash. The file work (scarbook.cases.admin, case_trash) runs on a thread; then the library
reloads with the cursor on the case the action made (or, after a delete, the row that took its place)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work

from scarbook.errors import ScarbookError
from scarbook.text import screen_text
from scarbook.tui.host import HostScreen

if TYPE_CHECKING:
    from scarbook.views.library_rows import LibraryRow

# The file work (scarbook.cases.admin, scarbook.cases.trash) and the dialogs are imported by the action that
# uses them: none is needed before the library's first paint (issue 38.5).


class CaseActions(HostScreen):
    """Mixed into LibraryScreen; what it uses of that screen is declared here."""

    shown: list[LibraryRow]
    land_on: str | None

    if TYPE_CHECKING:
        def current_row(self) -> LibraryRow | None: ...
        def reload(self) -> None: ...

    def _refuse_live(self, case_id: str) -> bool:
        """This app's own session runs the case: say so (the core refuses too, once its lock is held)."""
        live = self.app.live
        if live is not None and not live.done and any(c.id == case_id for c in live.cases):
            self.notify(f"case {case_id!r} is in the running session — wait for it to finish (or cancel it), "
                        "then try again", severity="warning", markup=False)
            return True
        return False

    def action_delete_case(self) -> None:
        from scarbook.cases.trash import trash_case
        from scarbook.tui.dialogs.confirm import ConfirmScreen

        row = self.current_row()
        if row is None or self._refuse_live(row.key):
            return
        keys = [r.key for r in self.shown]
        at = keys.index(row.key)
        after = keys[at + 1] if at + 1 < len(keys) else (keys[at - 1] if at else None)
        question = Text(f"Delete case {screen_text(row.key, one_line=True)}?\n\nIts folder moves to the trash "
                        "(workspaces/.trash/): press T in the library to restore it. Its runs stay in history.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._case_step(lambda: trash_case(self.app.project, row.key), lambda _: after,
                                lambda _: f"deleted {row.key} — T restores it")

        self.app.push_screen(ConfirmScreen(question, yes="Delete", no="Keep"), answered)

    def _valid_row(self):
        """The highlighted row when its case is valid (an invalid one can only be deleted)."""
        row = self.current_row()
        if row is not None and row.case is None:
            self.notify("this case file is invalid — fix it first (or delete it with d)", severity="warning")
            return None
        return row

    def action_rename_case(self) -> None:
        from scarbook.cases.admin import rename_case
        from scarbook.tui.dialogs.case_dialogs import RenameCaseScreen

        row = self._valid_row()
        if row is None or self._refuse_live(row.key):
            return

        def chosen(new: str | None) -> None:
            if new:
                self._case_step(lambda: rename_case(self.app.project, row.key, new), lambda case: case.id,
                                lambda case: f"renamed {row.key} to {case.id}; its earlier runs stay under {row.key}")

        self.app.push_screen(RenameCaseScreen(row.key, self.app.project.cases_dir), chosen)

    def action_duplicate_case(self) -> None:
        from scarbook.cases.admin import duplicate_case

        row = self._valid_row()
        if row is None:
            return
        self._case_step(lambda: duplicate_case(self.app.project, row.key), lambda case: case.id,
                        lambda case: f"copied {row.key} to {case.id} — R renames it")

    def action_trash(self) -> None:
        from scarbook.cases.trash import restore_case
        from scarbook.tui.dialogs.case_dialogs import TrashScreen

        def chosen(name: str | None) -> None:
            if name:
                self._case_step(lambda: restore_case(self.app.project, name), lambda e: e.case_id,
                                lambda e: f"restored {e.case_id}")

        self.app.push_screen(TrashScreen(), chosen)

    @work(thread=True, group="case-admin")
    def _case_step(self, step: Callable, land: Callable, said: Callable) -> None:
        try:
            result = step()
        except ScarbookError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="not done", severity="error", timeout=15,
                                      markup=False)
            return
        self.app.call_from_thread(self._case_step_done, land(result), said(result))

    def _case_step_done(self, key: str | None, message: str) -> None:
        self.land_on = key
        self.notify(message, markup=False)
        self.reload()
