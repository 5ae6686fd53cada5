"""Keep every path a case names inside its workspace."""

from __future__ import annotations

import functools
import os
from pathlib import Path, PurePosixPath

from scarbook.errors import PathEscapeError

MAX_DEPTH = 100  # folders a workspace walk goes down (scarbook.fs.safefs); one fd is held per level


def short_path(rel: str) -> str:
    """A long path as a message shows it: its start and its end."""
    return rel if len(rel) <= 60 else rel[:30] + "…" + rel[-20:]


def unholdable(rel: str) -> str | None:
    """Why no workspace can hold a file at `rel`, wherever its root is (a clause after the path), or None."""
    if "\0" in rel:
        return "holds a NUL character, which no file name can hold"
    if rel.count("/") > MAX_DEPTH:
        return f"is nested more than {MAX_DEPTH} folders deep; no run walks a workspace deeper"
    return None


# Where a backslash is one more character of a name (not Windows): a name a walk found may hold one
NAMES_HOLD_BACKSLASH = os.sep == "/" and os.altsep is None


def check_relative(rel: str, *, walked: bool = False) -> str | None:
    """Return why `rel` may not name a place inside a workspace, or None if it may. A path a case names must
    not hold a backslash (it is a separator on Windows: "write it with '/'"); a `walked` name, one found on
    disk (an agent's file named `a\\b.txt`), may, where a backslash is no separator."""
    if not isinstance(rel, str):
        return "path is empty"
    return _check_text(rel, walked and NAMES_HOLD_BACKSLASH)


@functools.lru_cache(maxsize=1024)  # a case names the same few paths in every run
def _check_text(rel: str, backslash_ok: bool = False) -> str | None:
    if not rel.strip():
        return "path is empty"
    why = unholdable(rel)
    if why:
        return f"path {short_path(rel)!r} {why}"
    if "\\" in rel and not backslash_ok:
        return f"path {rel!r} uses backslashes; write it with '/'"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or os.path.isabs(rel):
        return f"path {rel!r} is absolute; paths are relative to the workspace root"
    if ".." in pure.parts:
        return f"path {rel!r} contains '..' and would leave the workspace"
    return None


@functools.lru_cache(maxsize=1024)
def _parts(rel: str) -> tuple[str, ...]:
    return PurePosixPath(rel).parts


def resolve_inside(root: Path, rel: str) -> Path:
    return Path(resolve_inside_str(root, rel))


def resolve_inside_str(root: Path | str, rel: str) -> str:
    """Resolve `rel` against `root`, refusing anything (including symlinks) that leads out.

    The returned path need not exist; `resolve_inside` gives it as a Path. Only the components below
    `root` are looked at (one lstat each); when one of them is a symlink, the whole path is resolved
    and must stay inside.
    """
    why = check_relative(rel)
    if why:
        raise PathEscapeError(why)
    target = os.fspath(root)
    linked = False
    for part in _parts(rel):
        target = os.path.join(target, part)
        if not linked and os.path.islink(target):
            linked = True
    if not linked:
        return target  # no '..' and no link below root: it cannot leave root
    root_real = Path(os.path.realpath(root))
    real = Path(os.path.realpath(target))
    if real != root_real and root_real not in real.parents:
        raise PathEscapeError(f"path {rel!r} is a symlink that leads out of the workspace (to {real})")
    return str(real)
