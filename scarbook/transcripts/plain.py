"""Plain text (terminal logs): ANSI codes stripped, the whole text is the one candidate artifact.

Aider's chat history (`.aider.chat.history.md`) is plain text with a shape: `#### ` lines are what the
user typed, `> ` lines aider's own output, the rest the model's replies. It is read as that
conversation: the request is the task, the last reply the answer. Each SEARCH/REPLACE block of a reply
(`<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE`, under the line naming its file) is an edit of that file,
failed when aider said so before the next prompt; the history never holds a file as it was when it was added
to the chat (`/add` logs its name only), so a file is rebuilt only from what the log itself wrote into it (a
block with an empty SEARCH creates the file), and otherwise the transcript says why it is not.
"""

from __future__ import annotations

import re

from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, date_of
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
    _aider_edits(t)
    return t


# aider's edit blocks (aider/coders/editblock_coder.py): 5 to 9 markers, the file named on a line just before
_SEARCH, _DIVIDER, _REPLACE = (re.compile(p) for p in (r"^<{5,9} SEARCH>?\s*$", r"^={5,9}\s*$", r"^>{5,9} REPLACE\s*$"))
_FENCE = re.compile(r"^\s*(```|~~~)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$", re.M)
_FAILED = re.compile(r"SEARCH/REPLACE blocks? failed to match|did not conform to the edit format")


def _aider_edits(t: Transcript) -> None:
    """Each SEARCH/REPLACE block of a reply as an edit call, placed before the reply (the answer, which holds them);
    its result is what aider said next (before the next prompt): applied, failed, or — said nothing — none."""
    out: list = []
    pending: list[tuple[ToolCall, str]] = []

    def settle(said: str | None) -> None:
        for call, path in pending:
            if said is None:
                continue
            failed = bool(_FAILED.search(said)) and path not in _APPLIED.findall(said)
            out.append(ToolResult(call.id, "the block failed to match" if failed else "", failed))
        pending.clear()

    said: list[str] = []
    for entry in t.entries:
        if isinstance(entry, Message) and entry.role == "system":
            said.append(entry.text)
            out.append(entry)
            continue
        if isinstance(entry, Message) and entry.role in ("user", "assistant"):
            settle("\n".join(said) if said else None)
            said = []
        if isinstance(entry, Message) and entry.role == "assistant":  # (its edits before it: the reply, which
            for path, old, new in _blocks(entry.text):                # holds them, stays the answer)
                call = ToolCall(f"aider-{len(out)}", "edit", {"path": path, "old_string": old, "new_string": new})
                out.append(call)
                pending.append((call, path))
        out.append(entry)
    settle("\n".join(said) if said else None)
    t.entries = out
    if any(isinstance(e, ToolCall) for e in out):
        t.warnings.append("aider's chat history does not hold the files added to the chat (`/add` logs their names "
                          "only): an edited file is rebuilt only from what the log itself wrote into it")


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """(file, SEARCH text, REPLACE text) of each block of a reply, in order; a block whose file no line names
    takes the file of the block before it, as aider does."""
    lines = text.split("\n")
    found: list[tuple[str, str, str]] = []
    i, path = 0, ""
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        path = _named_file(lines[max(0, i - 3):i]) or path
        j = next((k for k in range(i + 1, len(lines)) if _DIVIDER.match(lines[k])), None)
        k = next((k for k in range(j + 1, len(lines)) if _REPLACE.match(lines[k])), None) if j is not None else None
        if j is None or k is None:
            break  # a block cut off: aider applies none of it
        if path:
            found.append((path, _joined(lines[i + 1:j]), _joined(lines[j + 1:k])))
        i = k + 1
    return found


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _named_file(before: list[str]) -> str:
    """The file a block edits: the nearest line above it that is not a fence, stripped as aider strips it."""
    for line in reversed(before):
        if _FENCE.match(line) or not line.strip():
            continue
        name = line.strip().rstrip(":").strip("`*# ")
        return name if name and " " not in name else ""
    return ""
