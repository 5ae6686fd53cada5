"""Plain text (terminal logs): ANSI codes stripped, the whole text is the one candidate artifact."""

from __future__ import annotations

from scarbook.transcripts.model import NotThisFormat, Transcript, finish_transcript
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import strip_ansi

FORMAT = "plain"


def parse(src: Source, *, allow_json: bool = False) -> Transcript:
    """`allow_json`: the user said --format plain, so a JSON file is kept whole as text too."""
    if not src.data.strip():
        raise NotThisFormat("the file is empty")
    if src.text is None:
        raise NotThisFormat("the file is binary (not UTF-8 text)")
    if not allow_json and (src.is_json or (src.objects() and not src.json_lines.bad)):
        # A JSON file that no JSON format accepted is a mystery, not a log to keep whole.
        raise NotThisFormat("the file is JSON, so it is not taken as plain text")
    text = strip_ansi(src.text).replace("\r\n", "\n")
    return finish_transcript(Transcript(format=FORMAT, final_answer=text, source=src.path))
