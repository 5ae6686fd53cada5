"""Load a transcript file in any supported format, detecting which one it is.

Formats are tried in a fixed order, most specific first; plain text is the fallback for
anything that is text but not JSON. A file nothing accepts gets one error that lists every
format tried and why it did not fit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from scarbook.errors import ScarbookError
from scarbook.transcripts import anthropic_api, claude_code, openai, otel, plain, scarbook_native
from scarbook.transcripts.model import NotThisFormat, Transcript
from scarbook.transcripts.source import Source

Parser = Callable[[Source], Transcript]
PARSERS: dict[str, Parser] = {
    scarbook_native.FORMAT: scarbook_native.parse,
    claude_code.FORMAT: claude_code.parse,
    otel.FORMAT: otel.parse,
    anthropic_api.FORMAT: anthropic_api.parse,
    openai.FORMAT: openai.parse,
    plain.FORMAT: plain.parse,
}
FORMATS: tuple[str, ...] = tuple(PARSERS)  # the names `--format` accepts


def load_transcript(path: Path | str, format: str | None = None) -> Transcript:
    """Parse `path` into a Transcript; `format` (one of FORMATS) skips detection."""
    path = Path(path)
    if format is not None and format not in PARSERS:
        raise ScarbookError(f"unknown transcript format {format!r}; choose one of: {', '.join(FORMATS)}")
    try:
        src = Source.read(path)
    except FileNotFoundError:
        raise ScarbookError(f"{path}: no such transcript file") from None
    except IsADirectoryError:
        raise ScarbookError(f"{path}: is a directory, not a transcript file") from None
    except OSError as exc:
        raise ScarbookError(f"{path}: cannot read it ({exc.strerror})") from None
    if format is not None:
        try:
            if format == plain.FORMAT:
                return plain.parse(src, allow_json=True)
            return PARSERS[format](src)
        except NotThisFormat as exc:
            raise ScarbookError(f"{path} is not a {format} transcript: {exc}") from None
    reasons = []
    for name, parse in PARSERS.items():
        try:
            return parse(src)
        except NotThisFormat as exc:
            reasons.append(f"  {name}: {exc}")
    raise ScarbookError(
        f"{path}: not a transcript scarbook can read. Formats tried:\n" + "\n".join(reasons)
        + "\nIf you know the format, name it with --format."
    )
