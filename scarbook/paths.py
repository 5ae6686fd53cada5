"""Keep every path a case names inside its workspace."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from scarbook.errors import PathEscapeError


def check_relative(rel: str) -> str | None:
    """Return why `rel` may not name a place inside a workspace, or None if it may."""
    if not isinstance(rel, str) or not rel.strip():
        return "path is empty"
    if "\\" in rel:
        return f"path {rel!r} uses backslashes; write it with '/'"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or os.path.isabs(rel):
        return f"path {rel!r} is absolute; paths are relative to the workspace root"
    if ".." in pure.parts:
        return f"path {rel!r} contains '..' and would leave the workspace"
    return None


def resolve_inside(root: Path, rel: str) -> Path:
    """Resolve `rel` against `root`, refusing anything (including symlinks) that leads out.

    The returned path need not exist. Only the components below `root` are looked at (one lstat
    each); when one of them is a symlink, the whole path is resolved and must stay inside.
    """
    why = check_relative(rel)
    if why:
        raise PathEscapeError(why)
    target = Path(root)
    linked = False
    for part in PurePosixPath(rel).parts:
        target = target / part
        if not linked and os.path.islink(target):
            linked = True
    if not linked:
        return target  # no '..' and no link below root: it cannot leave root
    root_real = Path(os.path.realpath(root))
    real = Path(os.path.realpath(target))
    if real != root_real and root_real not in real.parents:
        raise PathEscapeError(f"path {rel!r} is a symlink that leads out of the workspace (to {real})")
    return real
