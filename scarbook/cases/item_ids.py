"""Rubric item ids written into case.yaml when an item is first judged (issue 35.3).

An item's id is its words' id until it is written (models/rubric.py), so the judgements recorded before the
write and after it carry the same id. Written, it stays with the item through a reorder and through a
rewording that keeps it. The case is read again from disk for the write (never the copy a session loaded a
while ago, which would undo an edit made since) and saved through save_case: atomic, the file's comments and
styles kept (fs/yaml_edit.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from scarbook.cases.io import load_case, save_case
from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error
from scarbook.models import Case


def unwritten(case: Case) -> bool:
    """Some rubric item of the case has no id in case.yaml yet."""
    return any(set(c.rubric_ids) - c.written_ids for c in case.judge_checks)


def write_item_ids(cases: Iterable[Case]) -> list[str]:
    """Write every rubric item's id beside it in each case's case.yaml (those not written yet). Returns what
    could not be written, one line each (the ids stay their words' ids until a later write succeeds)."""
    problems = []
    for case in cases:
        if case.root is None or not unwritten(case):
            continue
        try:
            fresh = load_case(case.root)
            if not unwritten(fresh):
                continue
            for check in fresh.judge_checks:
                check.written_ids = frozenset(check.rubric_ids)
            save_case(fresh, case.root.parent)
        except (ScarbookError, OSError) as exc:
            why = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
            problems.append(f"rubric item ids of {case.id} not written to case.yaml: {why}")
    return problems
