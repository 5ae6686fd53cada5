"""Managing the scar collection's case folders: rename and duplicate, and what every step shares (the
lock, moving and copying folders); deleting to the trash, restoring and purging are case_trash.py's.

Moves are one `os.rename` (a case is in cases/ or in the trash, never in neither); across
filesystems a move copies to a hidden folder, renames it into place, then removes the original.
A duplicate is copied to a hidden `cases/.scarbook-partial-*` folder (load_cases skips hidden
folders) and renamed into place whole; so is a new case saved (cases/folder_save.py's `new_case_folder`, under this lock). A rename moves the folder, then rewrites the `id:` line of
its case.yaml atomically: a crash between the two leaves a case whose id differs from its folder,
which eval refuses with a message naming the fix — never a case that runs under the wrong id.
History stays under the id a case ran as (see case_lineage.py).
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import stat
from pathlib import Path

import yaml
from filelock import FileLock, Timeout

from scarbook.cases.folders import ProjectFolders
from scarbook.cases.ids import check_new_case_id, free_case_id, no_such_cases
from scarbook.cases.io import CASE_FILE, case_to_dict, load_case, validate_case_data
from scarbook.cases.lineage import CaseIdLog, IdEntry, now_stamp, renamed
from scarbook.errors import CaseError, HistoryError, ScarbookError
from scarbook.fs.files import atomic_write_text, describe_os_error, move_into_place, read_regular_bytes, unwritable_why
from scarbook.fs.yamlio import dump_yaml, line_of, load_yaml_text
from scarbook.models import Case
from scarbook.models.words import SessionState

TRASH = ".trash"
PARTIAL = ".scarbook-partial-"
LOCK_WAIT_S = 30.0


def trash_dir(project: ProjectFolders) -> Path:
    return project.workspaces_dir / TRASH


def real_trash_dir(project: ProjectFolders) -> Path:
    """The trash folder, refused when a link stands in its place (workspaces/ is where agents run):
    moving cases into it, or purging through it, would act wherever it points."""
    folder = trash_dir(project)
    if folder.is_symlink():
        raise ScarbookError(f"{folder} is a symlink to {os.readlink(folder)}: scarbook reads and empties only a "
                            f"real trash folder — remove the link (rm {folder}); what it points to is not scarbook's")
    return folder


def refuse_unwritable(project: ProjectFolders, doing: str, *folders: Path) -> None:
    """Before anything moves: a ScarbookError naming the first of `folders` (case folders, cases/) or the
    trash that cannot be written, and the fix — never an OSError halfway through a move."""
    trash = real_trash_dir(project)
    for folder in (*folders, trash):
        why = unwritable_why(folder)
        if why:
            where = next((p for p in (folder, *folder.parents) if p.exists()), folder)
            key = "workspaces_dir" if folder == trash else "cases_dir"
            raise ScarbookError(f"cannot {doing}: {why} — make {where} a writable folder, or point {key} in "
                                "scarbook.yaml at one; nothing was changed")


class _Lock:
    """One case-management step at a time per project (a second process waits its turn, 30 s)."""

    def __init__(self, project: ProjectFolders) -> None:
        refuse_unwritable(project, "change this project's cases (their lock and trash are in workspaces/)")
        try:
            real_trash_dir(project).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ScarbookError(f"cannot create {trash_dir(project)}: {describe_os_error(exc)} — make "
                                f"{project.workspaces_dir} a writable folder; nothing was changed") from None
        self.lock = FileLock(str(trash_dir(project) / ".lock"), timeout=LOCK_WAIT_S)

    def __enter__(self) -> None:
        try:
            self.lock.acquire()
        except Timeout:
            raise ScarbookError(f"another scarbook has been changing this project's cases for {LOCK_WAIT_S:g} s "
                                f"(it holds {self.lock.lock_file}) — try again when it is done") from None
        except OSError as exc:
            raise ScarbookError(f"cannot take the case lock {self.lock.lock_file}: {describe_os_error(exc)} — make "
                                f"{Path(self.lock.lock_file).parent} a writable folder; nothing was changed") from None

    def __exit__(self, *exc) -> None:
        self.lock.release()



def check_folder_name(case_id: str) -> None:
    """A name that can only mean one folder directly inside cases/: never empty, '.', '..', a path
    with a separator, or a hidden folder (hidden folders are not cases)."""
    if not case_id:
        raise ScarbookError("type a case id: the name of a folder in cases/")
    if case_id in (".", "..") or "/" in case_id or "\\" in case_id or os.sep in case_id or case_id.startswith("."):
        raise ScarbookError(f"{case_id!r} is not a case id: a case id names one folder inside cases/ "
                            "(no '/', no '..', not hidden)")


def case_folder(project: ProjectFolders, case_id: str) -> Path:
    """The folder of an existing case (valid or not), or a ScarbookError naming the fix."""
    check_folder_name(case_id)
    folder = project.cases_dir / case_id
    if not os.path.lexists(folder) or not folder.is_dir():
        raise no_such_cases(project.cases_dir, [case_id])
    return folder


def _valid_case(project: ProjectFolders, case_id: str) -> tuple[Path, Case]:
    folder = case_folder(project, case_id)
    if folder.is_symlink():
        raise ScarbookError(f"{folder} is a symlink to {os.readlink(folder)}: scarbook renames and copies only "
                            "real case folders — replace the link with the folder itself")
    try:
        return folder, load_case(folder)
    except CaseError as exc:
        raise ScarbookError(f"case {case_id!r} is invalid, fix it first: {exc}") from None


def running_case_ids(project: ProjectFolders) -> dict[str, str]:
    """Cases in a session that is still running (its process holds the session's lock): case id ->
    session id. Their folders must not move under the runner."""
    from scarbook.history.store import History

    history = History(project.workspaces_dir)
    out: dict[str, str] = {}
    for folder in history.session_dirs():
        if not (folder / ".lock").exists():
            continue
        try:
            info = history.read_session(folder.name)
        except HistoryError:
            continue
        if info.state == SessionState.RUNNING:
            out.update({cid: info.id for cid in info.case_ids if cid not in out})
    return out


def refuse_running(project: ProjectFolders, case_id: str) -> None:
    sid = running_case_ids(project).get(case_id)
    if sid:
        raise ScarbookError(f"case {case_id!r} is in session {sid}, which is still running — wait for it "
                            "to finish (or cancel it), then try again")


# -- moving and copying folders ----------------------------------------------------------------
def _copy_regular(src: str, dst: str) -> str:
    """copytree's file copier: regular files only (a FIFO would block, a device is no case file)."""
    mode = os.lstat(src).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file, not copied", src)
    return shutil.copy2(src, dst, follow_symlinks=False)


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy a case folder; symlinks are copied as links, never followed."""
    try:
        shutil.copytree(src, dst, symlinks=True, copy_function=_copy_regular)
    except shutil.Error as exc:
        first = exc.args[0][0] if exc.args and exc.args[0] else ("?", "?", str(exc))
        raise ScarbookError(f"could not copy {first[0]}: {first[2]}") from None
    except OSError as exc:
        raise ScarbookError(f"could not copy {src}: {describe_os_error(exc)}") from None


def _move_dir(src: Path, dst: Path) -> None:
    """Move a folder (or a link to one) so that it is whole at `src` or at `dst`, never half."""
    try:
        os.rename(src, dst)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise ScarbookError(f"could not move {src} to {dst}: {describe_os_error(exc)}") from None
    # Across filesystems: a copy at `dst`, then the original taken away; if that fails, the copy goes
    # (the folder stays whole where it was) and the error names the folder.
    token = secrets.token_hex(4)
    if src.is_symlink():
        try:
            os.symlink(os.readlink(src), dst)
        except OSError as exc:
            raise ScarbookError(f"could not move {src} to {dst}: {describe_os_error(exc)}") from None
        _take_away(src, dst, lambda: os.unlink(src))
        return
    partial = dst.parent / f"{PARTIAL}{dst.name}-{token}"
    try:
        _copy_tree(src, partial)
        os.rename(partial, dst)
    except BaseException as exc:
        shutil.rmtree(partial, ignore_errors=True)
        if isinstance(exc, OSError):
            raise ScarbookError(f"could not move {src} to {dst}: {describe_os_error(exc)}") from None
        raise
    gone = src.parent / f"{PARTIAL}gone-{src.name}-{token}"
    _take_away(src, dst, lambda: os.rename(src, gone))
    shutil.rmtree(gone, ignore_errors=True)


def _take_away(src: Path, copy: Path, remove) -> None:
    """The last step of a move across filesystems: `remove` the original, or take the copy back."""
    try:
        remove()
    except OSError as exc:
        remove_no_follow(copy)
        raise ScarbookError(f"could not move {src}: {describe_os_error(exc)} — make {src.parent} a writable "
                            "folder; nothing was moved") from None


def remove_no_follow(path: Path) -> None:
    """Delete `path` for good without following a link: a link (or file) is unlinked, a folder is
    walked by shutil.rmtree, which unlinks the links inside it and never enters what they point to."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


def _clean_partials(cases_dir: Path) -> None:
    """Remove what a crashed duplicate or move left (hidden, never loaded); called under the lock."""
    if cases_dir.is_dir():
        for p in cases_dir.iterdir():
            if p.name.startswith(PARTIAL) and p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)


