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
from scarbook.models import Case, WorkspaceDiff

SMALL_SEED = 1 << 20  # seed files up to this size are held in memory and written, larger ones copied


@dataclass
class SeedFile:
    digest: str  # sha256 of the content
    data: bytes | None = None  # the content (inline seeds, small files), else copied from source
    source: Path | None = None
    mode: int | None = None  # permission bits of a seed/ file (a seeded script stays executable)


@dataclass
class SeedManifest:
    """What seeding a case's workspace writes, by relative path. Built once per case per session,
    so each run writes (or copies) and never re-reads or re-hashes the seed."""

    files: dict[str, SeedFile] = field(default_factory=dict)


@dataclass
class Snapshot:
    """What the workspace held after seeding: relative path -> (size, mtime_ns, sha256)."""

    files: dict[str, tuple[int, int, str]] = field(default_factory=dict)


def _digest(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
                data = Path(src).read_bytes()
                manifest.files[rel] = SeedFile(hashlib.sha256(data).hexdigest(), data, mode=stat.S_IMODE(st.st_mode))
            else:
                manifest.files[rel] = SeedFile(_digest(src), source=Path(src))
    for rel, text in case.seed_files.items():
        data = text.encode("utf-8")
        manifest.files[rel] = SeedFile(hashlib.sha256(data).hexdigest(), data)
    return manifest


def _write_seed(target: str, f: SeedFile) -> os.stat_result:
    mode = 0o666 if f.mode is None else f.mode
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), mode)  # (not on Windows)
    try:
        view = memoryview(f.data or b"")
        while view:
            view = view[os.write(fd, view):]
        if f.mode is not None:  # exactly the seed's bits, whatever the umask took (Windows: no fchmod)
            os.fchmod(fd, f.mode) if hasattr(os, "fchmod") else os.chmod(target, f.mode)
        return os.fstat(fd)
    finally:
        os.close(fd)


def prepare_workspace(case: Case, dest: Path, manifest: SeedManifest | None = None) -> Snapshot:
    """Create `dest` fresh and fill it from the case's seed/ and inline seed files."""
    try:
        dest.mkdir(parents=True)
    except FileExistsError:
        shutil.rmtree(dest)
        dest.mkdir()
    manifest = manifest or seed_manifest(case)
    snap = Snapshot()
    root = os.fspath(dest)
    for rel, f in manifest.files.items():
        target = f"{root}/{rel}"  # validated when the case loaded; a fresh folder holds no links yet
        if "/" in rel:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        if f.data is not None:
            st = _write_seed(target, f)
        else:
            assert f.source is not None  # a seed file carries its bytes or names the file that holds them
            shutil.copy(f.source, target)  # content and mode
            st = os.stat(target)
        snap.files[rel] = (st.st_size, st.st_mtime_ns, f.digest)
    return snap


def diff_workspace(before: Snapshot, root: Path) -> WorkspaceDiff:
    """Created / modified / deleted relative to the seed. A deleted workspace deletes everything.

    A seeded file whose size and mtime are unchanged is taken as unchanged; otherwise its content
    decides (rewriting a file with the same bytes is not a modification). Everything goes through
    scarbook.fs.safefs: a link is never followed and only a regular file is ever opened (a seeded file
    the agent replaced with a named pipe is modified, not a read that blocks forever). Folders
    nested deeper than safefs.MAX_DEPTH raise safefs.TooDeep. Blocking file work: call it off the
    event loop."""
    now = safefs.walk(root, look=before.files.__contains__)
    diff = WorkspaceDiff()
    for rel, st in sorted(now.items()):
        if rel not in before.files:
            diff.created.append(rel)
            continue
        size, mtime_ns, digest = before.files[rel]
        if st is None or not stat.S_ISREG(st.st_mode):  # a link, a pipe, or a folder swapped for a file
            diff.modified.append(rel)
        elif st.st_size == size and st.st_mtime_ns == mtime_ns:
            continue
        elif st.st_size != size or _digest_inside(root, rel) != digest:
            diff.modified.append(rel)
    diff.deleted = sorted(rel for rel in before.files if rel not in now)
    return diff


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
    """Delete a finished run's workspace. A run leaves a few files, so this lists the folder once and
    unlinks them, cheaper than shutil.rmtree's checks; anything unusual goes to shutil.rmtree."""
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
        self._paths: queue.SimpleQueue[Path | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def remove(self, path: Path) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="scarbook-janitor", daemon=True)
            self._thread.start()
        self._paths.put(path)

    def _work(self) -> None:
        while (path := self._paths.get()) is not None:
            remove_workspace(path)

    def close(self) -> None:
        if self._thread is not None:
            self._paths.put(None)
            self._thread.join()
            self._thread = None
