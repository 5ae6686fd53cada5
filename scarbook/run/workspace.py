"""Fresh workspaces: seed before every run, and the diff of what the agent changed."""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.fs import safefs
from scarbook.fs.files import open_regular, read_regular_bytes
from scarbook.models import Case, WorkspaceDiff

SMALL_SEED = 1 << 20  # seed files up to this size are held in memory and written, larger ones copied


@dataclass
class SeedFile:
    digest: str  # sha256 of the content
    data: bytes | None = None  # the content (inline seeds, small files), else copied from source
    source: Path | None = None
    mode: int | None = None  # permission bits of a seed/ file (a seeded script stays executable)
    # a file copied from source: its stat (seen_key) when its content had `digest`; a run that finds another
    # digests what it copies (the file may have changed under the session)
    seen: tuple[int, int, int, int] | None = None


class SeedChanged(Exception):
    """A large seed file's content is no longer the digest the session took of it: a run seeded from it would
    not run the case the session's other runs ran."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"seed file {path} changed during the session (its content is not what the session's "
                         "earlier runs were seeded with) — put it back as it was, or start a new session to seed "
                         "from the new content")


def seen_key(st: os.stat_result) -> tuple[int, int, int, int]:
    """What tells a file changed without reading it: size, mtime, ctime (a write moves it even when the mtime is
    put back) and inode (a file renamed over it), as git's index tells."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


@dataclass
class SeedManifest:
    """What seeding a case's workspace writes, by relative path. Built once per case per session,
    so each run writes (or copies) and never re-reads or re-hashes the seed."""

    files: dict[str, SeedFile] = field(default_factory=dict)


@dataclass
class Snapshot:
    """What the workspace held after seeding: relative path -> (size, mtime_ns, ctime_ns, sha256)."""

    files: dict[str, tuple[int, int, int, str]] = field(default_factory=dict)
    folder: tuple[int, int] | None = None  # (st_dev, st_ino) of the workspace folder scarbook made


