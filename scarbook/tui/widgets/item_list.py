"""An editable list of strings (the rubric items): add, edit in place, delete, reorder.

Enter on an item puts its text in the input; Enter in the input (or "Update") writes it back to
that item, not as a new one; Escape in the input stops editing. One judgeable statement per item —
the judge grades each one PASS/FAIL on its own. Each item may carry a key (a rubric item's written id)
that follows it through moves and other items' deletes; changing its words drops it (a new item).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, OptionList

from scarbook.models.rubric import words_of
from scarbook.text import screen_text
from scarbook.tui.mounting import unless_removed


class ItemList(Vertical):
    BINDINGS = [Binding("ctrl+up", "move(-1)", "Move up"), Binding("ctrl+down", "move(1)", "Move down"),
                Binding("delete,d", "delete", "Delete item"), Binding("m", "ask('merge')", "Merge redundant"),
                Binding("c", "ask('convert')", "To rule check")]

    @dataclass
    class Changed(Message):
        item_list: ItemList

    @dataclass
    class Asked(Message):
        """m / c on an item (issue 35.4): merge it with the item it is redundant with, or make it a rule check;
        the screen knows the figures and the checks."""

        item_list: ItemList
        what: str  # "merge" or "convert"
        index: int

    def __init__(self, items: list[str], *, name: str, placeholder: str = "", id: str | None = None,
                 notes: dict[str, str] | None = None, keys: list[str] | None = None) -> None:
        super().__init__(id=id)
        self.items = list(items)
        self.keys = list(keys) if keys is not None and len(keys) == len(items) else [""] * len(self.items)
        self.notes = dict(notes or {})  # a dim figure line under an item, by its words (a reworded item has none)
        self.prefix = name
        self.placeholder = placeholder
        self.editing: int | None = None  # the item whose text is in the input, being edited

    def compose(self) -> ComposeResult:
        yield OptionList(id=f"{self.prefix}-list")
        with Horizontal(classes="row-buttons"):
            yield Input(placeholder=self.placeholder, id=f"{self.prefix}-input")
            yield Button("Add", id=f"{self.prefix}-add")
            yield Button("Update", id=f"{self.prefix}-update")
            yield Button("Delete", id=f"{self.prefix}-delete")
            yield Button("↑", id=f"{self.prefix}-up")
            yield Button("↓", id=f"{self.prefix}-down")

    @unless_removed
    def on_mount(self) -> None:
        self._refill()

    @property
    def item_options(self) -> OptionList:
        return self.query_one(f"#{self.prefix}-list", OptionList)

    @property
    def item_input(self) -> Input:
        return self.query_one(f"#{self.prefix}-input", Input)

    def _refill(self, highlight: int | None = None) -> None:
        ol = self.item_options
        ol.clear_options()
        ol.add_options([Text(f"{i + 1}. {screen_text(item)}") + (Text(f"\n   {self.notes[item]}", style="dim")
                                                     if item in self.notes else Text())
                        for i, item in enumerate(self.items)])
        if self.items:
            ol.highlighted = min(highlight if highlight is not None else 0, len(self.items) - 1)

    def _changed(self, highlight: int | None) -> None:
        self._refill(highlight)
        self.post_message(self.Changed(self))

    @on(OptionList.OptionSelected)
    def _on_item_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter (or a click) on an item loads it into the input for editing; Update writes it back."""
        event.stop()
        if event.option_list is self.item_options and 0 <= event.option_index < len(self.items):
            self.editing = event.option_index
            self.item_input.value = self.items[event.option_index]
            self.item_input.focus()

    def add(self, text: str) -> None:
        if text.strip():
            self.items.append(text.strip())
            self.keys.append("")
            self.item_input.value = ""
            self._changed(len(self.items) - 1)

    def update(self, index: int, text: str) -> None:
        if 0 <= index < len(self.items) and text.strip():
            if words_of(text) != words_of(self.items[index]):
                self.keys[index] = ""  # reworded: a new item (its words' id, fresh figures)
            self.items[index] = text.strip()
            self._changed(index)

    def delete(self, index: int) -> None:
        if 0 <= index < len(self.items):
            self.editing = None
            del self.items[index]
            del self.keys[index]
            self._changed(index)

    def move(self, index: int, delta: int) -> None:
        j = index + delta
        if 0 <= index < len(self.items) and 0 <= j < len(self.items):
            self.editing = None
            self.items[index], self.items[j] = self.items[j], self.items[index]
            self.keys[index], self.keys[j] = self.keys[j], self.keys[index]
            self._changed(j)

    @property
    def current_index(self) -> int:
        h = self.item_options.highlighted
        return -1 if h is None else h

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.editing is None:
            self.add(event.value)
            return
        self.update(self.editing, event.value)
        self.stop_editing()
        self.item_options.focus()

    def stop_editing(self) -> None:
        self.editing = None
        self.item_input.value = ""

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        what = (event.button.id or "").removeprefix(f"{self.prefix}-")
        if what == "add":
            self.add(self.item_input.value)
            self.editing = None
        elif what == "update":
            self.update(self.editing if self.editing is not None else self.current_index, self.item_input.value)
            self.stop_editing()
        elif what == "delete":
            self.delete(self.current_index)
        elif what in ("up", "down"):
            self.move(self.current_index, -1 if what == "up" else 1)

    def action_move(self, delta: int) -> None:
        self.move(self.current_index, delta)

    def action_ask(self, what: str) -> None:
        if self.item_options.has_focus and 0 <= self.current_index < len(self.items):
            self.post_message(self.Asked(self, what, self.current_index))

    def action_delete(self) -> None:
        if self.item_options.has_focus:
            self.delete(self.current_index)
