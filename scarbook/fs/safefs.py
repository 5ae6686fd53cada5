"""Every read a check, the judge, the diff or verify makes inside a workspace, done race-free.

The workspace is written by the agent, and a process the agent left behind may still be changing
it while the harness reads: swapping `tmp.txt` for a symlink between a link check and the open
(renameat2 RENAME_EXCHANGE) made a check read a file outside. So nothing here looks at a path and
then opens it. Each folder on the way is opened relative to the one before it, with O_NOFOLLOW
(a link anywhere in the path is refused, not followed), the file itself is opened with
O_NOFOLLOW|O_NONBLOCK (a named pipe cannot block the open), and the open fd is fstat-ed: anything
that is not a regular file is refused before a byte is read.

Where os.open takes no dir_fd (Windows), the portable path lstat-s each component, opens the file,
and refuses it unless the fd is the very file the lstat saw (same device and inode): a swap of the
file itself is caught; a swap of a folder above it between two lstat calls is not (no dir fds).

openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) would do the folder walk in one syscall. Measured in
benchmarks/safefs_bench.py it saves about 2 µs per read one folder deep and 9 µs four deep, against
a run's 2-3 ms: not worth a second Linux code path and a ctypes syscall table, so there is none.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

from scarbook.fs.paths import MAX_DEPTH, check_relative

# "dirfd" where os.open takes dir_fd and O_NOFOLLOW exists (Linux, macOS, BSD), else "portable".
# Tests set it to "portable" to run the Windows path on Linux.
MODE = "dirfd" if os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") else "portable"

_CLOEXEC = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOINHERIT", 0) | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_DIR_FLAGS = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | getattr(os, "O_DIRECTORY", 0)
_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)


class Refused(Exception):
    """A workspace path that is not read; the message names it and says why in one line."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


# Files scarbook itself created by seeding a workspace, by (st_dev, st_ino): the only ones a read
# takes with more than one hard link. Any other file with st_nlink > 1 may be a hard link the agent
# made to a file outside (a link is refused by name; a hard link cannot be told from the file itself).
_SEEDED: set[tuple[int, int]] = set()


def seeded(st: os.stat_result) -> None:
    """Note a file scarbook created while seeding (see _SEEDED)."""
    _SEEDED.add((st.st_dev, st.st_ino))


def forget_seeded(st: os.stat_result) -> None:
    _SEEDED.discard((st.st_dev, st.st_ino))


def _missing(rel: str) -> Refused:
    return Refused(f"{rel} does not exist", missing=True)


def _is_link(st: os.stat_result) -> bool:
    # A Windows junction is a reparse point that S_ISLNK does not see.
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_file_attributes", 0) & _REPARSE_POINT)


def _refuse_kind(rel: str, st: os.stat_result) -> None:
    """Refuse anything but a regular file; `st` must not have followed a link."""
    if _is_link(st):
        raise Refused(f"{rel} is a symlink")
    if stat.S_ISDIR(st.st_mode):
        raise Refused(f"{rel} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{rel} is not a regular file")
    if st.st_nlink > 1 and (st.st_dev, st.st_ino) not in _SEEDED:
        raise Refused(f"{rel} is a hard link (it has {st.st_nlink} names; one may be outside the workspace)")


def _parts(rel: str) -> list[str]:
    why = check_relative(rel, walked=True)  # (a case's own paths were checked at load, backslashes refused there)
    if why:
        raise Refused(why)
    return [p for p in rel.split("/") if p not in ("", ".")]


def _why_not_opened(exc: OSError, dir_fd: int, name: str, shown: str, rel: str) -> Refused:
    """Name what stopped an open of `name` under dir_fd. The errno is what the open saw; an lstat
    now (only for the message) could see a file swapped back since."""
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link (EMLINK: FreeBSD)
        return Refused(f"{shown} is a symlink")
    if exc.errno == errno.ENOENT:
        return _missing(rel)
    if exc.errno == errno.ENOTDIR:  # O_DIRECTORY met a link (Linux) or a file (tmp.txt/x)
        try:
            return Refused(f"{shown} is a symlink") if _is_link(os.lstat(name, dir_fd=dir_fd)) else _missing(rel)
        except OSError:
            return _missing(rel)
    if exc.errno == errno.ENXIO:  # a socket
        return Refused(f"{shown} is not a regular file")
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        raise exc from None
    if _is_link(st):
        return Refused(f"{shown} is a symlink")
    raise exc  # permission denied and the like: the caller says "could not read"


