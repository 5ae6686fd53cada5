"""Which verdict-cache entries may be trusted: an unconfined agent can write anything under workspaces/.

A sandboxed agent never sees workspaces/judge-cache (the sandbox hides it), but an unconfined one runs
as you and could rewrite every entry to PASS. So the cache keeps two parts:

    judge-cache/<2 hex>/<key>.json              written by sessions whose agents ran in the sandbox
    judge-cache/unconfined/<2 hex>/<key>.json   written by unconfined sessions, and swept here: every
                                                entry of the first part changed while an unconfined
                                                agent ran
    judge-cache/unconfined-running/<id>.json    one marker per unconfined session while its agents run

A sandboxed session reads the first part only. Every session ignores an entry changed since an
unconfined session that is still running began (its marker; its own window it also keeps in memory),
judged by the entry's ctime, which the kernel sets on every change and no process can set back
(utime sets mtime and atime only). When an unconfined session's agents are done, the entries of the
first part changed since it began (the entry, or the folder holding it) move to the second part;
a marker whose scarbook is gone (killed) is swept so by the next session that opens the cache.

What this does not stop: an unconfined agent that deletes its session's marker can have a *concurrent*
sandboxed session read what it wrote until its session ends; a process it leaves running after
its session (README: Threat model) writes after the sweep.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from scarbook.fs.files import atomic_write_bytes, read_regular_bytes

UNCONFINED = "unconfined"
RUNNING = "unconfined-running"
# ctime comes from the kernel's coarse clock (up to a tick, 10 ms at HZ=100, behind time.time_ns()): a
# window starts this much earlier than the moment it was opened, so nothing written after can look older.
MARGIN_NS = 20_000_000


@dataclass(frozen=True)
class Window:
    """An unconfined session's time with agents running: entries changed since `since_ns` are suspect."""

    since_ns: int
    marker: Path | None  # None: it could not be written (other sessions cannot see this one; its sweep still runs)


def open_window(folder: Path) -> Window:
    """Before an unconfined session's first agent starts: its marker, for every other session to see."""
    since = time.time_ns() - MARGIN_NS
    marker = Path(folder) / RUNNING / f"{os.getpid()}-{secrets.token_hex(4)}.json"
    try:
        atomic_write_bytes(marker, json.dumps({"since_ns": since, "pid": os.getpid()}).encode(), durable=False)
    except OSError:
        return Window(since, None)
    return Window(since, marker)


def close_window(folder: Path, window: Window) -> None:
    """After the session's last agent is gone: what changed in the sandboxed part since it began moves
    to the unconfined part; then its marker goes."""
    sweep(Path(folder), window.since_ns)
    if window.marker is not None:
        with contextlib.suppress(OSError):
            os.unlink(window.marker)


def open_since(folder: Path) -> int | None:
    """The earliest start of an unconfined session still running in this project (None: none runs);
    the markers of scarbooks that are gone are swept first."""
    earliest: int | None = None
    try:
        markers = list(os.scandir(Path(folder) / RUNNING))
    except OSError:
        return None
    for m in markers:
        since, pid = _marker(Path(m.path))
        if since is None:
            continue
        if pid is not None and not _alive(pid):  # its scarbook was killed before it could sweep
            sweep(Path(folder), since)
            with contextlib.suppress(OSError):
                os.unlink(m.path)
            continue
        earliest = since if earliest is None else min(earliest, since)
    return earliest


def changed_since(path: Path, since_ns: int, *, root: bool) -> bool:
    """Did the entry at `path`, or its folder (and with `root` the cache's own), change at `since_ns` or later?"""
    for p in (path, path.parent, *([path.parent.parent] if root else [])):
        try:
            if os.lstat(p).st_ctime_ns >= since_ns:
                return True
        except OSError:
            return True
    return False


def sweep(folder: Path, since_ns: int) -> int:
    """Move every entry of the sandboxed part that changed at `since_ns` or later (or sits in a folder
    that did) into the unconfined part. How many moved."""
    try:  # the cache's own folder changed (renamed in, a folder swapped inside): nothing in it is known
        everything = os.lstat(folder).st_ctime_ns >= since_ns
        shards = [e for e in os.scandir(folder) if len(e.name) == 2]
    except OSError:
        return 0
    target = folder / UNCONFINED
    _real_folder(target)
    moved = 0
    for shard in shards:
        try:
            st = os.lstat(shard.path)
            if not stat.S_ISDIR(st.st_mode):  # an agent's link or file where a folder belongs
                os.unlink(shard.path)
                continue
            entries = list(os.scandir(shard.path))
        except OSError:
            continue
        whole = everything or st.st_ctime_ns >= since_ns  # a folder swapped in: nothing in it is known
        for e in entries:
            try:
                if whole or os.lstat(e.path).st_ctime_ns >= since_ns:
                    _real_folder(target / shard.name)
                    os.replace(e.path, target / shard.name / e.name)
                    moved += 1
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(e.path)  # cannot be moved aside: not kept where it would be trusted
    return moved


def _real_folder(path: Path) -> None:
    """`path` as a folder of its own: whatever an agent put there (a link, a file) goes first."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        path.mkdir(parents=True, exist_ok=True)
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        path.mkdir(parents=True, exist_ok=True)


def _marker(path: Path) -> tuple[int | None, int | None]:
    try:
        data = json.loads(read_regular_bytes(path, limit=4096))
        since, pid = data.get("since_ns"), data.get("pid")
    except (OSError, ValueError, AttributeError):
        return None, None
    if not isinstance(since, int) or isinstance(since, bool):
        return None, None
    return since, pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True
