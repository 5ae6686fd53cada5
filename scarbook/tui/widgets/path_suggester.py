"""Complete file paths as you type in an Input (accept the grey completion with the right arrow)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester

MAX_ENTRIES = 2000  # a huge directory must not stall typing: look at this many names at most


def complete_path(value: str, base: Path) -> str | None:
    """The first existing path that extends `value` (relative paths against `base`), with a
    trailing "/" for a directory; hidden names only when the typed part starts with ".". """
    if not value:
        return None
    typed_dir, _, prefix = value.rpartition("/")
    folder_text = (typed_dir or "/") if value.startswith("/") or typed_dir else "."
    folder = Path(os.path.expanduser(folder_text))
    if not folder.is_absolute():
        folder = base / folder
    try:
        with os.scandir(folder) as it:
            names = []
            for i, entry in enumerate(it):
                if i >= MAX_ENTRIES:
                    break
                if entry.name.startswith(prefix) and (prefix.startswith(".") or not entry.name.startswith(".")):
                    names.append((entry.name, entry.is_dir()))
    except OSError:
        return None
    for name, is_dir in sorted(names):
        if name == prefix and not is_dir:
            continue  # already complete
        head = value[: len(value) - len(prefix)]
        return head + name + ("/" if is_dir else "")
    return None


class PathSuggester(Suggester):
    def __init__(self, base: Path | None = None) -> None:
        # the file system changes under us: never cache; file names are case-sensitive
        super().__init__(use_cache=False, case_sensitive=True)
        self.base = Path(base) if base else Path.cwd()

    async def get_suggestion(self, value: str) -> str | None:
        return complete_path(value, self.base)
