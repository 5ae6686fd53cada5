"""One atomic writer and one careful reader for scarbook's own files (history, cases, config, reports).

The reader never blocks on a FIFO and never reads a directory or a device: history and cases sit
within an agent's reach, and `scarbook sessions` must not hang because something put a FIFO where a
runs file was. Race-free reads *inside a workspace* (relative to a directory fd) are another module's
job; this one reads files whose path scarbook chose.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class NotAFileError(OSError):
    """The path names something other than a regular file; `kind` says what ("a FIFO", ...)."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.kind = kind
        self.filename = str(path)


class FileTooLargeError(OSError):
    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(f"{path} is {size:,} bytes (more than {limit:,})")
        self.size, self.limit, self.filename = size, limit, str(path)


def kind_of(mode: int) -> str:
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path | str) -> tuple[int, os.stat_result]:
    """A read-only fd on the regular file at `path`, with its stat (the caller closes it). Raises as
    read_regular_bytes does: a directory, FIFO, socket or device is NotAFileError, never waited on."""
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever (a regular
    # file's reads ignore it).
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotAFileError(path, kind_of(st.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular_bytes(path: Path | str, *, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path`. Raises FileNotFoundError, NotAFileError (a
    directory, FIFO, socket or device: refused without waiting on it), FileTooLargeError (more
    than `limit` bytes: refused before reading), or the OSError the system gave (EACCES, ...)."""
    fd, st = open_regular(path)
    try:
        if limit is not None and st.st_size > limit:
            raise FileTooLargeError(path, st.st_size, limit)
        chunks = []
        left = (limit + 1) if limit is not None else -1  # a file that grows while read is still capped
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        data = b"".join(chunks)
        if limit is not None and len(data) > limit:
            raise FileTooLargeError(path, len(data), limit)
        return data
    finally:
        os.close(fd)


def _create_temp(path: Path) -> tuple[int, str]:
    """A new temp file beside `path`, created with mode 0666 less the umask — as any tool's output is
    (0644 under the usual umask), so CI artifact uploaders and other users can read the reports and
    case files scarbook writes. (mkstemp's 0600 would survive the rename.)"""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")  # (secrets.token_hex, without hashlib)
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside {path}")


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True, mode: int | None = None) -> None:
    """Write `data` to `path` so a reader sees the old file or the new one, never half of one.

    `durable=True` fsyncs the file before the rename and its directory after it. `durable=False`
    skips both: still safe against a crashed process (the rename happens only after the whole file
    is written), not against power loss; history uses it to keep runs cheap.
    A failed write (disk full) leaves no temp file behind and raises the OSError alone. `mode`: the new
    file's permission bits (the file it replaces had them), set before the rename."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file stands where a folder on the way should be: say that, not "File exists"
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from None
    fd, tmp = _create_temp(path)
    try:
        try:
            if mode is not None:
                os.chmod(tmp, mode)  # (by name: Windows has no chmod of a descriptor)
            view = memoryview(data)
            while view:  # raw writes: no buffer whose flush could fail a second time on close
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        sync_directory(path.parent)


def shared_name(named: Mapping[str, str | Path | None]) -> str | None:
    """Two options that name one regular file (`--junit out --json out`): the second report would overwrite the first,
    and the CI's JUnit reader found JSON; or two that name standard output (`--json - --junit -`): both reports on it,
    one after the other. Their message, or None. Another device or pipe takes both."""
    to_stdout = [option for option, path in sorted(named.items()) if path and is_standard_output(path)]
    if len(to_stdout) > 1:  # (`--json - --junit -`: the two reports one after the other, neither readable)
        named_all = " and ".join([", ".join(to_stdout[:-1]), to_stdout[-1]])
        keep, rest = to_stdout[0], to_stdout[1:]
        files = ", ".join(f"{o} {_EXAMPLE.get(o, 'FILE')}" for o in rest)
        return (f"{named_all} {'both' if len(to_stdout) == 2 else 'all'} write to standard output: the reports would "
                f"run together, one after the other — keep one there ({keep} -) and give "
                f"{'the other a file' if len(rest) == 1 else 'the others files'} ({files})")
    seen: dict[str, str] = {}
    for option, path in sorted(named.items()):  # (the message the same whatever order a command lists them in)
        if not path or str(path) == STDOUT_NAME or (os.path.exists(path) and not os.path.isfile(path)):
            continue
        key = os.path.realpath(path)
        if key in seen:
            return (f"{seen[key]} and {option} both name {key}: one report would overwrite the other — give each its "
                    "own file")
        seen[key] = option
    return None


_EXAMPLE = {"--json": "report.json", "--junit": "report.xml", "--html": "report.html"}
STDOUT_NAME = "-"  # what a report option takes for standard output, as most tools do (`./-` is a file named '-')


def is_standard_output(path: Path | str) -> bool:
    """`path` is this process's standard output — `-`, /dev/stdout, /dev/fd/1, the file or pipe stdout is
    redirected to — but not the null device (`--json /dev/null >/dev/null` asks for nothing). False where
    stdout has no file of its own (a test's captured stream), unless it is named `-`."""
    if str(path) == STDOUT_NAME:
        return True
    try:
        here, there = os.fstat(sys.stdout.fileno()), os.stat(path)
    except (OSError, ValueError, AttributeError):  # (io.UnsupportedOperation is both an OSError and a ValueError)
        return False
    return os.path.samestat(here, there) and not os.path.samestat(there, os.stat(os.devnull))


def write_named_file(path: Path | str, text: str) -> None:
    """Write a file the user named on the command line (a report, an export) where the name leads.

    A regular file (or none yet) is written atomically, as atomic_write_text does, at the link's target
    when the name is a symlink: the link stays a link. What is not a regular file — /dev/stdout, the pipe
    of a shell's `>(jq .)`, /dev/null — is written to as it is: a temp file renamed over it would replace
    the device, the pipe or the link itself (as root, `--json /dev/stdout` replaced /dev/stdout). A file
    written over keeps its permission bits: `--json private.json` over a 0600 file made it 0644. The file
    that is this process's standard output is written through stdout (the command then prints its lines on
    stderr: cli/common.NamedFile)."""
    if is_standard_output(path):  # written through it: a redirection's `>>` appends, a pipe keeps its order
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
        return
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is not None and (why := read_only_why(path, mode)):  # a rename would replace it anyway: refuse
        raise PermissionError(errno.EACCES, why, str(path))
    if mode is None or stat.S_ISREG(mode):  # (over a file: its permissions kept — a private 0600 report stays so)
        atomic_write_text(Path(os.path.realpath(path)), text, mode=None if mode is None else stat.S_IMODE(mode))
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    try:  # non-blocking, so a pipe nothing reads is an error now rather than a wait forever
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO and stat.S_ISFIFO(mode):
            raise OSError(errno.ENXIO, "nothing reads from that pipe", str(path)) from None
        raise
    if hasattr(os, "O_NONBLOCK"):  # (POSIX: writes then wait for the reader, as a shell's redirection does)
        os.set_blocking(fd, True)
    with open(fd, "wb") as out:
        out.write(text.encode("utf-8"))


def sync_directory(directory: Path) -> None:
    """fsync `directory`, so a rename inside it survives power loss (the file's own fsync covers its
    bytes, not the directory entry that names it). Skipped where directories cannot be opened for
    it: Windows has no O_DIRECTORY, and NTFS journals the rename itself. A file system that cannot
    sync a directory (EINVAL, ENOTSUP: some network and FUSE mounts) is not an error: the new file
    is already in place, and that is all such a mount can promise."""
    o_directory = getattr(os, "O_DIRECTORY", None)
    if o_directory is None:
        return
    fd = os.open(directory, os.O_RDONLY | o_directory | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str, *, durable: bool = True, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable, mode=mode)


def describe_os_error(exc: OSError) -> str:
    """The system's words for a failed file operation, without Python's `[Errno n]` prefix."""
    if isinstance(exc, (NotAFileError, FileTooLargeError)):
        return str(exc.args[0]) if exc.args else str(exc)
    return exc.strerror or str(exc)


def unwritable_why(folder: Path | str) -> str | None:
    """Why scarbook could not create files in `folder`, or None if it could (a missing folder: if it
    could make it, in its nearest existing parent). Nothing is left behind.

    Tried for real — a fresh file created and removed — not guessed from permission bits: root ignores
    those, and a read-only mount or a file where a folder should be refuses everyone."""
    folder = Path(folder)
    probe = folder
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is a file, not a folder" if probe == folder else \
            f"{probe} (on the way to {folder}) is a file, not a folder"
    try:
        fd, tmp = _create_temp(probe / "write-test")
    except OSError as exc:
        return f"cannot create files in {probe}: {describe_os_error(exc)}"
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return None


def read_only_why(path: Path | str, mode: int) -> str | None:
    """Why a regular file a command was asked to write over is kept: no one may write it (its mode has no write
    bit: `chmod a-w report.html`, a file kept as it is). The atomic write renames a new file over it, which its
    folder allows, root or not, so without this check it was replaced without a word."""
    if not stat.S_ISREG(mode) or stat.S_IMODE(mode) & 0o222:
        return None
    return (f"{path} is read-only (mode {stat.S_IMODE(mode):04o}): scarbook does not replace a file made read-only "
            f"(`chmod u+w {path}` lets it)")


def named_file_unwritable_why(path: Path | str) -> str | None:
    """Why write_named_file could not write `path` (a report a command was asked for), said before anything
    runs; None if it could. A device or a pipe — /dev/stdout, /dev/fd/1, a shell's `>(jq .)` — and the file
    stdout is redirected to are written as they are, whatever their folder allows (/dev is root's)."""
    try:
        mode: int | None = os.stat(path).st_mode
    except OSError:
        mode = None
    if is_standard_output(path) or (mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)):
        return None
    if mode is not None and (why := read_only_why(path, mode)):
        return why
    return unwritable_why(Path(path).parent) or (f"{path} is a folder" if mode is not None and stat.S_ISDIR(mode)
                                                 else None)


RENAME_NOREPLACE, AT_FDCWD = 1, -100  # linux/fs.h, fcntl.h
# Linux's renameat2(2) through ctypes, looked up once (None: not Linux, or a libc without it)
_renameat2: Callable[..., int] | None = None
_looked_up = False


def _libc_renameat2() -> Callable[..., int] | None:
    global _renameat2, _looked_up
    if not _looked_up and sys.platform == "linux":
        import ctypes  # (only here: most commands never move a folder into place)

        try:
            found = ctypes.CDLL(None, use_errno=True).renameat2
            found.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            found.restype = ctypes.c_int
            _renameat2 = found
        except (OSError, AttributeError):  # a libc older than glibc 2.28 / musl 1.2.3
            pass
    _looked_up = True
    return _renameat2


def move_into_place(src: Path, dst: Path) -> None:
    """Rename the folder `src` to `dst`, where nothing may be: FileExistsError when anything is there, even an
    empty folder — which os.rename replaces silently (POSIX), so a folder another process had just made at that
    name would be taken over. Linux: renameat2(RENAME_NOREPLACE), one step. Elsewhere, or on a file system that
    has no RENAME_NOREPLACE (EINVAL: some network and FUSE mounts): `dst` is made first with mkdir, which fails
    when anything is there, and `src` renamed over that empty folder of its own (for that instant a reader may
    see an empty folder at `dst`); if the rename fails, the folder made for it goes."""
    rename = _libc_renameat2()
    if rename is not None:
        import ctypes

        if rename(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), os.fspath(src), None, os.fspath(dst))
    os.mkdir(dst)
    try:
        os.rename(src, dst)
    except BaseException as exc:
        try:
            os.rmdir(dst)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno in (errno.ENOTEMPTY, errno.EEXIST):  # filled meanwhile
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(dst)) from exc
        raise
