"""Saving a case from a form (the TUI's case editor), without Textual: the id check, the scar files a
field names that must be copied into the case folder, the write, and the seed files staged in the form.

    saved = save_form_case(project, case, is_new=True, staged={}, seed=SeedChanges())

Every refusal is a CaseError with the words the editor shows ("id is empty", "id 'x' is taken by
another case", "could not write the case: ..."); the disk is touched only when the case is valid.
It reads and copies files, so a front-end calls it off its UI thread.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.cases.admin import new_case_id
from scarbook.cases.drafts import write_case_with_files
from scarbook.cases.folders import ProjectFolders
from scarbook.cases.io import case_to_dict, validate_case_data
from scarbook.errors import CaseError, ScarbookError
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
    seed_problem: str = ""  # the case was saved, but a seed file could not be copied or removed


def check_form_id(cases_dir: Path, case_id: str, *, is_new: bool) -> None:
    """The id a form gives: not empty and, for a new case, not taken by another case's folder."""
    if not case_id:
        raise CaseError(Path(cases_dir) / "case.yaml", "id is empty",
                        fix="type an id: lowercase letters, digits, '-' and '_'")
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


def apply_seed_changes(seed_dir: Path, seed: SeedChanges) -> list[str]:
    """Delete the removed seed files, copy the added ones in; returns seed/'s files afterwards."""
    for name in seed.remove:
        target = seed_dir / name
        if target.is_file():
            target.unlink()
    for name, src in seed.add.items():
        target = seed_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return list_seed(seed_dir)


def list_seed(seed_dir: Path | None) -> list[str]:
    if seed_dir is None or not seed_dir.is_dir():
        return []
    return sorted(str(p.relative_to(seed_dir)) for p in seed_dir.rglob("*") if p.is_file())


def save_form_case(project: ProjectFolders, case: Case, *, is_new: bool, staged: dict[str, bytes | Path],
                   seed: SeedChanges) -> SavedCase:
    """Check the id, copy the scar files the fields name, write the case (validated: nothing invalid is
    written), then apply the seed changes. Raises CaseError when the case is not saved."""
    check_form_id(project.cases_dir, case.id, is_new=is_new)
    files, moved = scar_files_to_write(project, case, staged)
    for key, rel in moved.items():
        setattr(case.scar, key, rel)
    try:
        with new_case_id(project, case.id):
            path = write_case_with_files(case, project.cases_dir, files)
    except CaseError:
        raise
    except ScarbookError as exc:  # case-ids.json damaged, or another scarbook holding its lock
        raise CaseError(project.cases_dir / case.id, str(exc)) from exc
    except OSError as exc:
        raise CaseError(project.cases_dir / case.id, f"could not write the case: {exc.strerror or exc}",
                        fix="check the folder's permissions and free space") from exc
    saved = SavedCase(case, path, moved)
    try:
        saved.seed_listing = apply_seed_changes(path.parent / "seed", seed)
    except OSError as exc:
        saved.seed_problem = f"seed files not all copied: {exc.strerror or exc}" + (
            f" ({exc.filename})" if exc.filename else "")
        saved.seed_listing = list_seed(path.parent / "seed")
    return saved
