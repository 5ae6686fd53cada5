"""The checks load makes on a case's folders (cases/io.py's load_case): seed/ and scar/ are real folders whose
links stay inside (seed/'s inside seed/, scar/'s inside the case) — and, in seed/, lead to something that
exists, not round a loop of links or of folders — and seed/ holds no FIFO, socket or device and no folders deeper than a run walks, all seen in one walk
of each folder; an inline seed fits beside seed/. Each is refused as a CaseError naming the entry and the fix:
seeding copies seed/ into every workspace, so what it cannot copy would make every run an error."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from scarbook.errors import CaseError
from scarbook.fs.files import kind_of
from scarbook.fs.paths import MAX_DEPTH
from scarbook.fs.yamlio import line_of


def check_case_folders(folder: Path) -> None:
    """The case folder's seed/ and scar/, where present: real folders, with no link leading out of them."""
    for name, within in (("seed", "seed"), ("scar", "")):
        sub = folder / name
        try:
            mode = os.lstat(sub).st_mode  # (one look, not four: every case of a collection is read at each start)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if not stat.S_ISDIR(mode):  # a file, or a link (to a folder or not)
            raise CaseError(sub, f"{name} must be a real folder inside the case", fix="replace it with a folder of files")
        _refuse_links_out(sub, folder / within if within else folder, name)


def refuse_seed_clashes(inline: dict[str, str], seed: Path, path: Path, raw: Any) -> None:
    """An inline seed file and the seed/ folder must fit in one workspace: no inline file inside a file of
    seed/, no inline file where seed/ has a folder of files (a file of the same name is fine: the inline wins).
    Links are followed, as seeding's copy does (links that leave the case were refused by check_case_folders)."""
    if not seed.is_dir():
        return
    for rel in inline:
        parts = PurePosixPath(rel).parts
        fix = "rename the inline entry, or "
        line = line_of(raw, rel) or line_of(raw)
        for n in range(1, len(parts)):
            above = "/".join(parts[:n])
            if (seed / above).is_file():
                raise CaseError(path, f"seed: {rel!r} puts a file inside {above!r}, which is a file in the seed "
                                f"folder (seed/{above})", line=line, fix=f"{fix}seed/{above}")
            if not (seed / above).is_dir():
                break  # nothing of seed/ at or below it
        else:
            file = "/".join(parts)
            inner = _first_file_under(seed / file) if (seed / file).is_dir() else None
            if inner is not None:
                raise CaseError(path, f"seed: {rel!r} is a file, and the seed folder holds a folder {file!r} "
                                f"(seed/{file}/{inner})", line=line, fix=f"{fix}the folder seed/{file}")


def _first_file_under(folder: Path) -> str | None:
    """The first file below `folder` (relative, posix), or None when it holds only empty folders (which seed nothing)."""
    for dirpath, _dirs, files in os.walk(folder, followlinks=True):
        if files:
            return Path(dirpath, sorted(files)[0]).relative_to(folder).as_posix()
    return None


def _refuse_links_out(sub: Path, within: Path, name: str) -> None:
    """Every symlink under `sub` must resolve inside `within`: a seed is copied into every workspace,
    and a link to ../scar or /etc/passwd would hand the agent what the case never meant to give; in seed/, to
    something that exists."""
    real_within = ""  # resolved at the first link met (most seeds hold none)
    place = "the seed folder" if name == "seed" else "the case folder"
    folder_links = False  # seed/ holds a link to a folder: seeding follows it, so it may lead round in a loop
    try:
        for dirpath, dirnames, filenames in _walk(sub, seed=name == "seed"):
            if name == "seed" and dirnames:
                _refuse_too_deep(sub, dirpath, dirnames[0])
            for entry in dirnames + filenames:
                p = os.path.join(dirpath, entry)
                if os.path.islink(p):
                    real_within = real_within or os.path.realpath(within)
                    target = os.path.realpath(p)
                    # (a link to seed/ itself stays in: the loop it makes is named below)
                    if not target.startswith(real_within + os.sep) and not (name == "seed" and target == real_within):
                        raise CaseError(Path(p), f"{name} file is a symlink that leads out of {place} (to {target})",
                                        fix=f"copy the file into {name}/ instead of linking it")
                    if name == "seed":  # seeding follows it: every run an error
                        folder_links = _refuse_unseedable_link(sub, p, target) or folder_links
        if folder_links:
            _refuse_folder_loops(sub)
    except RecursionError:
        raise CaseError(sub, f"{name}/ is nested too deeply to read", fix="flatten the folder") from None


