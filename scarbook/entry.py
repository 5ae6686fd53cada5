"""The `scarbook` program: the command line, which opens the TUI when it is given no command.

It sits above both faces so that neither imports the other: the CLI (scarbook.cli) never imports
Textual, and is handed the way to open the TUI here. Textual is imported only when the TUI opens."""

from __future__ import annotations

from pathlib import Path

from scarbook.cli import main as cli_main


def open_tui(root: Path) -> None:
    from scarbook.tui.app import make_app  # Textual is imported only when the TUI opens (CLI start-up stays fast)

    make_app(root).run()


def main() -> None:
    cli_main(obj={"open_tui": open_tui})