# -- rename and duplicate -------------------------------------------------------------------------
def _scalar(value: str) -> str:
    """`value` as a one-line YAML scalar: bare when YAML reads it back as the same string."""
    try:
        if yaml.safe_load(value) == value and "#" not in value and ": " not in value:
            return value
    except yaml.YAMLError:
        pass
    return json.dumps(value)


def edited_case_text(path: Path, changes: dict[str, str]) -> str:
    """case.yaml's text with top-level `changes` (id, title) set, its other lines and comments kept;
    a key written over several lines makes it rewritten whole (comments lost, content the same)."""
    text = read_regular_bytes(path, limit=1_000_000).decode("utf-8")
    data = load_yaml_text(text, path)
    lines = text.splitlines(keepends=True)
    for key, value in changes.items():
        line = f"{key}: {_scalar(value)}\n"
        at = line_of(data, key) if key in data else None
        if at and re.match(rf"{key}\s*:", lines[at - 1]):
            lines[at - 1] = line
        elif key not in data:
            at = line_of(data, "id") or 0
            lines.insert(at, line)
    out = "".join(lines)
    try:
        again = load_yaml_text(out, path)
        same = dict(again) == {**dict(data), **changes}
    except ScarbookError:
        same = False
    if not same:
        case = validate_case_data(data, path)
        case.id, case.title = changes.get("id", case.id), changes.get("title", case.title)
        out = dump_yaml(case_to_dict(case))
    validate_case_data(load_yaml_text(out, path), path)
    return out


