"""The trash of deleted cases: delete a case to it, restore one from it, and purge it (delete for good).

The trash is `workspaces/.trash/` (git-ignored with the rest of workspaces/, and never read by eval,
list or lint, which load only cases/). Each deletion is a folder of its own:

    workspaces/.trash/<id>--<UTC time>/trashed.json   case id, when, from where (and its case-ids entry)
    workspaces/.trash/<id>--<UTC time>/case/          the case folder, moved whole

workspaces/ is where agents run, so anything in the trash may have been planted: a deletion folder or
its case/ that is a symlink is listed with a problem, never restored, and purging it removes the link
only. Purging never follows a link: the trash itself must be a real folder, and each removal deletes
the link or walks the folder without following links in it (shutil.rmtree's fd-based walk).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scarbook.cases.admin import (
    _Lock,
    _move_dir,
    case_folder,
    check_folder_name,
    real_trash_dir,
    refuse_running,
    refuse_unwritable,
    remove_no_follow,
    trash_dir,
)
from scarbook.cases.folders import ProjectFolders
from scarbook.cases.ids import unique_id
from scarbook.cases.io import load_case
from scarbook.cases.lineage import CaseIdLog, IdEntry, now_stamp
from scarbook.errors import ScarbookError
from scarbook.fs.files import atomic_write_text, describe_os_error, read_regular_bytes

ENTRY_FILE = "trashed.json"


@dataclass
class TrashEntry:
    name: str  # the folder in the trash, e.g. write-one-line--20261203T151500Z
    case_id: str
    trashed_at: str
    origin: str  # the folder it was deleted from
    title: str
    path: Path
    id_entry: dict | None = None  # its case-ids.json entry before the deletion
    problem: str = ""  # why it cannot be restored (a planted link): purging removes it


def _title_of(folder: Path) -> str:
    try:
        return load_case(folder).title
    except (ScarbookError, OSError):
        return "(invalid case)"


def trash_case(project: ProjectFolders, case_id: str) -> TrashEntry:
    """Move cases/<id>/ into the trash. Its runs stay in history, under its id."""
    folder = case_folder(project, case_id)
    refuse_running(project, case_id)
    refuse_unwritable(project, f"delete {case_id}", project.cases_dir, *([] if folder.is_symlink() else [folder]))
    with _Lock(project):
        now = datetime.now(UTC)
        base = f"{case_id}--{now.strftime('%Y%m%dT%H%M%SZ')}"
        taken = {p.name for p in trash_dir(project).iterdir()}
        while True:  # two deletions of one id in one second get -2, -3, ...
            name = unique_id(base, taken)
            try:
                (trash_dir(project) / name).mkdir()
                break
            except FileExistsError:
                taken.add(name)
        place = trash_dir(project) / name
        log = CaseIdLog(project.workspaces_dir)
        prior = log.load().get(case_id)
        try:
            origin = str(folder.relative_to(project.root))
        except ValueError:
            origin = str(folder)
        entry = TrashEntry(name, case_id, now.isoformat(), origin, _title_of(folder), place,
                           vars(prior) if prior else None)
        meta = {k: v for k, v in vars(entry).items() if k not in ("path", "name", "problem")}
        atomic_write_text(place / ENTRY_FILE, json.dumps(meta, indent=1))
        try:
            _move_dir(folder, place / "case")
        except BaseException:
            shutil.rmtree(place, ignore_errors=True)
            raise
        log.update({case_id: IdEntry(since=now_stamp())})  # a later case with this id starts afresh
    return entry


def _real_trash(project: ProjectFolders) -> Path | None:
    """The trash folder, None when there is none; a link in its place is refused."""
    folder = real_trash_dir(project)
    return folder if folder.is_dir() else None


def _link_problem(path: Path, name: str) -> str:
    return (f"{path} is a symlink to {os.readlink(path)}, not a case scarbook deleted (planted?): it is never "
            f"restored — `scarbook case purge {name}` removes the link only")


def list_trash(project: ProjectFolders) -> list[TrashEntry]:
    """What is in the trash, newest first. A folder without case/ (a deletion cut short before its
    move, or a restore cut short after it) holds nothing to restore and is left out; a deletion folder
    or case/ that is a symlink is listed with its problem (it is never restored, only purged)."""
    folder = _real_trash(project)
    if folder is None:
        return []
    out = []
    for place in folder.iterdir():
        if place.name.startswith("."):
            continue
        for link in (place, place / "case"):
            if link.is_symlink():
                out.append(TrashEntry(place.name, place.name.split("--")[0], "", "?", "(a symlink)", place,
                                      problem=_link_problem(link, place.name)))
                break
        else:
            if (place / "case").is_dir():
                out.append(_read_entry(place))
    out.sort(key=lambda e: (e.trashed_at, e.name), reverse=True)
    return out


def _read_entry(place: Path) -> TrashEntry:
    try:
        meta = json.loads(read_regular_bytes(place / ENTRY_FILE, limit=1_000_000).decode("utf-8"))
        return TrashEntry(place.name, str(meta["case_id"]), str(meta["trashed_at"]), str(meta["origin"]),
                          str(meta.get("title", "")), place, meta.get("id_entry"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return TrashEntry(place.name, place.name.split("--")[0], "", "?", "(no trashed.json)", place)


def _find(project: ProjectFolders, ref: str) -> list[TrashEntry]:
    entries = list_trash(project)
    hits = [e for e in entries if e.name == ref] or [e for e in entries if e.case_id == ref]
    if not hits:
        raise ScarbookError(f"nothing named {ref!r} in the trash ({trash_dir(project)}) — "
                            "`scarbook case trash` lists what can be restored")
    return hits


def restore_case(project: ProjectFolders, ref: str) -> TrashEntry:
    """Put a trashed case back: `ref` is a case id (its latest deletion) or a trash folder's name."""
    entry = _find(project, ref)[0]
    if entry.problem:
        raise ScarbookError(entry.problem)
    check_folder_name(entry.case_id)  # trashed.json lives under workspaces/: never trust it with a path
    dest = project.cases_dir / entry.case_id
    refuse_unwritable(project, f"restore {entry.case_id}", project.cases_dir, entry.path, entry.path / "case")
    with _Lock(project):
        if os.path.lexists(dest):
            raise ScarbookError(f"cannot restore {entry.case_id}: a case named {entry.case_id!r} exists again "
                                f"({dest}) — rename it first (scarbook case mv {entry.case_id} NEW-ID), "
                                "then restore again")
        project.cases_dir.mkdir(parents=True, exist_ok=True)
        _move_dir(entry.path / "case", dest)
        try:
            prior = IdEntry(**entry.id_entry) if isinstance(entry.id_entry, dict) else None
        except TypeError:  # a damaged note: the id then counts every run recorded under it
            prior = None
        CaseIdLog(project.workspaces_dir).update({entry.case_id: prior})  # its runs are its own again
        shutil.rmtree(entry.path, ignore_errors=True)
    return entry


def to_purge(project: ProjectFolders, ref: str | None) -> list[TrashEntry]:
    """What `purge_trash` would delete: every entry (ref None), the entry named `ref`, or every
    deletion of the case id `ref`."""
    return list_trash(project) if ref is None else _find(project, ref)


def purge_trash(project: ProjectFolders, entries: list[TrashEntry]) -> list[TrashEntry]:
    """Delete these trash entries for good (their case-ids entries stay: the runs recorded under the id
    still belong to the deleted case). Returns what was deleted."""
    done: list[TrashEntry] = []
    with _Lock(project):
        folder = _real_trash(project)
        for entry in entries:
            place = entry.path
            if folder is None or place.parent != folder or place.name != entry.name or place.name.startswith("."):
                raise ScarbookError(f"{place} is not an entry of the trash {trash_dir(project)}: not deleted")
            try:
                remove_no_follow(place)
            except OSError as exc:
                raise ScarbookError(f"could not delete {place}: {describe_os_error(exc)}"
                                    + (f" (deleted before it: {', '.join(e.name for e in done)})" if done else "")
                                    ) from None
            done.append(entry)
    return done
