"""A run's folder (workspace and logs) packed on a worker and unpacked on the driver, size-capped.

A remote run's workspace is made in the worker's scratch folder. Failed and errored runs bring it
back so review, "new scar from this run" and verify work on the driver as for a local run. What the
agent left is untrusted: it is read without following links (a link is packed as a link, as a local
workspace would keep it), only regular files are read (a FIFO must not block the worker), and the
whole bundle is capped in compressed bytes: files past the cap stay behind and are named.
On the driver every path is checked again before anything is written, and links are made last, so
no file can be written through one.
"""

from __future__ import annotations

import os
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.fs import safefs
from scarbook.fs.paths import check_relative
from scarbook.text import escape_name, plural

ENTRY_OVERHEAD = 64  # bytes a bundle entry costs besides its data (name, kind, mode), for the cap
RAW_FACTOR = 20  # a file more than this many times the room left is not even read


@dataclass
class Entry:
    rel: str
    kind: str  # "file" | "dir" | "link"
    mode: int = 0o644
    data: bytes = b""  # zlib-compressed content of a file; a link's target (utf-8, surrogateescape)


@dataclass
class Bundle:
    cap: int
    entries: list[Entry] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)  # "path (why)" of what stayed behind, the path escaped (escape_name)
    compressed_bytes: int = 0

    @property
    def files(self) -> int:
        return sum(1 for e in self.entries if e.kind == "file")

    def describe(self) -> str:
        what = f"{plural(self.files, 'file')}, {_size(self.compressed_bytes)} compressed"
        if not self.omitted:
            return what
        shown = ", ".join(self.omitted[:5]) + (f" and {len(self.omitted) - 5} more" if len(self.omitted) > 5 else "")
        return f"{what}; cap {_size(self.cap)}: not brought back: {shown}"


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def pack(root: Path | str, cap: int, skip: tuple[str, ...] = ()) -> Bundle:
    """Pack what is under `root` (not following links), in sorted order, up to `cap` compressed bytes;
    top-level names in `skip` (and what is under them) are left out."""
    bundle = Bundle(cap)
    found, bundle.omitted = _walk(os.fspath(root), skip)
    for rel, st in found:
        room = cap - bundle.compressed_bytes - ENTRY_OVERHEAD - len(rel.encode("utf-8", "surrogateescape"))
        if stat.S_ISDIR(st.st_mode):
            entry = Entry(rel, "dir", stat.S_IMODE(st.st_mode) & 0o777)
        elif stat.S_ISLNK(st.st_mode):
            entry = Entry(rel, "link", data=os.fsencode(os.readlink(os.path.join(root, rel))))
        elif not stat.S_ISREG(st.st_mode):
            bundle.omitted.append(f"{escape_name(rel)} (not a regular file)")
            continue
        elif room < 0 or st.st_size > RAW_FACTOR * max(room, 0):
            bundle.omitted.append(f"{escape_name(rel)} ({_size(st.st_size)})")
            continue
        else:
            data = _read_compressed(root, rel, room)
            if data is None:
                bundle.omitted.append(f"{escape_name(rel)} ({_size(st.st_size)})")
                continue
            entry = Entry(rel, "file", stat.S_IMODE(st.st_mode) & 0o777, data)
        cost = ENTRY_OVERHEAD + len(rel.encode("utf-8", "surrogateescape")) + len(entry.data)
        if bundle.compressed_bytes + cost > cap:
            bundle.omitted.append(f"{escape_name(rel)} ({entry.kind})")
            continue
        bundle.entries.append(entry)
        bundle.compressed_bytes += cost
    return bundle


def _walk(root: str, skip: tuple[str, ...] = ()) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """Everything under root in sorted pre-order, links not entered, and the folders left out for
    being nested deeper than safefs.MAX_DEPTH. Iterative: an agent's 1,200-deep tree is no RecursionError."""
    out: list[tuple[str, os.stat_result]] = []
    deep: list[str] = []
    stack = [(root, "", iter(_entries(root)))]
    while stack:
        _, prefix, it = stack[-1]
        e = next(it, None)
        if e is None:
            stack.pop()
            continue
        if not prefix and e.name in skip:
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        rel = prefix + e.name
        if stat.S_ISDIR(st.st_mode) and len(stack) > safefs.MAX_DEPTH:
            deep.append(f"{escape_name(rel)} (nested more than {safefs.MAX_DEPTH} folders deep)")
            continue
        out.append((rel, st))
        if stat.S_ISDIR(st.st_mode):
            stack.append((e.path, rel + "/", iter(_entries(e.path))))
    return out, deep


def _entries(folder: str) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _read_compressed(root: Path | str, rel: str, room: int) -> bytes | None:
    """The file's content zlib-compressed, or None if it does not fit in `room` (or cannot be read)."""
    try:  # no link followed on any component, a regular file only, even if swapped since the walk
        fd, _ = safefs.open_file(root, rel)
    except (safefs.Refused, OSError):
        return None
    try:
        comp = zlib.compressobj(6)
        parts: list[bytes] = []
        used = 0
        while chunk := os.read(fd, 1 << 20):
            part = comp.compress(chunk)
            used += len(part)
            if used > room:
                return None
            parts.append(part)
        parts.append(comp.flush())
        data = b"".join(parts)
        return data if len(data) <= room else None
    except OSError:
        return None
    finally:
        os.close(fd)


def unpack(bundle: Bundle, dest: Path) -> list[str]:
    """Write the bundle under `dest` (made fresh); returns the entries refused (bad path)."""
    dest.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []
    root = os.fspath(dest)
    order = {"dir": 0, "file": 1, "link": 2}  # links last: nothing is ever written through one
    for e in sorted(bundle.entries, key=lambda e: (order.get(e.kind, 3), e.rel)):
        why = check_relative(e.rel, walked=True)  # (a name the worker's walk found: `a\\b.txt` is one name on Linux)
        if why or e.kind not in order or e.rel in (".", ""):
            refused.append(e.rel)
            continue
        target = os.path.join(root, e.rel)
        try:
            _make_parents(root, e.rel)
            if e.kind == "dir":
                os.makedirs(target, mode=0o700, exist_ok=True)
                os.chmod(target, e.mode | 0o700, follow_symlinks=False)
            elif e.kind == "file":
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                try:
                    view = memoryview(zlib.decompress(e.data))
                    while view:
                        view = view[os.write(fd, view):]
                    os.fchmod(fd, e.mode & 0o777)
                finally:
                    os.close(fd)
            else:
                os.symlink(os.fsdecode(e.data), target)
        except (OSError, zlib.error):
            refused.append(e.rel)
    return refused


def _make_parents(root: str, rel: str) -> None:
    """Make the folders above `rel` under root, refusing to pass through anything but a real folder."""
    here = root
    for part in rel.split("/")[:-1]:
        here = os.path.join(here, part)
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            os.mkdir(here, 0o700)
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(here)
