"""Plain text (terminal logs): ANSI codes stripped, the whole text is the one candidate artifact.

Aider's chat history (`.aider.chat.history.md`) is plain text with a shape: `#### ` lines are what the
user typed, `> ` lines aider's own output, the rest the model's replies. It is read as that
conversation: the request is the task, the last reply the answer.
"""

from __future__ import annotations

import re

from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import Message, NotThisFormat, Transcript, date_of
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import strip_ansi

FORMAT = "plain"
# An object or array that opens with a key, a string, an array or an object: JSON, not a log line
# such as "[INFO] started" or "[2026-11-14 09:00] ...".
_LOOKS_JSON = re.compile(r'\s*(\{\s*"|\[\s*[\[{"])')


def parse(src: Source, *, allow_json: bool = False) -> Transcript:
    """`allow_json`: the user said --format plain, so a JSON file is kept whole as text too."""
    if src.is_blank:
        raise NotThisFormat("the file is empty")
    if src.text is None:
        raise NotThisFormat("the file is not UTF-8 text")
    looks_json = src.shape.kind not in ("text", "yaml")  # its head reads as JSON (text is never parsed for it)
    if not allow_json and looks_json and (src.is_json or (src.objects() and not src.json_lines.bad)):
        # A JSON file that no JSON format accepted is a mystery, not a log to keep whole.
        raise NotThisFormat("the file is JSON, so it is not taken as plain text")
    if not allow_json and looks_json and _LOOKS_JSON.match(src.text):
        why = src.json_error or ""
        why = why[len("not JSON ("):-1] if why.startswith("not JSON (") else why
        raise NotThisFormat(f"the file looks like JSON but is cut off or broken: {why}")
    text = src.text
    if "\x1b" in text:  # a copy of a big log only when there is something to take out
        text = strip_ansi(text)
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if _AIDER.search(text):
        t = _aider_chat(text, Transcript(format=FORMAT, source=src.path))
    else:
        t = Transcript(format=FORMAT, final_answer=text, source=src.path)
    t.date = _last_day(text)
    return finish_transcript(t)


# A line that opens with its time: a CI runner's (GitHub Actions: `2026-11-20T14:03:07.1370000Z `), a logger's
# (`2026-11-20 14:03:07,123`, `[2026-11-20 14:03:07]`), aider's `# aider chat started at 2026-11-20 14:03:07`.
_STAMPED = re.compile(r"^(?:\[|# aider chat started at )?(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}", re.M)


def _last_day(text: str) -> str | None:
    """The day of the log's last stamped line: the incident's day (scar.date), as other formats take it."""
    last = None
    for m in _STAMPED.finditer(text):
        last = m
    return date_of(last.group(1)) if last else None


_AIDER = re.compile(r"\A\s*# aider chat started at |^#### \S", re.M)


def _aider_chat(text: str, t: Transcript) -> Transcript:
    """Aider's chat history: `#### ` user lines, `> ` aider's output, the model's replies between."""
    role, lines = "", list[str]()

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            t.entries.append(Message(role, body))
        lines.clear()

    for line in text.split("\n"):
        if line.startswith("#### "):
            kind, line = "user", line[5:].rstrip()
        elif line.startswith(("> ", "# aider chat started")) or line == ">":
            kind, line = "system", line[1:].strip()
        elif not line.strip():
            if role == "user":
                flush()  # each prompt is its own `#### ` block: a blank line ends it
            lines.append("")
            continue
        else:
            kind, line = "assistant", line.rstrip()
        if kind != role:
            flush()
            role = kind
        lines.append(line)
    flush()
    return t
