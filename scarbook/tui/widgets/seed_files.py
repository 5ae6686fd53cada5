"""The seed files of a case: what is in `seed/`, attach files or folders from disk, remove, preview.

Changes are staged here (`changes()`) and written by the editor's save (scarbook.cases.editing, on a
thread), so "leave without saving" really leaves the disk untouched; `applied()` then shows the result.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Button, Input, OptionList, Static

from scarbook.cases.editing import SeedChanges, list_seed
from scarbook.fs.files import kind_of
from scarbook.text import plural, screen_text
from scarbook.tui.mounting import unless_removed

PREVIEW_CHARS = 1500
MAX_ATTACHED = 1000  # files one attach stages (a seed is copied into every run's workspace)


class PathSuggester(Suggester):
    """Completes the last path component from what is on disk (like a shell's Tab)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        expanded = os.path.expanduser(value)
        folder, stem = os.path.split(expanded)
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            return None
        for name in names:
            if name.startswith(stem) and name != stem and not (name.startswith(".") and not stem.startswith(".")):
                full = os.path.join(folder, name)
                suffix = "/" if os.path.isdir(full) else ""
                return value[: len(value) - len(stem)] + name + suffix
        return None


def preview_text(path: Path) -> str:
    """The start of a seed or scar file as text to show: a seed a transcript suggested, an artifact the
    agent wrote — their control sequences removed (scarbook.text.screen_text)."""
    try:
        if path.is_dir():
            return f"(folder with {plural(sum(1 for _ in path.rglob('*')), 'entry', 'entries')})"
        with path.open("rb") as fh:  # its start only: a file of gigabytes is shown as fast as a small one
            data = fh.read(PREVIEW_CHARS * 4)
            size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        return f"(cannot read {path}: {exc.strerror or exc})"
    if b"\0" in data:
        return f"(binary file, {plural(size, 'byte', grouped=True)})"
    text = data.decode("utf-8", errors="replace")
    return screen_text(text[:PREVIEW_CHARS]) + ("\n…" if len(text) > PREVIEW_CHARS else "")


def files_under(folder: Path, limit: int) -> list[Path] | None:
    """The files under `folder` (links to files too; links to folders are not entered), sorted; None once
    there are more than `limit`: the walk stops there, so a huge folder typed by mistake costs no more."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in filenames:
            p = Path(dirpath, name)
            if p.is_file():
                found.append(p)
                if len(found) > limit:
                    return None
    return sorted(found)


class SeedFiles(Vertical):
    @dataclass
    class Changed(Message):
        seed_files: SeedFiles

    def __init__(self, seed_dir: Path | None, id: str | None = None, staged: dict[str, Path] | None = None,
                 existing: list[str] | None = None) -> None:
        """`existing`: the seed folder's files when the caller listed them already (off the UI thread)."""
        super().__init__(id=id)
        self.seed_dir = seed_dir
        self.existing = list_seed(seed_dir) if existing is None else list(existing)
        self.pending: dict[str, Path] = dict(staged or {})  # name in seed/ -> source on disk
        self.removed: set[str] = set()

    def compose(self) -> ComposeResult:
        yield OptionList(id="seed-list")
        with Horizontal(classes="row-buttons"):
            yield Input(placeholder="path of a file or folder to attach (→ completes)", id="seed-path",
                        suggester=PathSuggester())
            yield Button("Attach", id="seed-attach")
            yield Button("Remove", id="seed-remove")
        yield Static("", id="seed-error", classes="field-error")
        yield Static(Text("(highlight a seed file to preview it)", style="dim"), id="seed-preview")

    @unless_removed
    def on_mount(self) -> None:
        self._refill()

    def entries(self) -> list[tuple[str, str]]:
        out = [(name, "removed on save" if name in self.removed else "") for name in self.existing]
        out += [(name, f"new, from {src}") for name, src in sorted(self.pending.items())]
        return out

    def _refill(self) -> None:
        ol = self.query_one("#seed-list", OptionList)
        ol.clear_options()
        entries = self.entries()
        ol.add_options([Text(screen_text(name + (f"   ({note})" if note else ""), one_line=True)) for name, note in entries]
                       or [Text("(no seed files: the workspace starts empty)", style="dim")])

    @property
    def dirty(self) -> bool:
        return bool(self.pending or self.removed)

    def attach(self, raw: str) -> str | None:
        """Stage a file or folder; returns the error to show, or None."""
        if not raw.strip():
            return "type the path of a file or folder to attach"
        src = Path(os.path.expanduser(raw.strip()))
        if not src.exists():
            if src.is_symlink():
                return (f"{src} is a link that leads nowhere (to itself, a loop, or a missing file): "
                        "attach the file it should name")
            return f"no such file or folder: {src}"
        mode = src.stat().st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):  # a pipe or a device would be read without end
            return f"{src} is {kind_of(mode)}, not a file: attach a regular file or a folder"
        if src.is_dir():
            files = files_under(src, MAX_ATTACHED)
            if files is None:
                return (f"{src} holds more than {plural(MAX_ATTACHED, 'file', grouped=True)}: a seed is copied into "
                        "every run's workspace — attach the files the task needs, or a smaller folder")
            if not files:
                return f"{src} holds no files: nothing attached"
            staged = {str(Path(src.name) / p.relative_to(src)): p for p in files}
        else:
            staged = {src.name: src}
        clash = next((name for name, p in staged.items() if self.pending.get(name, p) != p), None)
        if clash is not None:  # a second file of one name would silently replace the first
            return f"{clash} is attached already, from {self.pending[clash]}: remove it first to attach this one"
        self.pending.update(staged)
        self.removed.discard(src.name)
        self._refill()
        self.post_message(self.Changed(self))
        return None

    def remove_entry(self, index: int) -> None:
        entries = self.entries()
        if not 0 <= index < len(entries):
            return
        name = entries[index][0]
        if name in self.pending:
            del self.pending[name]
        elif name in self.removed:
            self.removed.discard(name)  # removing twice undoes it
        else:
            self.removed.add(name)
        self._refill()
        self.post_message(self.Changed(self))

    def changes(self) -> SeedChanges:
        """What is staged, for the save to apply."""
        return SeedChanges(dict(self.pending), set(self.removed))

    def applied(self, seed_dir: Path, listing: list[str]) -> None:
        """The save applied the staged changes: `listing` is what seed_dir holds now."""
        self.seed_dir, self.pending, self.removed = seed_dir, {}, set()
        self.existing = list(listing)
        self._refill()

    @on(OptionList.OptionHighlighted, "#seed-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        entries = self.entries()
        if not 0 <= event.option_index < len(entries):
            return
        name = entries[event.option_index][0]
        path = self.pending.get(name) or (self.seed_dir / name if self.seed_dir else None)
        if path is not None:
            self.query_one("#seed-preview", Static).update(Text(f"{screen_text(name, one_line=True)}\n", style="bold")
                                                           + Text(preview_text(path)))

    @on(Input.Submitted, "#seed-path")
    @on(Button.Pressed, "#seed-attach")
    def _on_attach_pressed(self, event) -> None:
        event.stop()
        box = self.query_one("#seed-path", Input)
        error = self.attach(box.value)
        self.query_one("#seed-error", Static).update(Text(error or ""))  # it quotes the path typed: text, not markup
        if error is None:
            box.value = ""

    @on(Button.Pressed, "#seed-remove")
    def _on_remove_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        h = self.query_one("#seed-list", OptionList).highlighted
        if h is not None:
            self.remove_entry(h)
