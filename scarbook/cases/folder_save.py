"""Saving a case with its files all or nothing, never seen half-done (the editor's save, a draft from a run).

    path = save_case_folder(project, case, is_new=True, files={"scar/a.txt": b"..."}, put={"seed/x": src})

A **new** case is built whole in a hidden folder beside its place in cases/ (`admin.new_case_folder`:
load_cases, lint and the library skip hidden folders) and renamed into place: a reader sees no case or
the whole case, with its seed — never a case.yaml whose seed is still being copied.
An **edited** case changes in place, in the order a reader can live with: the new files are copied into
a hidden folder inside the case first (the slow part, where a missing source or a full disk shows up),
then the files they replace or the removed ones are moved aside there, the new ones renamed into place,
and case.yaml — which may name them — is written last, atomically (temp + os.replace). A failure at any
step puts back what was moved: the case is as it was, and the hidden folder goes.

Every failure is a CaseError naming the file and the fix, with "nothing was saved".
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from scarbook.cases.admin import PARTIAL, _clean_partials, _Lock, case_taken
from scarbook.cases.folders import ProjectFolders
from scarbook.cases.io import CASE_FILE, case_to_dict, save_case, validate_case_data
from scarbook.cases.lineage import CaseIdLog, IdEntry, fresh_start, now_stamp
from scarbook.errors import CaseError, ScarbookError
from scarbook.fs.files import describe_os_error, move_into_place, sync_directory
from scarbook.fs.paths import resolve_inside
from scarbook.models import Case

NOTHING_SAVED = "nothing was saved"


def _record_fresh_start(project: ProjectFolders, log: CaseIdLog, case_id: str) -> tuple[IdEntry | None, IdEntry | None]:
    """Under the lock: the id's `since` set to now when runs are recorded under it; (before, after)."""
    from scarbook.history.store import History

    prior = log.load().get(case_id)
    sessions = [(s.id, s.started_at) for s in History(project.workspaces_dir).sessions() if case_id in s.case_ids]
    entry = fresh_start(prior, sessions, now_stamp())
    if entry != prior:
        log.update({case_id: entry})
    return prior, entry


@contextmanager
def new_case_folder(project: ProjectFolders, case_id: str) -> Iterator[Path]:
    """A new case folder cases/<case_id>/ that appears whole or not at all. Yields a hidden folder in
    cases/ (cases/.scarbook-partial-<id>-<token>/: load_cases, lint and the library skip hidden folders)
    to write the case into as if it were cases/ — `staging / case_id` is the case's folder, so anything
    that writes a case into a cases folder (save_case, write_draft_case) writes it there, its folder
    named for its id — then renames that folder into place. All under the case lock (a duplicate's
    clean-up of crashed partials never takes a save's). When runs are recorded under the id (a case whose
    folder was removed by hand), its `since` is recorded first, so the new case starts with no runs. When
    the writing fails (or is interrupted) the hidden folder goes and the id log is put back: no case, no
    leftover."""
    dest = project.cases_dir / case_id
    log = CaseIdLog(project.workspaces_dir)
    with _Lock(project):
        if os.path.lexists(dest):
            raise case_taken(case_id, dest)
        prior, entry = _record_fresh_start(project, log, case_id)
        staging = project.cases_dir / f"{PARTIAL}{case_id}-{secrets.token_hex(4)}"
        try:
            _clean_partials(project.cases_dir)
            staging.mkdir(parents=True)
            yield staging
            if os.path.lexists(dest):
                raise case_taken(case_id, dest)
            try:  # never over a folder made at its name since the check (os.rename would replace an empty one)
                move_into_place(staging / case_id, dest)
            except FileExistsError:
                raise case_taken(case_id, dest) from None
        except BaseException:
            if entry != prior:
                log.update({case_id: prior})
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    sync_directory(project.cases_dir)


def shown_path(path: str | Path) -> str:
    """A path inside a case being built (cases/.scarbook-partial-<id>-<token>/<id>/...) as the user knows it
    once the case is in place (cases/<id>/...): an error names the case, never the hidden folder."""
    return re.sub(rf"{re.escape(PARTIAL)}(.+?)-[0-9a-f]{{8}}[/\\]\1(?=$|[/\\])", r"\1", os.fspath(path))