def _refuse_unseedable_link(seed: Path, link: str, target: str) -> bool:
    """A link in seed/ must lead to a file or a folder: not to nothing, not round a loop of links (which the
    system gives up on: ELOOP). True when it leads to a folder."""
    try:
        return stat.S_ISDIR(os.stat(link).st_mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CaseError(Path(link), f"seed file is a symlink loop ({_link_chain(seed, link)}): it never leads "
                            "to a file, so no run can seed it", fix="point the link at a file in seed/, or remove "
                            "it") from None
    raise CaseError(Path(link), f"seed file is a symlink to {target}, which does not exist: no run can seed it",
                    fix="point the link at a file in seed/, or remove it")


def _link_chain(seed: Path, link: str) -> str:
    """The links `link` leads through until one comes round again, relative to seed/'s case: a → b → a."""
    seen: list[str] = []
    at = os.path.normpath(link)
    while os.path.islink(at) and at not in seen and len(seen) < 40:
        seen.append(at)
        at = os.path.normpath(os.path.join(os.path.dirname(at), os.readlink(at)))
    return " → ".join(os.path.relpath(p, seed.parent) for p in (*seen, at))


def _refuse_folder_loops(seed: Path) -> None:
    """Seeding follows links to folders (as a copy does): one that leads to a folder it is in (seed/d/up -> ..),
    or two that lead to each other's folders, would be followed round forever — every run an error ('Too many
    levels of symbolic links'). Walked as seeding walks, only when seed/ holds a link to a folder."""
    def visit(folder: str, above: frozenset[str]) -> None:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)  # (the same loop named on every filesystem)
        except OSError:
            return
        for e in entries:
            try:
                if not e.is_dir():  # (follows a link, as seeding does)
                    continue
            except OSError:
                continue
            real = os.path.realpath(e.path)
            if real in above:
                where = Path(os.path.realpath(folder), e.name)  # the link itself, where it is in seed/
                raise CaseError(where, f"seed folder is a symlink loop: it leads back to {real}, a folder seeding "
                                "reaches it through, so seeding (which follows links) would copy that folder into "
                                "itself without end",
                                fix="remove the link, or put the files it should seed in seed/")
            visit(e.path, above | {real})

    visit(os.fspath(seed), frozenset({os.path.realpath(seed)}))


def _walk(top: str | Path, *, seed: bool) -> Iterator[tuple[str, list[str], list[str]]]:
    """os.walk's (dirpath, dirnames, filenames), top-down, from the same one listing per folder; in seed/, an
    entry that is neither a folder, a file nor a link (a FIFO, a socket, a device) is refused from that listing's
    entry kind (no stat per file): seeding copies regular files only, so every run would be an error."""
    try:
        with os.scandir(top) as it:
            entries = list(it)
    except OSError:  # (os.walk skips a folder it cannot list, too)
        return
    dirs, files = [], []
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            dirs.append(e.name)
            continue
        if seed and not e.is_file(follow_symlinks=False) and not e.is_symlink():
            _refuse_odd_seed(e)
        files.append(e.name)
    yield os.fspath(top), dirs, files
    for d in dirs:
        yield from _walk(os.path.join(top, d), seed=seed)


def _refuse_odd_seed(e: os.DirEntry[str]) -> None:
    try:
        what = kind_of(e.stat(follow_symlinks=False).st_mode)
    except OSError:
        return  # gone since the listing: nothing left to seed
    raise CaseError(Path(e.path), f"seed file is {what}: no run can seed it (seeding copies regular files)",
                    fix="replace it with a regular file, or remove it")


def _refuse_too_deep(seed: Path, dirpath: str, inner: str) -> None:
    """A seed is copied into every workspace, and a run walks a workspace only MAX_DEPTH folders down
    (scarbook.fs.safefs): a deeper seed/ makes every run an error, so it is named once, here."""
    if dirpath.count(os.sep) - os.fspath(seed).count(os.sep) < MAX_DEPTH:
        return  # (the common case, without a relpath)
    rel = os.path.relpath(os.path.join(dirpath, inner), seed).split(os.sep)
    if len(rel) > MAX_DEPTH:
        shown = "/".join(rel) if len(rel) < 8 else "/".join([*rel[:3], "…", *rel[-3:]])
        raise CaseError(seed, f"seed/ holds folders nested more than {MAX_DEPTH} deep ({shown}, {len(rel)} deep); "
                        "no run walks a workspace deeper", fix="flatten the folder")