def rename_case(project: ProjectFolders, old: str, new: str) -> Case:
    """cases/<old>/ becomes cases/<new>/ with `id: new`. Its runs stay recorded under <old>; its
    scar verification moves with it (the checks did not change)."""
    folder, case = _valid_case(project, old)
    if new == old:
        raise ScarbookError(f"case {old!r} already has that id")
    check_new_case_id(project.cases_dir, new)
    refuse_running(project, old)
    refuse_unwritable(project, f"rename {old}", project.cases_dir, folder)
    text = edited_case_text(folder / CASE_FILE, {"id": new})
    dest = project.cases_dir / new
    from scarbook.cases.verifications import VerificationStore

    with _Lock(project):
        if os.path.lexists(dest):
            raise ScarbookError(f"a case named {new!r} already exists ({dest}); choose another id")
        CaseIdLog(project.workspaces_dir).load()  # a damaged store says so before anything moves
        VerificationStore(project.workspaces_dir).load()
        _move_dir(folder, dest)
        try:
            atomic_write_text(dest / CASE_FILE, text)
        except OSError as exc:
            _move_dir(dest, folder)
            raise ScarbookError(f"could not write {dest / CASE_FILE}: {describe_os_error(exc)} — nothing was "
                                f"renamed; {old} is as it was") from None
        VerificationStore(project.workspaces_dir).move(old, new)
        since = now_stamp()
        log = CaseIdLog(project.workspaces_dir)
        log.update(renamed(log.load(), old, new, since))
    return load_case(dest)


def copy_title(case: Case) -> str:
    if case.title.endswith(" (copy)"):
        return case.title
    return f"{case.title} (copy)" if case.title else f"copy of {case.id}"


def case_taken(case_id: str, dest: Path) -> ScarbookError:
    """What a new case (a copy, a save) says when its id is taken: by a folder there, or one made meanwhile."""
    return ScarbookError(f"a case named {case_id!r} already exists ({dest}); choose another id")


def duplicate_case(project: ProjectFolders, case_id: str, new: str | None = None) -> Case:
    """A copy of the case (case.yaml, seed/, scar/, every file; links copied as links) under a fresh
    id (`<id>-copy`, `<id>-copy-2`, ... unless given; a copy's copy is `<id>-copy-2` too), its title
    marked as a copy. No runs."""
    folder, case = _valid_case(project, case_id)
    if new is None:
        new = free_case_id(project.cases_dir, re.sub(r"-copy(-\d+)?$", "", case_id) + "-copy")
    else:
        check_new_case_id(project.cases_dir, new)
    refuse_unwritable(project, f"copy {case_id}", project.cases_dir)
    from scarbook.cases.verifications import VerificationStore

    with _Lock(project):
        CaseIdLog(project.workspaces_dir).load()  # a damaged store says so before anything is copied
        VerificationStore(project.workspaces_dir).load()
        _clean_partials(project.cases_dir)
        partial = project.cases_dir / f"{PARTIAL}{new}-{secrets.token_hex(4)}"
        try:
            _copy_tree(folder, partial)
            text = edited_case_text(partial / CASE_FILE, {"id": new, "title": copy_title(case)})
            atomic_write_text(partial / CASE_FILE, text)
            dest = project.cases_dir / new
            if os.path.lexists(dest):
                raise case_taken(new, dest)
            try:  # never over a folder made at its name since the check (os.rename would replace an empty one)
                move_into_place(partial, dest)
            except FileExistsError:
                raise case_taken(new, dest) from None
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        VerificationStore(project.workspaces_dir).move(None, new)  # a copy is not verified until it is
        CaseIdLog(project.workspaces_dir).update({new: IdEntry(now_stamp(), copied_from=case_id)})
    return load_case(dest)

