"""`scarbook init`: start a scar collection here."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from scarbook.cli.common import examples, friendly_errors, say
from scarbook.config import CONFIG_FILE, STARTER_CONFIG
from scarbook.errors import ScarbookError
from scarbook.fs.files import atomic_write_text, describe_os_error, kind_of, read_regular_bytes, unwritable_why

GITIGNORE_LINES = "# scarbook: run scratch dirs and history\n/workspaces/\n"


def _in_the_way(path: Path, want_folder: bool) -> str | None:
    """What stands at `path` where init makes a file (or a folder), described; None if nothing or the right kind."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a symlink that leads nowhere" if os.path.islink(path) else None
    except OSError:  # a link loop, a link through a file
        return "a symlink that leads nowhere"
    if stat.S_ISDIR(mode) == want_folder and (want_folder or stat.S_ISREG(mode)):
        return None
    return "a file" if stat.S_ISREG(mode) else kind_of(mode)


@click.command("init", epilog=examples("scarbook init", "scarbook init my-agent"))
@click.argument("folder", type=click.Path(file_okay=False), default=".")
@friendly_errors
def init_command(folder: str) -> None:
    """Start a scar collection here: a commented scarbook.yaml, cases/, and workspaces/ in .gitignore."""
    root = Path(folder)
    why = unwritable_why(root)
    if why:
        raise ScarbookError(f"cannot create the folder {root}: {why} — choose another folder")
    cfg, cases, gi = root / CONFIG_FILE, root / "cases", root / ".gitignore"
    for path, want_folder in ((cfg, False), (cases, True), (gi, False)):
        what = _in_the_way(path, want_folder)
        if what:
            raise ScarbookError(f"{path} is {what}, where `scarbook init` makes {'a folder' if want_folder else 'a file'} "
                                f"— move it aside (mv {path} {path}.old) and run `scarbook init` again; nothing was written")
    try:
        root.mkdir(parents=True, exist_ok=True)
        if cfg.exists():
            say(f"{cfg} already exists; left as it is")
        else:
            atomic_write_text(cfg, STARTER_CONFIG)
            say(f"wrote {cfg}")
        cases.mkdir(exist_ok=True)
        # .gitignore is read as bytes (git does): a line in another encoding is no reason to refuse
        lines = read_regular_bytes(gi).decode("utf-8", "replace").splitlines() if gi.exists() else []
        if not any(line.strip().strip("/") == "workspaces" for line in lines):
            with open(gi, "a", encoding="utf-8") as fh:
                if lines and lines[-1] != "":
                    fh.write("\n")
                fh.write(GITIGNORE_LINES)
            say(f"added /workspaces/ to {gi}")
    except OSError as exc:
        raise ScarbookError(f"cannot set up {root}: {describe_os_error(exc)} ({exc.filename}) — make it a folder "
                            "you can write, or choose another") from None
    say("next: file your first scar with `scarbook` (the TUI) or `scarbook import TRANSCRIPT`")


COMMANDS = [init_command]