def save_case_folder(project: ProjectFolders, case: Case, *, is_new: bool, files: Mapping[str, bytes | Path],
                     put: Mapping[str, Path] | None = None, drop: Iterable[str] = ()) -> Path:
    """Write case.yaml with its files; returns its path. `files` (path in the case folder -> content or
    source) are written where the folder has no such file yet (a scar file saved before stays); `put`
    (path -> source) replaces what is there (the seed files added in a form); `drop` (paths) are
    removed when they are files. Raises CaseError (the case as it was) when it is not saved."""
    folder = project.cases_dir / case.id
    validate_case_data(case_to_dict(case), folder / CASE_FILE, folder)  # refused before anything is copied
    put = dict(put or {})
    try:
        if is_new or not os.path.lexists(folder):  # an edited case whose folder went meanwhile is new again
            with new_case_folder(project, case.id) as staging:
                for rel, content in {**files, **put}.items():
                    _copy_in(staging / case.id, rel, content)
                save_case(case, staging)
            case.root = folder
            return folder / CASE_FILE
        wanted = {rel: c for rel, c in files.items() if not os.path.lexists(resolve_inside(folder, rel))}
        return _update_in_place(case, project.cases_dir, {**wanted, **put}, set(drop))
    except CaseError:
        raise
    except ScarbookError as exc:  # the id taken meanwhile, case-ids.json damaged, another scarbook holding the lock
        raise CaseError(folder, str(exc)) from exc
    except OSError as exc:
        raise write_error(exc, folder, project.cases_dir) from exc


def _update_in_place(case: Case, cases_dir: Path, new: dict[str, bytes | Path], drop: set[str]) -> Path:
    folder = cases_dir / case.id
    _clean_stale(folder)
    stage = folder / f"{PARTIAL}{secrets.token_hex(4)}"
    aside: list[str] = []
    placed: list[str] = []
    made: list[Path] = []
    try:
        for rel, content in new.items():  # the slow part first: nothing in the case has changed yet
            _copy_in(stage / "new", rel, content)
        for rel in sorted(drop | set(new)):
            resolve_inside(folder, rel)  # refused when it leads out of the case
            target = folder / rel
            if target.is_symlink() or target.is_file():
                _move(target, stage / "old" / rel, made=None)
                aside.append(rel)
        for rel in new:
            _move(stage / "new" / rel, folder / rel, made=made)
            placed.append(rel)
        path = save_case(case, cases_dir)  # last: case.yaml names only files already in place
    except BaseException:
        if _put_back(folder, stage, placed, aside, made):
            shutil.rmtree(stage, ignore_errors=True)
        raise
    shutil.rmtree(stage, ignore_errors=True)
    return path


def _put_back(folder: Path, stage: Path, placed: list[str], aside: list[str], made: list[Path]) -> bool:
    """Undo a failed edit: the new files out, the old ones back. False when an old file could not go back
    (it stays in the hidden folder, not lost)."""
    for rel in reversed(placed):
        (folder / rel).unlink(missing_ok=True)
    whole = True
    for rel in reversed(aside):
        try:
            os.rename(stage / "old" / rel, folder / rel)
        except OSError:
            whole = False
    for made_dir in reversed(made):
        try:
            made_dir.rmdir()
        except OSError:
            pass
    return whole


def _move(src: Path, dst: Path, *, made: list[Path] | None) -> None:
    missing = [p for p in (dst.parent, *dst.parent.parents) if not p.exists()]
    dst.parent.mkdir(parents=True, exist_ok=True)
    if made is not None:
        made.extend(reversed(missing))
    os.rename(src, dst)


def _copy_in(into: Path, rel: str, content: bytes | Path) -> None:
    """One file into the folder being built: `content`'s bytes, or a copy of the file it names."""
    target = resolve_inside(into, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(content, Path):
        target.write_bytes(content)
        return
    try:
        shutil.copy2(content, target)
    except OSError as exc:
        if exc.filename not in (str(content), content) or exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # the write failed, not the read: write_error names the case's folder
        raise CaseError(content, f"{'seed' if rel.startswith('seed/') else 'scar'} file {Path(rel).name} could "
                        f"not be copied: {describe_os_error(exc)}",
                        fix=f"attach it again from where it is now, or remove it from the form; {NOTHING_SAVED}") from exc


def write_error(exc: OSError, folder: Path, cases_dir: Path) -> CaseError:
    """A write that failed (a read-only cases/, a full disk): named by the case's own path, not the hidden
    folder it was built in."""
    where = cases_dir if not folder.exists() else folder
    return CaseError(folder, f"could not write the case: {describe_os_error(exc)}",
                     fix=f"make {where} a writable folder with free space; {NOTHING_SAVED}")


def _clean_stale(folder: Path) -> None:
    """What an edit that crashed left inside the case folder (hidden: never part of the case)."""
    for p in folder.iterdir() if folder.is_dir() else ():
        if p.name.startswith(PARTIAL) and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
