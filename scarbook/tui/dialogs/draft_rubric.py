"""Draft a case's rubric from its incident (issue 35.1), from the import screen and the editor.

The dialog says first what drafting will cost (or why the rubric will not be drafted: no key); Enter drafts
(session/rubric_draft.py, in a thread: the judge's SDK loads and the calls run off the UI); the certification
table then shows each proposal kept or dropped with why, and the case's own items and checks. `a` writes
the kept proposals into case.yaml and dismisses with the draft; Escape leaves with nothing written (None).
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from scarbook.errors import ScarbookError
from scarbook.judge.errors import KeyHint
from scarbook.models import Case
from scarbook.project import Project
from scarbook.session.rubric_draft import DraftPlan, DraftWords, accept_draft, draft_rubric, kept_summary, plan_draft
from scarbook.text import screen_text
from scarbook.tools.rubric_draft import RubricDraft, draft_rows
from scarbook.tui.footer import Footer
from scarbook.tui.host import HostModalScreen
from scarbook.tui.mounting import unless_removed

COLOUR = {"keep": "green", "drop": "yellow", "has": "dim"}
# A rejected key or an unusable reply: what this dialog's user can do instead (the command line's words name
# `--offline`, which cannot be typed here). Escape lands in the editor from both the import screen and the editor.
WORDS = DraftWords(KeyHint("the draft stopped", " or write the rubric items by hand in the editor: Escape goes "
                           "there, and Enter in its rubric input adds each one"),
                   " with Enter, or write the rubric items by hand in the editor: Escape goes there")


class DraftRubricScreen(HostModalScreen[RubricDraft | None]):
    BINDINGS = [Binding("enter", "draft", "Draft", priority=True), Binding("a", "accept", "Accept"),
                Binding("escape", "leave", "Cancel")]

    def __init__(self, project: Project, case: Case) -> None:
        super().__init__()
        self.project, self.case = project, case
        self.plan: DraftPlan | None = None
        self.draft: RubricDraft | None = None
        self.drafting = False

    def compose(self) -> ComposeResult:
        with Vertical(id="draft-rubric"):
            yield Static(Text(f"draft the rubric of {self.case.id} from its incident", style="bold"))
            yield Static("", id="draft-cost")
            table: DataTable = DataTable(id="draft-table", cursor_type="row", zebra_stripes=True)
            table.add_columns("", "kind", "proposal", "finding: why")
            yield table
            yield Static("", id="draft-status")
        yield Footer()

    @unless_removed
    def on_mount(self) -> None:
        try:
            self.plan = plan_draft(self.project, self.case, env=self.app.judge_env)  # the app's key, as a launch's
        except ScarbookError as exc:
            self._say(f"cannot draft: {exc}", "red")
            return
        self.query_one("#draft-cost", Static).update(Text(self.plan.cost))
        self._say("Enter drafts; Escape cancels", "dim")

    def _say(self, text: str, style: str = "") -> None:
        self.query_one("#draft-status", Static).update(Text(text, style=style))

    def action_draft(self) -> None:
        if self.plan is None or self.drafting or self.draft is not None:
            return
        self.drafting = True
        self._say("drafting… (the judge is asked, then each proposal certified)", "dim")
        self._run(self.plan)

    @work(thread=True, exclusive=True, group="draft-rubric", exit_on_error=False)
    def _run(self, plan: DraftPlan) -> None:
        try:
            draft = asyncio.run(draft_rubric(self.project, plan, self.app.judge_env, WORDS))
        except ScarbookError as exc:
            self.app.call_from_thread(self._failed, str(exc))
        except Exception as exc:  # never a dialog stuck at "drafting…"
            self.app.call_from_thread(self._failed, f"{type(exc).__name__}: {exc}")
        else:
            self.app.call_from_thread(self._show, draft)

    def _failed(self, message: str) -> None:
        if not self.is_attached:  # cancelled while the judge was asked
            return
        self.drafting = False
        self._say(message, "red")

    def _show(self, draft: RubricDraft) -> None:
        if not self.is_attached:
            return
        self.drafting, self.draft = False, draft
        table = self.query_one("#draft-table", DataTable)
        for row in draft_rows(draft):
            table.add_row(Text(row.verdict, style=COLOUR.get(row.verdict, "")), row.kind,
                          screen_text(row.text, one_line=True), screen_text(row.said, one_line=True))
        table.focus()
        kept = f"a writes {kept_summary(draft)} into case.yaml" if draft.case is not None else \
            "nothing proposed catches the incident: Escape leaves case.yaml as it is"
        self._say(f"{draft.said} — {kept}; Escape cancels")

    def action_accept(self) -> None:
        if self.draft is None or self.draft.case is None:
            return
        try:
            accept_draft(self.project, self.draft)
        except (ScarbookError, OSError) as exc:
            self._say(f"not written: {exc}", "red")
            return
        self.dismiss(self.draft)

    def action_leave(self) -> None:
        self.dismiss(None)
