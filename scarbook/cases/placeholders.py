"""The words an imported draft holds where its transcript gave none: a task and a rubric item that say TODO.

A draft is a case and runs as one, but a placeholder is no one's words: the agent would be sent the task's TODO,
and the judge would grade the item's TODO (whatever it answers says nothing of the incident). So a placeholder
item never certifies a scar (tools/verify.py), lint names each one, and a session says so before its runs.
"""

from __future__ import annotations

from typing import Any

from scarbook.models import Case

TASK_PLACEHOLDER = "TODO: write the instruction the agent was given"
RUBRIC_PLACEHOLDER = "TODO: say what the answer must do; the failed artifact must FAIL this item"


def is_placeholder_task(task: str) -> bool:
    """The import's TODO task (with, after it, why the log held no prompt, when the reader knows)."""
    return task.strip().startswith(TASK_PLACEHOLDER)


def is_placeholder_item(item: Any) -> bool:
    """A rubric item (its words, or `{id, text}`) that is the import's placeholder."""
    return (item.get("text") if isinstance(item, dict) else item) == RUBRIC_PLACEHOLDER


def placeholder_items(case: Case) -> list[tuple[int, int]]:
    """(check index, item index) of each placeholder item of the case's judges."""
    return [(ci, ii) for ci, check in enumerate(case.checks) if check.is_judge
            for ii, item in enumerate(check.params.get("rubric") or []) if is_placeholder_item(item)]


def write_it_hint(case: Case) -> str:
    """Where to write what a placeholder stands for."""
    where = str(case.root / "case.yaml") if case.root is not None else "its case.yaml"
    return f"write it in {where}, or draft the rubric from the incident with `scarbook rubric draft {case.id}`"


def placeholder_note(case: Case, *, judged: bool) -> str | None:
    """What a session says before its runs of a case that still holds the import's placeholders (None: none)."""
    said = []
    if is_placeholder_task(case.task):
        said.append("its task is still the import's TODO: the agent is sent it as written")
    items = placeholder_items(case)
    if items and judged:
        where = ", ".join(f"check {ci + 1} item {ii + 1}" for ci, ii in items)
        said.append(f"{where} {'is' if len(items) == 1 else 'are'} still the import's TODO: the judge grades it as "
                    "written, which says nothing of the incident")
    if not said:
        return None
    where = str(case.root / "case.yaml") if case.root is not None else "its case.yaml"
    return f"{case.id}: {'; '.join(said)} — write {'them' if len(said) > 1 else 'it'} in {where}"
