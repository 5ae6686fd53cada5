"""`scarbook init`: start a scar collection here."""

from __future__ import annotations

from pathlib import Path

import click

from scarbook.cli.common import friendly_errors, say
from scarbook.config import CONFIG_FILE, STARTER_CONFIG


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False), default=".")
@friendly_errors
def init_command(folder: str) -> None:
    """Start a scar collection here: a commented scarbook.yaml, cases/, and workspaces/ in .gitignore."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    cfg = root / CONFIG_FILE
    if cfg.exists():
        say(f"{cfg} already exists; left as it is")
    else:
        cfg.write_text(STARTER_CONFIG, encoding="utf-8")
        say(f"wrote {cfg}")
    (root / "cases").mkdir(exist_ok=True)
    gi = root / ".gitignore"
    lines = gi.read_text(encoding="utf-8").splitlines() if gi.exists() else []
    if not any(line.strip().strip("/") == "workspaces" for line in lines):
        with open(gi, "a", encoding="utf-8") as fh:
            if lines and lines[-1] != "":
                fh.write("\n")
            fh.write("# scarbook: run scratch dirs and history\n/workspaces/\n")
        say(f"added /workspaces/ to {gi}")
    say("next: file your first scar with `scarbook` (the TUI) or `scarbook import TRANSCRIPT`")


COMMANDS = [init_command]
