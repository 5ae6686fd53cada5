"""Load a transcript file in any supported format, detecting which one it is.

Detection looks at a bounded prefix of the file only (`Source.shape`: the kind of file, its keys,
its first records' types): each format claims the shapes it reads (`scarbook.transcripts.formats`),
and only the formats that claim the file parse it, in a fixed order, most specific first. The names
are one set everywhere: what `--list` prints as the format is what `--format` takes. A file nothing
reads gets one line naming what was seen, the closest format and what to do.
"""

from __future__ import annotations

import os
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.text import with_article
from scarbook.transcripts import formats, openhands_eval, otel, web_export
from scarbook.transcripts.files import is_absolute, normalise_path, set_root
from scarbook.transcripts.model import NothingToImport, NotThisFormat, Transcript, paused_gc
from scarbook.transcripts.shape import MAX_DEPTH
from scarbook.transcripts.source import NotARegularFile, Source

FORMATS: tuple[str, ...] = formats.NAMES  # the names `--format` accepts and `--list` prints
_PICKS_ONE = {otel.FORMAT: "trace", "inspect": "sample", web_export.CHATGPT: "conversation",
              web_export.CLAUDE_AI: "conversation", openhands_eval.FORMAT: "instance"}


def picked_word(format: str) -> str:
    """What one of a file's several `traces` is, in the file's words: an OTel trace, an Inspect sample, an
    export's conversation, an OpenHands evaluation's instance."""
    return _PICKS_ONE.get(format, "trace")


def load_transcript(path: Path | str, format: str | None = None, *, trace: str | None = None,
                    sample: str | None = None, root: str | None = None) -> Transcript:
    """Parse `path` into a Transcript; `format` (one of FORMATS) skips detection. `trace` picks one
    trace of an OTel file holding several (or one sample of an Inspect log: what `t.traces` lists);
    `sample` one sample of an Inspect log (`ID` or `ID:EPOCH`); `root` is the folder paths are made
    relative to (default: the agent's cwd, else the common root of the files the transcript touched)."""
    path = Path(path)
    if format is not None and format not in formats.READERS:
        raise ScarbookError(f"unknown transcript format {format!r}; choose one of: {', '.join(FORMATS)}")
    src = _open(path)
    src.trace = trace if trace is not None else sample
    try:
        with paused_gc():
            t = _parse(src, path, format)
    except RecursionError:
        raise ScarbookError(f"{path}: not a transcript scarbook can read: it is nested deeper than {MAX_DEPTH} "
                            "levels; no agent log nests so deep — check that this is the file you meant") from None
    if trace is not None and t.format not in _PICKS_ONE:
        raise ScarbookError(f"{path}: --trace picks one trace of an OTel file, one conversation of a chat export or "
                            "one instance of an OpenHands evaluation's output.jsonl; "
                            f"this is {with_article(t.format)} transcript")
    if sample is not None and t.format != "inspect":
        raise ScarbookError(f"{path}: --sample picks one sample of an Inspect log; this is {with_article(t.format)} transcript")
    if root is not None:
        if not is_absolute(normalise_path(root)):
            raise ScarbookError(f"--root {root!r} is not an absolute path; name the folder as the transcript "
                                "writes it (e.g. /repo or C:\\Users\\me\\repo)")
        with paused_gc():
            set_root(t, root)
    t.warnings[:0] = src.bad_bytes_warning()
    return t


def _open(path: Path) -> Source:
    try:
        return Source.read(path)
    except FileNotFoundError:
        raise ScarbookError(f"{path}: no such transcript file") from None
    except IsADirectoryError:
        raise ScarbookError(_a_folder(path)) from None
    except NotARegularFile:
        raise ScarbookError(f"{path}: not a regular file (a FIFO, socket or device); "
                            "save the transcript to a file first") from None
    except OSError as exc:
        raise ScarbookError(f"{path}: cannot read it ({exc.strerror})") from None



def _a_folder(path: Path, shown: int = 3) -> str:
    """A folder given for a transcript (a Claude Code project folder holds a log per session): its newest files."""
    try:
        with os.scandir(path) as entries:
            files = sorted(((e.stat().st_mtime, e.name) for e in entries if e.is_file()), reverse=True)
    except OSError:
        files = []
    if not files:
        return f"{path}: a folder, not a transcript file, and no file is in it; name the transcript file itself"
    names = ", ".join(name for _, name in files[:shown])
    count = f"{shown} of {len(files)}, " if len(files) > shown else ""
    return f"{path}: a folder, not a transcript file; name one of the files in it: {names} ({count}newest first)"


def _parse(src: Source, path: Path, format: str | None) -> Transcript:
    if format is not None:
        try:
            t = formats.READERS[format].read(src, True)
        except NotThisFormat as exc:
            raise ScarbookError(formats.forced_refusal(path, src, format, str(exc))) from None
        if t.format != format:
            raise ScarbookError(f"{path} is not {with_article(format)} transcript: it is {with_article(t.format)} "
                                f"one; import it with --format {t.format} (or without --format)")
        return t
    shape = src.shape
    if shape.depth > MAX_DEPTH:
        raise ScarbookError(f"{path}: not a transcript scarbook can read: {shape.describe()}, nested deeper than "
                            f"{MAX_DEPTH} levels; no agent log nests so deep — check that this is the file you meant")
    tried: list[tuple[str, str]] = []
    for reader in formats.claiming(src):
        try:
            return reader.read(src, False)
        except NothingToImport as exc:
            raise ScarbookError(f"{path}: nothing to import: {exc}") from None
        except NotThisFormat as exc:
            tried.append((reader.name, str(exc)))
    raise ScarbookError(formats.refusal(path, src, tried))
