"""What a race-free workspace read costs, and whether openat2 would pay (a script, not a test).

    .venv/bin/python benchmarks/safefs_bench.py

For a file 1 and 4 folders deep, the time per read (open, fstat, read, close) of:
  plain    os.open(path) — follows links, the unsafe floor
  safefs   scarbook.fs.safefs.read_file: the workspace folder, then each folder, opened with O_NOFOLLOW
  openat2  the workspace folder opened, then one openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) via
           ctypes (Linux >= 5.6; skipped where the kernel says ENOSYS)
Ratios are against plain. The choice it informs: safefs keeps the portable per-folder walk unless
openat2 saves a visible share of a run (a run costs milliseconds; these are microseconds).
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import tempfile
import time

from scarbook.fs import safefs

N = 20_000
SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437}.get(platform.machine())
RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x04, 0x08


class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def openat2_reader():
    if SYS_OPENAT2 is None or not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    how = OpenHow(os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)

    def read(root: str, rel: str) -> bytes:
        dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            fd = libc.syscall(SYS_OPENAT2, dfd, rel.encode(), ctypes.byref(how), ctypes.sizeof(how))
            if fd < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        finally:
            os.close(dfd)
        try:
            os.fstat(fd)
            return os.read(fd, 1 << 16)
        finally:
            os.close(fd)

    try:
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "f"), "w").close()
            read(d, "f")
    except OSError:
        return None  # ENOSYS: an older kernel
    return read


def plain(root: str, rel: str) -> bytes:
    fd = os.open(os.path.join(root, rel), os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fstat(fd)
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def per_read(fn, root: str, rel: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(N):
            fn(root, rel)
        best = min(best, time.perf_counter() - start)
    return best / N * 1e6


def main() -> int:
    o2 = openat2_reader()
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "a/b/c"))
        for rel in ("f.txt", "a/b/c/f.txt"):
            with open(os.path.join(root, rel), "w") as fh:
                fh.write("# tiny-agent\n")
        for rel in ("f.txt", "a/b/c/f.txt"):
            base = per_read(plain, root, rel)
            safe = per_read(lambda r, p: safefs.read_file(r, p, 1 << 16), root, rel)
            line = f"{rel:12} plain {base:5.1f} µs   safefs {safe:5.1f} µs ({safe / base:.2f}x)"
            if o2 is not None:
                fast = per_read(o2, root, rel)
                line += f"   openat2 {fast:5.1f} µs ({fast / base:.2f}x)"
            else:
                line += "   openat2 not available here"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