def _open_root(root: str, rel: str) -> int:
    try:
        return os.open(root, _DIR_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        raise _missing(rel) from None  # the agent deleted its workspace: so is every file in it
    except OSError as exc:
        if os.path.islink(root):
            raise Refused(f"the workspace {root} is a symlink") from None
        raise exc


def _open_parent(root: str, parts: list[str], rel: str) -> int:
    """An fd on the folder holding the last of `parts`, reached without following a link."""
    fd = _open_root(root, rel)
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _why_not_opened(exc, fd, part, "/".join(parts[: i + 1]), rel) from None
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(root: os.PathLike | str, rel: str) -> tuple[int, os.stat_result]:
    """An fd on the regular file `rel` inside `root` and its fstat; the caller closes the fd.
    Raises Refused (missing, a symlink anywhere on the path, a folder, a pipe...) or OSError."""
    root, parts = os.fspath(root), _parts(rel)
    if not parts:
        raise Refused(f"{rel!r} names the workspace itself, not a file")
    if MODE == "portable":
        return _open_portable(root, parts, rel)
    parent = _open_parent(root, parts, rel)
    try:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise _why_not_opened(exc, parent, parts[-1], rel, rel) from None
    finally:
        os.close(parent)
    try:
        st = os.fstat(fd)
        _refuse_kind(rel, st)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _open_portable(root: str, parts: list[str], rel: str) -> tuple[int, os.stat_result]:
    path = root
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        try:
            seen = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            raise _missing(rel) from None
        if _is_link(seen):
            raise Refused(f"{'/'.join(parts[: i + 1])} is a symlink")
        if i < len(parts) - 1 and not stat.S_ISDIR(seen.st_mode):
            raise _missing(rel)
    _refuse_kind(rel, seen)
    try:
        fd = os.open(path, os.O_RDONLY | _CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise _missing(rel) from None  # deleted since the lstat
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino) or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Refused(f"{rel} was replaced while it was being opened")
    return fd, st


def read_file(root: os.PathLike | str, rel: str, limit: int) -> tuple[bytes, int]:
    """At most `limit` bytes of the regular file `rel` inside `root`, and its size when opened."""
    fd, st = open_file(root, rel)
    try:
        chunks, got = [], 0
        want = min(limit, st.st_size + 4096)  # what it holds, plus room in case it grew
        while want > 0 and (chunk := os.read(fd, want)):
            chunks.append(chunk)
            got += len(chunk)
            want = limit - got if len(chunk) == want else 0  # a short read is the end of the file
        return b"".join(chunks), st.st_size
    finally:
        os.close(fd)


def write_file(root: os.PathLike | str, rel: str, data: bytes) -> None:
    """Write `data` to `rel` inside `root`, making its folders; no link on the way is followed."""
    root, parts = os.fspath(root), _parts(rel)
    if MODE == "portable":
        for i in range(1, len(parts) + 1):
            path = os.path.join(root, *parts[:i])
            if os.path.lexists(path) and _is_link(os.lstat(path)):
                raise Refused(f"{'/'.join(parts[:i])} is a symlink")
        os.makedirs(os.path.join(root, *parts[:-1]), exist_ok=True)
        with open(os.path.join(root, *parts), "wb") as fh:
            fh.write(data)
        return
    fd = _open_root(root, rel)
    try:
        for part in parts[:-1]:
            try:
                os.mkdir(part, dir_fd=fd)
            except FileExistsError:
                pass
            sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC | _NOFOLLOW, 0o666, dir_fd=fd)
    finally:
        os.close(fd)
    with open(out, "wb", closefd=True) as fh:
        fh.write(data)


