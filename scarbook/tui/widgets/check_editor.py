"""The checks of a case: add a rule check by type with the fields CHECK_SPECS gives that type,
edit, delete and reorder (list order = cost order: the runner short-circuits on the first failure).
Enter on the list opens the check-type select; Add and Update take a check only when the core's
`parse_check` does, and say under the fields why not ("fill in path").

Values are passed to the core as typed; when one does not parse (e.g. "abc" for an integer) the raw
text goes through, so the core's validation reports the problem in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label, OptionList, Static

from scarbook.checks.spec import CHECK_SPECS, KIND_WORDS, CheckSpec, parse_check
from scarbook.errors import CaseError
from scarbook.transcripts.tool_input import artifact_words
from scarbook.tui.mounting import unless_removed
from scarbook.tui.widgets.mount_safe import Select

LIST_SEP = "|"
# The first llm_judge check's rubric is edited in the rubric list, not here.
HIDDEN_FIELDS = {"llm_judge": ("rubric",)}
HIDDEN_STAND_INS = {"rubric": ["an item of the rubric list"]}  # what a hidden field is checked with


def check_problem(check: dict[str, Any]) -> str | None:
    """Why the core would refuse this check from the form ("file_exists check is missing required key
    'path' — fill in path"), or None. Hidden fields are edited elsewhere: checked with a stand-in."""
    hidden = HIDDEN_FIELDS.get(check["type"], ())
    try:
        parse_check({**{k: HIDDEN_STAND_INS[k] for k in hidden}, **check}, Path("case.yaml"), None)
    except CaseError as exc:
        spec = CHECK_SPECS[check["type"]]
        stands_in = {k: i for k, i in spec.instead.items() if i not in HIDDEN_FIELDS.get(check["type"], ())}
        missing = [f"{k} (or {stands_in[k]})" if k in stands_in else k
                   for k in spec.required if k not in check and k not in hidden and stands_in.get(k) not in check]
        if missing:
            return f"{exc.problem} — fill in {', '.join(missing)}"
        if spec.one_of and not any(k in check for k in spec.one_of):
            return f"{exc.problem} — fill in one of them"
        return exc.problem + (f" — {exc.fix}" if exc.fix else "")
    return None


def field_need(spec: CheckSpec, key: str) -> str:
    """How the form says whether a field must be filled in (a field another can stand in for is not just required:
    a file rule reads a tool call's input, `artifact`, instead of its `path`)."""
    if key in spec.instead:
        return f"required unless {spec.instead[key]}"
    if key in spec.instead.values():
        return f"instead of {next(k for k, v in spec.instead.items() if v == key)}"
    if key in spec.required:
        return "required"
    return "one of " + "/".join(spec.one_of) if key in spec.one_of else "optional"


class CheckList(OptionList):
    """The checks in order; Enter asks for the check-type select (to add a check, or change this one's type)."""

    @dataclass
    class TypeWanted(Message):
        pass

    def action_select(self) -> None:
        self.post_message(self.TypeWanted())


def describe_check(check: dict[str, Any]) -> str:
    ctype = check.get("type", "?")
    if ctype == "llm_judge":
        return (f"llm_judge: {len(check.get('rubric') or [])} rubric items, artifact "
                f"{artifact_words(check.get('artifact', 'output'))}")
    parts = [f"{k}={v!r}" if not isinstance(v, list) else f"{k}=[{', '.join(map(str, v))}]"
             for k, v in check.items() if k != "type"]
    return f"{ctype}: {' '.join(parts)}"


def parse_field(kind: str, text: str) -> Any:
    text = text.strip()
    if kind in ("path", "str"):
        return text
    if kind in ("paths", "strs"):
        return [t.strip() for t in text.split(LIST_SEP) if t.strip()]
    if kind == "bool":
        return {"true": True, "yes": True, "false": False, "no": False}.get(text.lower(), text)
    try:
        if kind == "int":
            return int(text)
        if kind == "number":
            return float(text) if "." in text else int(text)
        return yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return text


def format_field(kind: str, value: Any) -> str:
    if isinstance(value, list):
        return f" {LIST_SEP} ".join(map(str, value))
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("tool", "artifact") and isinstance(value, dict):  # read back by parse_field's YAML
        return artifact_words(value)
    if kind == "any" and not isinstance(value, str):
        return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
    return "" if value is None else str(value)


class CheckEditor(Vertical):
    @dataclass
    class Changed(Message):
        editor: CheckEditor

    def __init__(self, checks: list[dict[str, Any]], id: str | None = None) -> None:
        super().__init__(id=id)
        self.checks = [dict(c) for c in checks]

    def compose(self) -> ComposeResult:
        yield CheckList(id="check-list")
        with Horizontal(classes="row-buttons"):
            yield Select([(f"{t} — {s.summary}", t) for t, s in CHECK_SPECS.items()], id="check-type",
                         prompt="check type…", allow_blank=True)
            yield Button("Add", id="check-add")
            yield Button("Update", id="check-update")
            yield Button("Delete", id="check-delete")
            yield Button("↑", id="check-up")
            yield Button("↓", id="check-down")
        yield Vertical(id="check-fields")
        yield Static("", id="check-problem", classes="field-error -empty")

    @unless_removed
    def on_mount(self) -> None:
        self._refill()

    def _refill(self, highlight: int | None = None) -> None:
        ol = self.query_one("#check-list", OptionList)
        ol.clear_options()
        ol.add_options([Text(f"{i + 1}. {describe_check(c)}") for i, c in enumerate(self.checks)])
        if self.checks:
            ol.highlighted = min(highlight or 0, len(self.checks) - 1)

    def add_check(self, check: dict[str, Any]) -> None:
        """A rule check added before the first llm_judge check (rule checks run first: they cost nothing)."""
        at = next((n for n, c in enumerate(self.checks) if c.get("type") == "llm_judge"), len(self.checks))
        self.checks.insert(at, dict(check))
        self._changed(at)

    def _changed(self, highlight: int | None) -> None:
        self._refill(highlight)
        self.post_message(self.Changed(self))

    @property
    def current_index(self) -> int:
        h = self.query_one("#check-list", OptionList).highlighted
        return -1 if h is None else h

    @property
    def chosen_type(self) -> str | None:
        value = self.query_one("#check-type", Select).value
        return value if isinstance(value, str) else None

    def visible_fields(self, ctype: str) -> list[tuple[str, str]]:
        spec = CHECK_SPECS[ctype]
        return [(k, kind) for k, kind in spec.fields.items() if k not in HIDDEN_FIELDS.get(ctype, ())]

    async def show_fields(self, ctype: str | None, values: dict[str, Any] | None = None) -> None:
        box = self.query_one("#check-fields", Vertical)
        await box.remove_children()
        if ctype is None:
            return
        spec, values = CHECK_SPECS[ctype], values or {}
        widgets = []
        for key, kind in self.visible_fields(ctype):
            need = field_need(spec, key)
            hint = f" (separate with {LIST_SEP})" if kind in ("paths", "strs") else ""
            row = Horizontal(Label(f"{key}", classes="field-label"),
                             Input(format_field(kind, values.get(key)), id=f"cf-{key}",
                                   placeholder=f"{KIND_WORDS[kind]}, {need}{hint}"), classes="pair")
            widgets.append(row)
        await box.mount_all(widgets)

    def form_values(self, ctype: str) -> dict[str, Any]:
        out: dict[str, Any] = {"type": ctype}
        for key, kind in self.visible_fields(ctype):
            text = self.query_one(f"#cf-{key}", Input).value
            if text.strip():
                out[key] = parse_field(kind, text)
        return out

    @on(Select.Changed, "#check-type")
    async def _type_changed(self, event: Select.Changed) -> None:
        event.stop()
        current = self.checks[self.current_index] if 0 <= self.current_index < len(self.checks) else {}
        same = current.get("type") == self.chosen_type
        await self.show_fields(self.chosen_type, current if same else None)

    def _say(self, problem: str) -> None:
        shown = self.query_one("#check-problem", Static)
        shown.update(Text(problem))
        shown.set_class(not problem, "-empty")

    @on(CheckList.TypeWanted)
    def _type_wanted(self, event: CheckList.TypeWanted) -> None:
        event.stop()
        select = self.query_one("#check-type", Select)
        select.focus()
        select.action_show_overlay()

    @on(OptionList.OptionHighlighted, "#check-list")
    async def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.checks):
            check = self.checks[event.option_index]
            select = self.query_one("#check-type", Select)
            with select.prevent(Select.Changed):
                select.value = check["type"]
            await self.show_fields(check["type"], check)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        what, i = (event.button.id or "").removeprefix("check-"), self.current_index
        ctype = self.chosen_type
        if what in ("add", "update") and ctype and (what == "add" or 0 <= i < len(self.checks)):
            check = self.form_values(ctype)
            why = check_problem(check)
            self._say(f"not {'added' if what == 'add' else 'updated'}: {why}" if why else "")
            if why:
                return
            if what == "add":
                self.checks.append(check)
                self._changed(len(self.checks) - 1)
            else:
                kept = {k: v for k, v in self.checks[i].items() if k in HIDDEN_FIELDS.get(ctype, ())}
                self.checks[i] = {**check, **kept}
                self._changed(i)
        elif what == "delete" and 0 <= i < len(self.checks):
            del self.checks[i]
            self._changed(i)
        elif what in ("up", "down"):
            j = i + (-1 if what == "up" else 1)
            if 0 <= i < len(self.checks) and 0 <= j < len(self.checks):
                self.checks[i], self.checks[j] = self.checks[j], self.checks[i]
                self._changed(j)
