"""Fresh workspaces: seed before every run, and the diff of what the agent changed."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.models import Case, WorkspaceDiff
from scarbook.paths import resolve_inside


@dataclass
class Snapshot:
    """What the workspace held after seeding: relative path -> (size, sha256)."""

    files: dict[str, tuple[int, str]] = field(default_factory=dict)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _walk(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            p = Path(dirpath) / name
            out[p.relative_to(root).as_posix()] = p
    return out


def prepare_workspace(case: Case, dest: Path) -> Snapshot:
    """Create `dest` fresh and fill it from the case's seed/ and inline seed files."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    seed = case.seed_dir
    if seed is not None and seed.is_dir():
        # symlinks=False: copy what a link points at (load_case refused links that leave the case).
        shutil.copytree(seed, dest, dirs_exist_ok=True, symlinks=False)
    for rel, text in case.seed_files.items():
        target = resolve_inside(dest, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return snapshot(dest)


def snapshot(root: Path) -> Snapshot:
    return Snapshot({rel: (p.stat().st_size, _digest(p)) for rel, p in _walk(root).items() if not p.is_symlink()})


def diff_workspace(before: Snapshot, root: Path) -> WorkspaceDiff:
    """Created / modified / deleted relative to the seed. A deleted workspace deletes everything."""
    now = _walk(root)
    diff = WorkspaceDiff()
    for rel, p in sorted(now.items()):
        if rel not in before.files:
            diff.created.append(rel)
            continue
        size, digest = before.files[rel]
        try:
            if p.is_symlink() or p.stat().st_size != size or _digest(p) != digest:
                diff.modified.append(rel)
        except OSError:
            diff.modified.append(rel)
    diff.deleted = sorted(rel for rel in before.files if rel not in now)
    return diff