def create_file(folder: os.PathLike | str, name: str) -> int:
    """A write fd on a new, empty regular file `name` in `folder` (a log scarbook writes beside a
    workspace). The agent knows these names and may have planted a pipe (the open would block), a
    link or a hard link (scarbook would write through it) there: whatever is at the name is
    unlinked — the name only, never what it points to — and the file is created with O_EXCL, which
    never follows a link and fails if anything was put back in between."""
    if MODE == "portable":
        path, dir_fd = os.path.join(os.fspath(folder), name), None
    else:  # the folder itself is not followed either: a run's folder swapped for a link is refused
        path, dir_fd = name, open_dir(folder)
    try:
        for _ in range(3):
            try:
                return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o666, dir_fd=dir_fd)
            except FileExistsError:
                try:
                    os.unlink(path, dir_fd=dir_fd)
                except FileNotFoundError:
                    pass
        raise Refused(f"{name} was put back by another process each time it was removed")
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


def open_append(folder: os.PathLike | str, name: str) -> int:
    """An fd appending to the regular file `name` in `folder`, made (with the folder) when missing: a
    file the agent may append to as well ($SCARBOOK_TRANSCRIPT), so it is opened as every file scarbook
    writes — no link followed (the folder's own name included), a pipe cannot block the open, and a
    file with more than one name (a hard link the agent made to a file outside) is Refused."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    if MODE == "portable":
        path, dir_fd = os.path.join(os.fspath(folder), name), None
        os.makedirs(os.fspath(folder), exist_ok=True)
        if os.path.islink(path):
            raise Refused("it is a symlink")
    else:
        try:  # the run's folder is there (its workspace is in it): no mkdir on every call
            dir_fd = open_dir(folder)
        except FileNotFoundError:
            dir_fd = open_dir(folder, create=True)
        path = name
    try:
        fd = os.open(path, flags, 0o644, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise Refused("it is a symlink") from None
        raise
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    st = os.fstat(fd)
    why = "it is not a regular file" if not stat.S_ISREG(st.st_mode) else \
        f"it has {st.st_nlink} links (one may lead outside the run's folder)" if st.st_nlink > 1 else ""
    if why:
        os.close(fd)
        raise Refused(why)
    return fd


def open_dir(folder: os.PathLike | str, parts: tuple[str, ...] | list[str] = (), *, create: bool = False) -> int:
    """An fd on the folder `folder`/`parts`..., each of `parts` — and `folder`'s own last component —
    opened with O_NOFOLLOW|O_DIRECTORY relative to the one before (made first with `create`). A link
    anywhere there is Refused by name: scarbook never writes or deletes through a folder the agent
    swapped for a link. (The folders above `folder` are the user's, not the agent's.) The caller closes."""
    folder = os.fspath(folder)
    # With `create`, a folder that opens is there already: it is made (and opened again, as below) only
    # when it does not open. A mkdir that fails because the folder exists still takes the parent's lock:
    # two of them per run were a tenth of a run's CPU at -j16, contending with the others' (issue 38.3).
    fd = _open_existing(folder, None) if create else None
    if fd is None:
        if create:
            os.makedirs(folder, exist_ok=True)
        try:
            fd = os.open(folder, _DIR_FLAGS)
        except OSError:
            if os.path.islink(folder):
                raise Refused(f"{folder} is a symlink (scarbook does not follow it)") from None
            raise
    try:
        for i, part in enumerate(parts):
            sub = _open_existing(part, fd) if create else None
            if sub is not None:
                os.close(fd)
                fd = sub
                continue
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                shown = os.path.join(folder, *parts[: i + 1])
                if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
                    try:
                        if _is_link(os.lstat(part, dir_fd=fd)):
                            raise Refused(f"{shown} is a symlink (scarbook does not follow it)") from None
                    except FileNotFoundError:
                        pass
                    raise Refused(f"{shown} is not a folder") from None
                raise
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_existing(name: str, dir_fd: int | None) -> int | None:
    """`name` opened as open_dir opens a folder, or None when that fails for any reason (open_dir then
    makes it and says why it cannot be opened, exactly as without this first try)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def entry(root: os.PathLike | str, rel: str) -> os.stat_result:
    """The lstat of `rel` itself (a link is not followed, and no link on the way to it is)."""
    root, parts = os.fspath(root), _parts(rel)
    if MODE == "portable" or not parts:
        path = os.path.join(root, *parts)
        for i in range(1, len(parts)):
            try:
                if _is_link(os.lstat(os.path.join(root, *parts[:i]))):
                    raise Refused(f"{'/'.join(parts[:i])} is a symlink")
            except (FileNotFoundError, NotADirectoryError):
                raise _missing(rel) from None
        try:
            return os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            raise _missing(rel) from None
    parent = _open_parent(root, parts, rel)
    try:
        return os.lstat(parts[-1], dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError):
        raise _missing(rel) from None
    finally:
        os.close(parent)


