"""Load a transcript file in any supported format, detecting which one it is.

Formats are tried in a fixed order, most specific first; plain text is the fallback for
anything that is text but not JSON. A file nothing accepts gets one line saying why (empty,
binary, JSON cut off, JSON of no known shape) and the formats tried.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.text import plural, with_article
from scarbook.transcripts import anthropic_api, claude_code, codex, inspect_log, openai, otel, plain, scarbook_native
from scarbook.transcripts.files import is_absolute, normalise_path, set_root
from scarbook.transcripts.model import NothingToImport, NotThisFormat, Transcript
from scarbook.transcripts.source import NotARegularFile, Source

Parser = Callable[[Source], Transcript]
PARSERS: dict[str, Parser] = {
    # first: a .eval zip, or a JSON log read a sample at a time, known by its head (the other formats
    # would parse a JSON document whole)
    inspect_log.FORMAT: inspect_log.parse,
    scarbook_native.FORMAT: scarbook_native.parse,
    claude_code.FORMAT: claude_code.parse,
    codex.FORMAT: codex.parse,
    otel.FORMAT: otel.parse,
    anthropic_api.FORMAT: anthropic_api.parse,
    openai.FORMAT: openai.parse,
    plain.FORMAT: plain.parse,
}
FORMATS: tuple[str, ...] = tuple(PARSERS)  # the names `--format` accepts


def load_transcript(path: Path | str, format: str | None = None, *, trace: str | None = None,
                    sample: str | None = None, root: str | None = None) -> Transcript:
    """Parse `path` into a Transcript; `format` (one of FORMATS) skips detection. `trace` picks one
    trace of an OTel file holding several (or one sample of an Inspect log: what `t.traces` lists);
    `sample` one sample of an Inspect log (`ID` or `ID:EPOCH`); `root` is the folder paths are made
    relative to (default: the agent's cwd, else the common root of the files the transcript touched)."""
    path = Path(path)
    if format is not None and format not in PARSERS:
        raise ScarbookError(f"unknown transcript format {format!r}; choose one of: {', '.join(FORMATS)}")
    src = _open(path)
    src.trace = trace if trace is not None else sample
    t = _parse(src, path, format)
    if trace is not None and t.format not in (otel.FORMAT, inspect_log.FORMAT):
        raise ScarbookError(f"{path}: --trace picks one trace of an OTel file; this is {with_article(t.format)} transcript")
    if sample is not None and t.format != inspect_log.FORMAT:
        raise ScarbookError(f"{path}: --sample picks one sample of an Inspect log; this is {with_article(t.format)} transcript")
    if root is not None:
        if not is_absolute(normalise_path(root)):
            raise ScarbookError(f"--root {root!r} is not an absolute path; name the folder as the transcript "
                                "writes it (e.g. /repo or C:\\Users\\me\\repo)")
        set_root(t, root)
    t.warnings[:0] = src.bad_bytes_warning()
    return t


def _open(path: Path) -> Source:
    try:
        return Source.read(path)
    except FileNotFoundError:
        raise ScarbookError(f"{path}: no such transcript file") from None
    except IsADirectoryError:
        raise ScarbookError(f"{path}: is a directory, not a transcript file") from None
    except NotARegularFile:
        raise ScarbookError(f"{path}: not a regular file (a FIFO, socket or device); "
                            "save the transcript to a file first") from None
    except OSError as exc:
        raise ScarbookError(f"{path}: cannot read it ({exc.strerror})") from None


def _describe_array(items: list) -> str:
    """Why a JSON array is not a transcript, naming what it holds."""
    if not items:
        return "an empty JSON array"
    first, n = items[0], len(items)
    if isinstance(first, dict):
        if first.get("type") in ("user", "assistant", "system", "summary") and ("uuid" in first or "sessionId" in first):
            return (f"a JSON array of {plural(n, 'Claude Code record')}; scarbook reads them as the session log "
                    "writes them, one per line (JSON lines)")
        what = f"{plural(n, 'object')} (the first has keys: {', '.join(list(first)[:6]) or 'none'})"
    elif isinstance(first, list):
        what = plural(n, "array")
    else:
        what = plural(n, f"{type(first).__name__} value")
    return f"a JSON array of {what}, not messages (role and content), Responses items (type) or stream events"


def _parse(src: Source, path: Path, format: str | None) -> Transcript:
    if format is not None:
        try:
            if format == plain.FORMAT:
                return plain.parse(src, allow_json=True)
            return PARSERS[format](src)
        except NotThisFormat as exc:
            raise ScarbookError(f"{path} is not {with_article(format)} transcript: {exc}") from None
    plain_reason = ""
    for parse in PARSERS.values():
        try:
            return parse(src)
        except NothingToImport as exc:
            raise ScarbookError(f"{path}: nothing to import: {exc}") from None
        except NotThisFormat as exc:
            plain_reason = str(exc)  # plain text comes last: its reason is the one that says most
    if src.is_json and isinstance(src.json, list):
        plain_reason = _describe_array(src.json)
    elif src.is_json or plain_reason.startswith("the file is JSON"):
        plain_reason = "JSON, but in none of the shapes scarbook reads"
    raise ScarbookError(f"{path}: not a transcript scarbook can read: {plain_reason} "
                        f"(tried {', '.join(FORMATS)}; name one with --format to see why it does not fit)")
