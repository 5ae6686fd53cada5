"""A run's transcript file, read safely: it sits beside the workspace, where the agent could replace it.

The file is read through safefs (capped: no link followed, a regular file only), then parsed from a
private copy, so a link to a secret or a pipe there is refused, never followed or opened. The review
shows what it gets; the trajectory checks (scarbook.checks.trajectory) check it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Literal

from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.text import clean_text
from scarbook.transcripts.detect import load_transcript
from scarbook.transcripts.model import Transcript


class TranscriptUnreadable(Exception):
    """Why a run's transcript cannot be had: `kind` says which way it failed, the message says why
    in one line (with no "transcript not shown" prefix: each caller words its own)."""

    def __init__(self, kind: Literal["refused", "unreadable", "too-big", "empty", "unparsed"], why: str,
                 size: int = 0) -> None:
        super().__init__(why)
        self.kind = kind
        self.size = size


def read_run_transcript(path: str | os.PathLike[str], cap: int) -> Transcript:
    """The transcript at `path` (any format load_transcript knows), or TranscriptUnreadable."""
    folder, name = os.path.split(os.fspath(path))
    try:
        data, size = safefs.read_file(folder, name, cap + 1)
    except safefs.Refused as exc:
        raise TranscriptUnreadable("refused", str(exc)) from None
    except OSError as exc:
        raise TranscriptUnreadable("unreadable", f"cannot read it ({exc.strerror or exc})") from None
    if max(size, len(data)) > cap:
        size = max(size, len(data))
        raise TranscriptUnreadable("too-big", f"{size:,} bytes, more than the {cap:,} read", size)
    if not data.strip():
        raise TranscriptUnreadable("empty", f"{name} is empty")
    with tempfile.TemporaryDirectory(prefix="scarbook-transcript-") as tmp:
        copy = Path(tmp) / "transcript.jsonl"
        copy.write_bytes(data)
        try:
            return load_transcript(copy)
        except ScarbookError as exc:
            raise TranscriptUnreadable("unparsed", clean_text(str(exc).replace(str(copy), name),
                                                               one_line=True)) from None
        except Exception as exc:  # noqa: BLE001 — a parser meeting hostile input must not take the caller down
            raise TranscriptUnreadable("unparsed", clean_text(f"{name} could not be parsed "
                                                              f"({type(exc).__name__}: {exc})", one_line=True)) from None