def walk(root: os.PathLike | str, look: Callable[[str], bool] = lambda rel: False) -> dict[str, os.stat_result | None]:
    """Every entry under `root` that is not a folder, by relative posix path -> its lstat when
    `look(rel)`, else None. Links are listed, never entered; nothing is opened but folders.
    A missing root is an empty dict. A folder it does not enter — one past MAX_DEPTH (no recursion), one it
    cannot enter or list (its bits taken) — is an entry itself, its stat None: what the agent put where the
    walk does not go is a change the diff sees, never a hiding place, and never the run's error."""
    root = os.fspath(root)
    try:
        if MODE == "portable":
            return _walk_paths(root, look)
        top = _open_root(root, ".")
    except Refused as exc:
        if exc.missing:
            return {}
        raise
    out: dict[str, os.stat_result | None] = {}
    stack: list[tuple[int, str, list[str]]] = []  # fd, prefix, subfolders still to enter
    try:
        stack.append((top, "", _list(top, "", out, look)))
        while stack:
            fd, prefix, subs = stack[-1]
            if not subs:
                os.close(stack.pop()[0])
                continue
            name = subs.pop()
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                continue  # gone since it was listed
            except OSError:
                try:  # replaced by a link or a file since it was listed: an entry like any other
                    st: os.stat_result | None = os.lstat(name, dir_fd=fd)
                except FileNotFoundError:
                    continue
                except OSError:  # its folder cannot be entered (no x bit): still an entry, never a hiding place
                    st = None
                out[prefix + name] = st if look(prefix + name) else None
                continue
            if len(stack) > MAX_DEPTH:  # deeper than a walk goes: the folder is the entry, never an error
                os.close(sub)
                out[prefix + name] = None
                continue
            stack.append((sub, prefix + name + "/", _list(sub, prefix + name + "/", out, look)))
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return out


def _list(fd: int, prefix: str, out: dict, look: Callable[[str], bool]) -> list[str]:
    subs: list[str] = []
    try:
        with os.scandir(fd) as it:
            entries = list(it)
    except FileNotFoundError:
        return subs
    except PermissionError:  # opened but not listed: the folder itself is the entry (what it holds is unseen)
        if prefix:
            out[prefix[:-1]] = None
        return subs
    for e in entries:
        if e.is_dir(follow_symlinks=False):  # d_type: no syscall
            subs.append(e.name)
            continue
        rel = prefix + e.name
        try:
            out[rel] = os.lstat(e.name, dir_fd=fd) if look(rel) else None
        except FileNotFoundError:
            pass  # deleted since it was listed
        except OSError:  # listed but not stat-ed (its folder has no x bit): an entry that cannot be unchanged
            out[rel] = None
    return subs


def _walk_paths(root: str, look: Callable[[str], bool]) -> dict[str, os.stat_result | None]:
    out: dict[str, os.stat_result | None] = {}
    todo = [(root, "", 0)]
    while todo:
        folder, prefix, depth = todo.pop()
        if depth > MAX_DEPTH:  # (as walk's)
            out[prefix[:-1]] = None
            continue
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except PermissionError:  # a folder that cannot be listed is the entry (as walk's)
            if prefix:
                out[prefix[:-1]] = None
            continue
        for e in entries:
            rel = prefix + e.name
            try:
                st = e.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # deleted since it was listed
            except OSError:  # listed but not stat-ed (its folder has no x bit): an entry all the same
                out[rel] = None
                continue
            if stat.S_ISDIR(st.st_mode) and not _is_link(st):
                todo.append((e.path, rel + "/", depth + 1))
            else:
                out[rel] = st if look(rel) else None
    return out


