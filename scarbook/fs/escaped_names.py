"""A file name as history records it, back to the file on disk it was made from.

History stores the name of a file the agent made escaped (text.escape_name: "\\x1b[0mout.txt" for a name
that starts with ESC [ 0 m), so that name no longer opens the file. `real_name(root, shown)` finds, folder by
folder below `root`, the entry whose escaped name is the shown one. A folder is listed only when it is
reached without following a link (safefs.open_dir; `follow_links` for a case's seed folder, whose links
seeding follows and load_case kept inside the case), and what it returns is read through safefs by the
caller: nothing outside `root` is listed or read.
"""

from __future__ import annotations

import os
import stat

from scarbook.fs import safefs
from scarbook.text import escape_name


def real_name(root: os.PathLike | str, shown: str, *, follow_links: bool = False) -> str:
    """The path below `root` (relative, posix) whose escape_name is `shown`. A name without a backslash is its
    own (escape_name writes every escape with one). Raises safefs.Refused — `missing` when no entry fits —
    with the shown name in the message, never the raw one."""
    if "\\" not in shown:
        return shown
    root = os.fspath(root)
    shown_parts = shown.split("/")
    if any(part in ("", ".", "..") for part in shown_parts):  # (no walk records one: a record made by hand)
        raise safefs.Refused(f"{shown} does not name a file below its folder")
    real: list[str] = []
    for i, part in enumerate(shown_parts):
        if "\\" not in part:
            real.append(part)
            continue
        names = _listing(root, real, "/".join(shown_parts[:i]) or ".", shown, follow_links)
        hits = [name for name in names if escape_name(name) == part]
        if not hits:
            raise safefs.Refused(f"{shown} does not exist", missing=True)
        if len(hits) > 1:
            raise safefs.Refused(f"{len(hits)} files are named {'/'.join(shown_parts[:i + 1])} once escaped: "
                                 "which one the run changed cannot be told")
        real.append(hits[0])
    return "/".join(real)


def _listing(root: str, parts: list[str], folder: str, shown: str, follow_links: bool) -> list[str]:
    """The names in the folder `parts` below `root`; `folder` is its shown name, for the messages."""
    try:
        if follow_links:
            return os.listdir(os.path.join(root, *parts))
        if safefs.MODE == "portable":  # (no dir fds: each folder on the way lstat-ed, none a link)
            if parts and not stat.S_ISDIR(safefs.entry(root, "/".join(parts)).st_mode):
                raise safefs.Refused("not a folder")
            return os.listdir(os.path.join(root, *parts))
        fd = safefs.open_dir(root, parts)
        try:
            return os.listdir(fd)
        finally:
            os.close(fd)
    except safefs.Refused:
        if _through_link(root, parts):
            raise safefs.Refused(f"{folder} is a symlink or inside one: not followed") from None
        raise safefs.Refused(f"{shown} does not exist", missing=True) from None
    except (FileNotFoundError, NotADirectoryError):
        raise safefs.Refused(f"{shown} does not exist", missing=True) from None


def _through_link(root: str, parts: list[str]) -> bool:
    """Whether some folder of `parts` is a link (looked at after a refusal, only to word it)."""
    for i in range(1, len(parts) + 1):
        try:
            if stat.S_ISLNK(os.lstat(os.path.join(root, *parts[:i])).st_mode):
                return True
        except OSError:
            return False
    return False
