"""Fresh workspaces: seed before every run, and the diff of what the agent changed."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.models import Case, WorkspaceDiff


@dataclass
class SeedManifest:
    """What seeding a case's workspace writes: relative path -> (source file or inline text, sha256).
    Built once per case per session, so each run copies and never re-hashes the seed."""

    files: dict[str, tuple[Path | str, str]] = field(default_factory=dict)


@dataclass
class Snapshot:
    """What the workspace held after seeding: relative path -> (size, mtime_ns, sha256)."""

    files: dict[str, tuple[int, int, str]] = field(default_factory=dict)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _walk(root: Path, follow_links: bool = False) -> dict[str, Path]:
    out: dict[str, Path] = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=follow_links):
        dirnames.sort()
        for name in filenames:
            p = Path(dirpath) / name
            out[p.relative_to(root).as_posix()] = p
    return out


def seed_manifest(case: Case) -> SeedManifest:
    manifest = SeedManifest()
    seed = case.seed_dir
    if seed is not None and seed.is_dir():
        # Links are followed (load_case refused links that leave the case), as a copy would.
        for rel, src in _walk(seed, follow_links=True).items():
            manifest.files[rel] = (src, _digest(src))
    for rel, text in case.seed_files.items():
        manifest.files[rel] = (text, hashlib.sha256(text.encode("utf-8")).hexdigest())
    return manifest


def prepare_workspace(case: Case, dest: Path, manifest: SeedManifest | None = None) -> Snapshot:
    """Create `dest` fresh and fill it from the case's seed/ and inline seed files."""
    try:
        dest.mkdir(parents=True)
    except FileExistsError:
        shutil.rmtree(dest)
        dest.mkdir()
    manifest = manifest or seed_manifest(case)
    snap = Snapshot()
    for rel, (source, digest) in manifest.files.items():
        target = dest / rel  # validated when the case loaded; a fresh folder holds no links yet
        if "/" in rel:
            target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(source, Path):
            shutil.copy(source, target)  # content and mode (a seeded script stays executable)
        else:
            target.write_text(source, encoding="utf-8")
        st = target.stat()
        snap.files[rel] = (st.st_size, st.st_mtime_ns, digest)
    return snap


def diff_workspace(before: Snapshot, root: Path) -> WorkspaceDiff:
    """Created / modified / deleted relative to the seed. A deleted workspace deletes everything.

    A seeded file whose size and mtime are unchanged is taken as unchanged; otherwise its content
    decides (rewriting a file with the same bytes is not a modification)."""
    now = _walk(root)
    diff = WorkspaceDiff()
    for rel, p in sorted(now.items()):
        if rel not in before.files:
            diff.created.append(rel)
            continue
        size, mtime_ns, digest = before.files[rel]
        try:
            if p.is_symlink():
                diff.modified.append(rel)
                continue
            st = p.stat()
            if st.st_size == size and st.st_mtime_ns == mtime_ns:
                continue
            if st.st_size != size or _digest(p) != digest:
                diff.modified.append(rel)
        except OSError:
            diff.modified.append(rel)
    diff.deleted = sorted(rel for rel in before.files if rel not in now)
    return diff
