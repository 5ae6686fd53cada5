"""Saving a case from a form (the TUI's case editor), without Textual: the id check, the scar files a
field names that must be copied into the case folder, and the seed files staged in the form, written
with the case all or nothing (cases/folder_save.py).

    saved = save_form_case(project, case, is_new=True, staged={}, seed=SeedChanges())

Every refusal is a CaseError with the words the editor shows ("id is empty", "id 'x' is taken by
another case", "could not write the case: ...", "seed file x could not be copied: ..."); the disk is
touched only when the case is valid, and a refused save leaves it as it was.
It reads and copies files, so a front-end calls it off its UI thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.cases.folder_save import save_case_folder
from scarbook.cases.folders import ProjectFolders
from scarbook.cases.io import MAX_ID_CHARS, case_to_dict, validate_case_data
from scarbook.errors import CaseError
from scarbook.models import Case

SCAR_FIELDS = ("failed_artifact", "good_artifact")  # a path typed here may name a file to copy into scar/


@dataclass
class SeedChanges:
    """The seed files staged in a form: names in seed/ to add (from a source on disk) or remove."""

    add: dict[str, Path] = field(default_factory=dict)
    remove: set[str] = field(default_factory=set)


@dataclass
class SavedCase:
    case: Case  # as written (scar fields point at the copies in scar/)
    path: Path  # its case.yaml
    moved: dict[str, str] = field(default_factory=dict)  # scar field -> the scar/ path its file was copied to
    seed_listing: list[str] = field(default_factory=list)  # seed/ after the changes


def check_form_id(cases_dir: Path, case_id: str, *, is_new: bool) -> None:
    """The id a form gives: not empty and, for a new case, not taken by another case's folder."""
    if not case_id:
        raise CaseError(Path(cases_dir) / "case.yaml", "id is empty",
                        fix="type an id: lowercase letters, digits, '-' and '_'")
    if len(case_id) > MAX_ID_CHARS:  # (looked up on disk, a name over 255 bytes raises ENAMETOOLONG)
        raise CaseError(Path(cases_dir) / "case.yaml", f"id is {len(case_id)} characters long; at most {MAX_ID_CHARS}",
                        fix="use a shorter id: it names the case's folder")
    if is_new and (Path(cases_dir) / case_id).exists():
        raise CaseError(Path(cases_dir) / case_id, f"id {case_id!r} is taken by another case", fix="choose another id")


def form_problem(cases_dir: Path, case: Case, *, is_new: bool) -> CaseError | None:
    """What a save of the form would refuse now, without writing (the id, then the core's
    validation of the fields), or None. A front-end re-asks it as the form changes, so a refusal it
    showed goes once it is no longer true ("checks must be a non-empty list" after a check is added)."""
    try:
        check_form_id(cases_dir, case.id, is_new=is_new)
        validate_case_data(case_to_dict(case), Path(cases_dir) / case.id / "case.yaml")
    except CaseError as exc:
        return exc
    return None


def scar_files_to_write(project: ProjectFolders, case: Case,
                        staged: dict[str, bytes | Path]) -> tuple[dict[str, bytes | Path], dict[str, str]]:
    """The scar files the case names that are not in its folder yet: a draft's `staged` evidence, or a
    file typed into an artifact field (absolute, ~, or relative to the project), copied to scar/<name>.
    Returns (files to write by their path in the case folder, scar field -> its new scar/ path)."""
    files: dict[str, bytes | Path] = {}
    moved: dict[str, str] = {}
    if case.scar is None:
        return files, moved
    folder = project.cases_dir / case.id
    for key in (*SCAR_FIELDS, "transcript"):
        rel = getattr(case.scar, key)
        if not rel:
            continue
        src = Path(os.path.expanduser(rel))
        if not src.is_absolute() and (folder / rel).exists():
            continue  # in the case folder already (an absolute path joined to it would be itself)
        if rel in staged:
            files[rel] = staged[rel]
            continue
        src = src if src.is_absolute() else project.root / src
        if key in SCAR_FIELDS and src.is_file():
            files[f"scar/{src.name}"] = src
            moved[key] = f"scar/{src.name}"
    return files, moved


def list_seed(seed_dir: Path | None) -> list[str]:
    if seed_dir is None or not seed_dir.is_dir():
        return []
    return sorted(str(p.relative_to(seed_dir)) for p in seed_dir.rglob("*") if p.is_file())


def save_form_case(project: ProjectFolders, case: Case, *, is_new: bool, staged: dict[str, bytes | Path],
                   seed: SeedChanges) -> SavedCase:
    """Check the id, then save the case with the scar files its fields name and the seed changes, all or
    nothing (cases/folder_save.py: a new case appears whole, an edit writes case.yaml last). Raises
    CaseError when the case is not saved; the folder is then as it was."""
    check_form_id(project.cases_dir, case.id, is_new=is_new)
    files, moved = scar_files_to_write(project, case, staged)
    for key, rel in moved.items():
        setattr(case.scar, key, rel)
    path = save_case_folder(project, case, is_new=is_new, files=files,
                            put={f"seed/{name}": src for name, src in seed.add.items()},
                            drop={f"seed/{name}" for name in seed.remove})
    return SavedCase(case, path, moved, list_seed(path.parent / "seed"))
