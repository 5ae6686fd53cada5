"""q on the library: quit, but not past a session running in the background unasked (its unfinished runs would
never run). Ctrl+Q still quits at once from anywhere."""

from __future__ import annotations

from scarbook.tui.host import HostScreen


class QuitAsks(HostScreen):
    """Mixed into LibraryScreen."""

    def action_quit_asking(self) -> None:
        live = self.app.live
        if live is None or live.done:
            self.app.exit()
            return
        from scarbook.tui.dialogs.confirm import ConfirmScreen  # not needed before the first paint (issue 38.5)

        def answered(yes: bool | None) -> None:
            if yes:
                self.app.quit_after_session()

        question = (f"A session is running ({live.finished_runs} of {live.planned} runs finished). Quit? Its running "
                    "agents are killed; finished runs are kept.")
        self.app.push_screen(ConfirmScreen(question, yes="Quit", no="Keep running"), answered)
