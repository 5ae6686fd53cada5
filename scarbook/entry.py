"""The `scarbook` program: the command line, which opens the TUI when it is given no command.

It sits above both faces so that neither imports the other: the CLI (scarbook.cli) never imports
Textual, and is handed the way to open the TUI here. Textual is imported only when the TUI opens."""

from __future__ import annotations

import gc
from pathlib import Path


def open_tui(root: Path) -> None:
    from scarbook.tui.app import make_app  # Textual is imported only when the TUI opens (CLI start-up stays fast)

    make_app(root).run()


def started() -> None:
    """The command's modules are imported and it is about to run (the CLI calls this): what start-up made
    is alive for good, so it is frozen out of the collector's scans, and the collector is on again."""
    gc.freeze()
    gc.enable()


def main() -> None:
    # Start-up imports click, the CLI and the command's modules: tens of thousands of objects and no garbage,
    # and every young collection meanwhile walked what was made so far (~5 ms of `scarbook eval --dry-run`,
    # issue 38.6). The collector is off until the command is about to run (started).
    gc.disable()
    try:
        from scarbook.cli import main as cli_main

        cli_main(obj={"open_tui": open_tui, "started": started})
    finally:
        gc.enable()  # (--help and usage errors end before a command runs)
        # The command is done and the process is about to end. Python's shutdown runs full collections that
        # walk every object still alive, nearly all of them the modules' own (~15 ms of `scarbook eval
        # --dry-run`, issue 38.6). Frozen out of those scans, what is not in a cycle is still freed as the
        # modules are cleared; what is (classes, mostly) goes back with the process's memory, a __del__ of
        # it not run at exit — which Python never promised. Open files are closed where they are used.
        gc.freeze()