def _digest(path: Path | str) -> tuple[str, tuple[int, int, int, int]]:
    """The sha256 of the file at `path`, and its seen_key as it was opened."""
    h = hashlib.sha256()
    fd, st = open_regular(path)
    with open(fd, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest(), seen_key(st)


def _seed_files(root: Path | str) -> dict[str, str]:
    """Relative posix path -> path of every file under a case's seed/ folder. Links are followed, as
    a copy would (load_case refused links that leave the case); the agent's workspace is walked by
    safefs.walk instead, which never follows one."""
    out: dict[str, str] = {}

    def scan(folder: str, prefix: str) -> None:
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                scan(e.path, prefix + e.name + "/")
            else:
                out[prefix + e.name] = e.path

    scan(os.fspath(root), "")
    return out


def seed_manifest(case: Case) -> SeedManifest:
    manifest = SeedManifest()
    seed = case.seed_dir
    if seed is not None and seed.is_dir():
        # Links are followed (load_case refused links that leave the case), as a copy would.
        for rel, src in _seed_files(seed).items():
            st = os.stat(src)
            if st.st_size <= SMALL_SEED:
                data = read_regular_bytes(src)  # (a FIFO or a device is refused, not read forever)
                manifest.files[rel] = SeedFile(hashlib.sha256(data).hexdigest(), data, mode=stat.S_IMODE(st.st_mode))
            else:
                digest, seen = _digest(src)
                manifest.files[rel] = SeedFile(digest, source=Path(src), seen=seen)
    for rel, text in case.inline_seeds.items():  # (by the workspace's name: './a' replaces seed/a, not beside it)
        data = text.encode("utf-8")
        manifest.files[rel] = SeedFile(hashlib.sha256(data).hexdigest(), data)
    return manifest


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _write_seed(target: str, f: SeedFile, dir_fd: int | None = None) -> os.stat_result:
    exact = f.mode
    if f.data is None and exact is None and f.source is not None:
        exact = stat.S_IMODE(os.stat(f.source).st_mode)  # a large seed file keeps its bits, as a copy would
    mode = 0o666 if exact is None else exact
    # O_EXCL|O_NOFOLLOW: a fresh name in a fresh folder, never through a link (not on Windows)
    fd = os.open(target, _NEW_FILE if dir_fd is not None else _NEW_FILE & ~os.O_EXCL | os.O_TRUNC, mode,
                 dir_fd=dir_fd)
    try:
        if f.data is not None:
            view = memoryview(f.data)
            while view:
                view = view[os.write(fd, view):]
        else:
            _copy_seed(f, fd)
        st = os.fstat(fd)
        if exact is not None and stat.S_IMODE(st.st_mode) != exact:  # exactly the seed's bits, whatever the
            os.fchmod(fd, exact) if hasattr(os, "fchmod") else os.chmod(target, exact)  # umask took (Windows: no fchmod)
            st = os.fstat(fd)  # (a chmod moves the ctime, which the diff compares)
        return st
    finally:
        os.close(fd)


def _copy_seed(f: SeedFile, fd: int) -> None:
    """Copy a large seed file from seed/ to `fd`: never waiting on a FIFO swapped in for it since the manifest was
    made, and never its changed content (both an error of this run). Its stat as the manifest saw it spares the
    digest; another stat (touched, copied back, rewritten) has the bytes digested as they are copied."""
    assert f.source is not None  # a seed file carries its bytes or names the file that holds them
    src_fd, st = open_regular(f.source)
    with open(src_fd, "rb") as src:
        h = _digest_again(f, st)
        while chunk := src.read(1 << 20):
            if h is not None:
                h.update(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
    _same_digest(f, h, st)


def check_seed_files(manifest: SeedManifest) -> None:
    """SeedChanged (or OSError) when a large seed file of `manifest` is no longer what the session digested: for an
    executor that ships the seed's bytes once per case (Ray), asked before each run, as a local copy checks. Its stat
    as the manifest saw it spares the digest."""
    for f in manifest.files.values():
        if f.source is None:
            continue
        src_fd, st = open_regular(f.source)
        with open(src_fd, "rb") as src:
            h = _digest_again(f, st)
            while h is not None and (chunk := src.read(1 << 20)):
                h.update(chunk)
        _same_digest(f, h, st)


def _digest_again(f: SeedFile, st: os.stat_result) -> hashlib._Hash | None:
    """None when `st` is the stat the file had when digested; else a sha256 to digest it again with (SeedChanged at
    once when its size changed: no need to read it)."""
    if f.seen is None or seen_key(st) == f.seen:
        return None
    if st.st_size != f.seen[0]:
        raise SeedChanged(f.source or Path())
    return hashlib.sha256()


def _same_digest(f: SeedFile, h: hashlib._Hash | None, st: os.stat_result) -> None:
    """SeedChanged unless the bytes digested again (if they were) are the session's; the same bytes under a new
    stat keep that stat: the next run checks it."""
    if h is None:
        return
    if h.hexdigest() != f.digest:
        raise SeedChanged(f.source or Path())
    f.seen = seen_key(st)


def prepare_workspace(case: Case, dest: Path, manifest: SeedManifest | None = None) -> Snapshot:
    """Create `dest` fresh and fill it from the case's seed/ and inline seed files.

    `dest` is <session>/<case>/<k>: every folder below the session folder is made, emptied and
    entered through directory fds opened without following a link (safefs.open_dir), so an earlier
    run that swapped <case> for a link to a folder outside gets this run refused (safefs.Refused),
    never a write or a delete out there."""
    manifest = manifest or seed_manifest(case)
    if safefs.MODE == "portable":
        return _prepare_by_path(dest, manifest)
    case_fd = safefs.open_dir(dest.parent.parent, (dest.parent.name,), create=True)
    try:
        try:
            os.mkdir(dest.name, 0o777, dir_fd=case_fd)
        except FileExistsError:  # a run's folder from before: emptied without leaving this folder
            try:
                shutil.rmtree(dest.name, dir_fd=case_fd)
            except OSError:
                os.unlink(dest.name, dir_fd=case_fd)  # a link or a file at the name: the name goes
            os.mkdir(dest.name, 0o777, dir_fd=case_fd)
        ws_fd = os.open(dest.name, _DIR, dir_fd=case_fd)
    finally:
        os.close(case_fd)
    try:
        snap = _seed_into(ws_fd, manifest)
        made = os.fstat(ws_fd)
        snap.folder = (made.st_dev, made.st_ino)
        _same_folder(snap, dest)  # the agent runs at the path
    finally:
        os.close(ws_fd)
    return snap


def _same_folder(snap: Snapshot, dest: Path, gone_ok: bool = False) -> None:
    """Refuse a workspace path that no longer leads to the folder scarbook made (`gone_ok`: unless nothing
    is there any more, not even a link — the agent deleted its workspace)."""
    try:
        seen = os.stat(dest)
        same = (seen.st_dev, seen.st_ino) == snap.folder
    except OSError:
        same = False
        if gone_ok and not os.path.lexists(dest):  # (asked only when the stat failed: one call a run, not two)
            return
    if not same:
        raise safefs.Refused(f"{dest} no longer leads to the folder scarbook made for the run (a folder above "
                             "it was swapped for a link)")


def _seed_into(ws_fd: int, manifest: SeedManifest) -> Snapshot:
    snap = Snapshot()
    for rel, f in manifest.files.items():  # validated when the case loaded
        *folders, name = rel.split("/")
        # (a file at the top is written straight into the workspace's fd: no dup, no folder to open)
        st = _write_nested(ws_fd, folders, name, f) if folders else _write_seed(name, f, ws_fd)
        safefs.seeded(st)
        snap.files[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, f.digest)
    return snap


def _write_nested(ws_fd: int, folders: list[str], name: str, f: SeedFile) -> os.stat_result:
    """Write a seed file into its folders under the workspace, each made and entered without following a link."""
    dir_fd = os.dup(ws_fd)
    try:
        for part in folders:
            try:
                os.mkdir(part, 0o777, dir_fd=dir_fd)
            except FileExistsError:
                pass
            sub = os.open(part, _DIR, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = sub
        return _write_seed(name, f, dir_fd)
    finally:
        os.close(dir_fd)


def _prepare_by_path(dest: Path, manifest: SeedManifest) -> Snapshot:
    """prepare_workspace where os.open takes no dir_fd (Windows)."""
    try:
        dest.mkdir(parents=True)
    except FileExistsError:
        shutil.rmtree(dest)
        dest.mkdir()
    snap = Snapshot()
    root = os.fspath(dest)
    for rel, f in manifest.files.items():
        target = f"{root}/{rel}"  # validated when the case loaded; a fresh folder holds no links yet
        if "/" in rel:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        st = _write_seed(target, f)
        snap.files[rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, f.digest)
    return snap


def diff_workspace(before: Snapshot, root: Path) -> WorkspaceDiff:
    """Created / modified / deleted relative to the seed. A deleted workspace deletes everything.

    A seeded file whose size, mtime and ctime are unchanged is taken as unchanged; otherwise its content
    decides (rewriting a file with the same bytes is not a modification). The ctime because the agent can put
    the mtime back (os.utime) after a write of the same size, and no process can set the ctime. Everything goes through
    scarbook.fs.safefs: a link is never followed and only a regular file is ever opened (a seeded file
    the agent replaced with a named pipe is modified, not a read that blocks forever). A folder nested
    deeper than safefs.MAX_DEPTH is created (or modified) itself: the walk goes no deeper. A workspace the agent closed to its owner
    (chmod 0 .) is opened again (`_take_back`). Blocking file work: call it off the event loop."""
    if before.folder is not None:  # (a workspace the agent deleted: all deleted)
        _same_folder(before, root, gone_ok=True)  # else the diff, the checks and the judge would read elsewhere
    try:
        now = safefs.walk(root, look=before.files.__contains__)
    except PermissionError:
        if not _take_back(before, root):
            raise
        now = safefs.walk(root, look=before.files.__contains__)
    diff = WorkspaceDiff()
    for rel, st in sorted(now.items()):
        if rel not in before.files:
            diff.created.append(rel)
            continue
        size, mtime_ns, ctime_ns, digest = before.files[rel]
        if st is None or not stat.S_ISREG(st.st_mode):  # a link, a pipe, or a folder swapped for a file
            diff.modified.append(rel)
        elif st.st_size == size and st.st_mtime_ns == mtime_ns and st.st_ctime_ns == ctime_ns:
            continue
        elif st.st_size != size or _digest_inside(root, rel) != digest:
            diff.modified.append(rel)
    diff.deleted = sorted(rel for rel in before.files if rel not in now)
    return diff


def _take_back(before: Snapshot, root: Path) -> bool:
    """Give scarbook's user read, write and search on the run's folder again, which the agent took away (it
    owns the folder too: chmod 0 ., unconfined or sandboxed). Only that folder — the one scarbook made, by
    its inode, reached without following a link (an O_PATH fd, changed through /proc/self/fd: Linux) — and
    only when this user owns it. Else the diff failed for the machine's reasons ('infra', the run retried)
    where the agent made it fail. True when the bits were given back."""
    if before.folder is None or not hasattr(os, "O_PATH"):
        return False
    try:
        fd = os.open(root, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != before.folder or st.st_uid != os.geteuid() or st.st_mode & 0o700 == 0o700:
            return False
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) | 0o700)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _digest_inside(root: Path, rel: str) -> str | None:
    """sha256 of the workspace file `rel`, or None when it cannot be read as a regular file."""
    try:
        fd, _ = safefs.open_file(root, rel)
    except (safefs.Refused, OSError):
        return None
    h = hashlib.sha256()
    with open(fd, "rb", closefd=True) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def remove_workspace(root: Path) -> None:
    """Delete a finished run's workspace (<session>/<case>/<k>). Its <case> folder is entered without
    following a link (safefs.open_dir) and the run's folder removed relative to it (never following a
    link either): a <case> the agent swapped for a link is left alone, never a delete outside. A folder
    that cannot be removed so stays (it is only space)."""
    if safefs.MODE == "portable":
        _remove_by_path(root)
        return
    try:
        case_fd = safefs.open_dir(root.parent.parent, (root.parent.name,))
    except (safefs.Refused, OSError):
        return
    try:
        if not _remove_flat(case_fd, root.name):  # folders inside (or not a folder at all): the general way
            for st in _seeded_left(root):
                safefs.forget_seeded(st)
            shutil.rmtree(root.name, dir_fd=case_fd)
    except (OSError, RecursionError):  # (rmtree recurses: a tree 1,000 deep is left, as it was)
        pass
    finally:
        os.close(case_fd)


def _remove_flat(case_fd: int, name: str) -> bool:
    """Remove the run's folder `name` (in `case_fd`) when it holds no folder — what most runs leave:
    listed once, each file lstat-ed (its seeded entry forgotten) and unlinked, then the folder. About
    half the system calls of a walk followed by rmtree, on the janitor's thread, each one a hand-over of
    the GIL with the loop. False, having removed nothing, when it holds a folder or is not one."""
    try:
        ws = os.open(name, _DIR, dir_fd=case_fd)
    except OSError:
        return False
    try:
        with os.scandir(ws) as it:
            entries = list(it)
        if any(e.is_dir(follow_symlinks=False) for e in entries):
            return False
        for e in entries:
            try:
                safefs.forget_seeded(os.lstat(e.name, dir_fd=ws))
                os.unlink(e.name, dir_fd=ws)
            except FileNotFoundError:
                pass  # gone since it was listed (a leftover)
    finally:
        os.close(ws)
    os.rmdir(name, dir_fd=case_fd)
    return True


def _seeded_left(root: Path) -> list[os.stat_result]:
    """The stat of each file in a workspace about to go, so the seeded ones are forgotten."""
    try:
        return [st for st in safefs.walk(root, look=lambda rel: True).values() if st is not None]
    except (safefs.Refused, OSError):
        return []


def _remove_by_path(root: Path) -> None:
    """remove_workspace where os.open takes no dir_fd (Windows): a few files, listed once."""
    try:
        with os.scandir(root) as it:
            entries = list(it)
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
        os.rmdir(root)
    except OSError:
        shutil.rmtree(root, ignore_errors=True)


class Janitor:
    """Deletes passing runs' workspaces on a thread of its own, so the next run starts while the last
    one's files go (deleting folders is slow on some filesystems). `close` waits for all of it."""

    def __init__(self) -> None:
        self._paths: queue.SimpleQueue[Path | str | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def remove(self, path: Path | str) -> None:
        """Delete the workspace at `path` soon (a str is made a Path on the janitor's thread, not the caller's)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="scarbook-janitor", daemon=True)
            self._thread.start()
        self._paths.put(path)

    def _work(self) -> None:
        while (path := self._paths.get()) is not None:
            remove_workspace(Path(path))

    def close(self) -> None:
        if self._thread is not None:
            self._paths.put(None)
            self._thread.join()
            self._thread = None
