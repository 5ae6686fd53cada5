"""Where a run's folder belongs while a sandbox slot holds it, kept on disk so a SIGKILLed scarbook loses none.

A pool's folder is workspaces/.slots/<id>/ (one per pool, under the project's workspaces/: the renames never
cross a file system). While a run is in slot <k>, the link <k>.run leads to the run's folder, which is then
<k>/ws. The pool holds an exclusive lock on its `lock` file while it lives; `recover` (at every session's
start) takes over the folders whose lock nobody holds, renames each ws back where its link leads, and
removes the folder. A folder whose run cannot go back (its place taken) is left as it is, and said.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

SLOTS = ".slots"


def write(link: Path, run_dir: Path) -> None:
    os.symlink(run_dir, link)


def clear(link: Path) -> None:
    try:
        os.unlink(link)
    except FileNotFoundError:
        pass


def hold(folder: Path) -> int:
    """The pool's lock on `folder` (made here), held while the returned fd is open."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def recover(workspaces: Path) -> list[str]:
    """Put back the runs' folders of pools that are gone (their lock is free); what could not go back, said."""
    root = workspaces / SLOTS
    try:
        pools = sorted(root.iterdir())
    except OSError:
        return []
    problems = []
    for pool in pools:
        try:
            fd = os.open(pool / "lock", os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = -1
        except OSError:
            continue
        try:
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its scarbook is running
            left = _put_back(pool)
            if left:
                problems += left
            else:
                shutil.rmtree(pool, ignore_errors=True)
        finally:
            if fd >= 0:
                os.close(fd)
    return problems


def _put_back(pool: Path) -> list[str]:
    left = []
    for link in pool.glob("*.run"):
        ws = link.with_suffix("") / "ws"
        target = Path(os.readlink(link))
        if not os.path.lexists(ws):
            continue
        if os.path.lexists(target):
            left.append(f"a run's folder held by a sandbox slot when scarbook stopped could not be put back: "
                        f"{target} exists — it is in {ws}")
            continue
        os.rename(ws, target)
    return left
