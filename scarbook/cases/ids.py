"""Case ids: the one place that checks a new id and makes a taken one unique.

A case id names its folder (cases/<id>/), so it is typed and read often: lowercase words joined by
'-', short, and never silently the same as another case's.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from pathlib import Path

from scarbook.cases.io import ID_PATTERN, MAX_ID_CHARS
from scarbook.errors import ScarbookError

ID_WORDS = 6  # a few words of the task, not all of it
ID_CHARS = 48


def unique_id(base: str, taken: Container[str]) -> str:
    """`base`, or `base-2`, `base-3`, ... : the first one not in `taken`."""
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def free_case_id(cases_dir: Path, base: str) -> str:
    """A unique id whose folder does not exist yet under `cases_dir`."""
    return unique_id(base, _Folders(Path(cases_dir)))


def suggest_case_id(task: str, taken: Container[str] = frozenset()) -> str:
    """A slug of the task's first words ("extract-the-first-line-of-readme"), made unique
    against `taken`; "imported-scar" when the task has no words."""
    words = re.findall(r"[a-z0-9]+", task.lower())[:ID_WORDS]
    return unique_id("-".join(words)[:ID_CHARS].strip("-") or "imported-scar", taken)


def no_such_cases(cases_dir: Path, ids: Sequence[str], invalid: Container[str] = frozenset()) -> ScarbookError:
    """The one line every command that takes a case id says (exit 2) for ids that name no case in `cases_dir`
    (`invalid`: those whose folder is there but whose case.yaml is invalid, its problem shown above)."""
    named = [f"{i!r} (its case.yaml is invalid, see above)" if i in invalid else repr(i) for i in ids]
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
    return ScarbookError(f"no case {listed} in {cases_dir} — `scarbook list` shows the cases")


def check_case_id_form(case_id: str) -> None:
    """Refuse an empty, malformed or overlong id (before any look at the disk: '..' names a folder that exists)."""
    if not case_id:
        raise ScarbookError("type a case id: lowercase letters, digits, '-' and '_' (it names the folder cases/<id>/)")
    if not ID_PATTERN.match(case_id):
        raise ScarbookError(f"case id {case_id!r} is not valid: use lowercase letters, digits, '-' and '_', "
                            "starting with a letter or digit")
    if len(case_id) > MAX_ID_CHARS:
        raise ScarbookError(f"case id {case_id[:24]!r}… is {len(case_id)} characters long; at most {MAX_ID_CHARS} "
                            "(it names the folder cases/<id>/)")


def check_new_case_id(cases_dir: Path, case_id: str) -> None:
    """Refuse an empty, malformed, overlong or taken id with the words the screens show."""
    check_case_id_form(case_id)
    if (Path(cases_dir) / case_id).exists():
        raise ScarbookError(f"a case named {case_id!r} already exists ({Path(cases_dir) / case_id}); choose another id")


class _Folders:
    """`id in folders` is True when cases_dir/id exists (a Container over the disk)."""

    def __init__(self, cases_dir: Path) -> None:
        self.cases_dir = cases_dir

    def __contains__(self, case_id: object) -> bool:
        return isinstance(case_id, str) and (self.cases_dir / case_id).exists()
