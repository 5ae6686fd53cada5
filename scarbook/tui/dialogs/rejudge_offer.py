"""After the case editor saves a changed rubric: offer to grade the last session's kept artifacts of
the case again with it (`scarbook rejudge`: judge calls only, no agent runs).

The offer is made only when the rubric of a judge check changed and the newest session that ran the
case kept artifacts of it (history is read on a thread). Accepting asks the App to run the rejudge
(messages.RejudgeSession): the same pipeline as the CLI's, shown on the live screen.
"""

from __future__ import annotations

from typing import cast

from rich.text import Text
from textual.screen import Screen

from scarbook.models import Case, SessionInfo
from scarbook.text import plural
from scarbook.tui.dialogs.confirm import ConfirmScreen
from scarbook.tui.host import Host
from scarbook.tui.messages import RejudgeSession


def rubrics(case: Case | None) -> list[list[str]]:
    return [[str(item) for item in check.params.get("rubric") or []] for check in case.judge_checks] if case else []


def offer_rejudge(screen: Screen, before: Case | None, after: Case) -> None:
    """Offer the rejudge when `after`'s rubric differs from `before`'s (None: a new case: nothing to rejudge)."""
    if before is None or before.id != after.id or rubrics(before) == rubrics(after):
        return
    app = cast(Host, screen.app)  # every scarbook screen's app is a Host (scarbook.tui.host)
    history = app.project.history

    def look() -> None:
        from scarbook.tools.rejudge import last_kept  # the rejudge pipeline, loaded off the UI thread when needed

        found = last_kept(history, after.id)
        if found is not None:
            app.call_from_thread(ask, app, after.id, *found)

    screen.run_worker(look, thread=True, group="rejudge-offer", exit_on_error=False)


def ask(app, case_id: str, session: SessionInfo, kept: int) -> None:
    name = f"{session.id} ({session.label})" if session.label else session.id
    question = Text(f"The rubric of {case_id} changed. Rejudge the last session, {name}, with this rubric? "
                    f"{plural(kept, 'kept artifact')} graded again: judge calls only, no agent runs.")

    def answered(yes: bool | None) -> None:
        if yes:
            app.post_message(RejudgeSession(session.id, (case_id,)))

    app.push_screen(ConfirmScreen(question, yes="Rejudge", no="Not now"), answered)
