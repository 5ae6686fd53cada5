"""Small text helpers shared by the parsers: placeholders for blobs, ANSI stripping, previews."""

from __future__ import annotations

import re

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks), and lone escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


PLACEHOLDER = re.compile(r"^\[(image|document|audio|file|blob|binary): [^\]\n]*\]$")


def human_size(nbytes: int) -> str:
    if nbytes < 1000:
        return f"{nbytes} B"
    if nbytes < 1_000_000:
        return f"{round(nbytes / 1000)} kB"
    return f"{nbytes / 1_000_000:.1f} MB"


def base64_size(data: str) -> int:
    """Decoded size of a base64 string, without decoding it."""
    data = data.strip()
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def blob_placeholder(kind: str, media_type: str | None, nbytes: int | None) -> str:
    """Stand-in text for an image or binary blob, e.g. "[image: image/png, 12 kB]"."""
    parts = [media_type or "unknown type"]
    if nbytes is not None:
        parts.append(human_size(nbytes))
    return f"[{kind}: {', '.join(parts)}]"


def data_url_placeholder(kind: str, url: str) -> str:
    """Placeholder for a `data:<type>;base64,...` URL, or the URL itself when it is remote."""
    m = re.match(r"data:([^;,]*)(;base64)?,", url)
    if not m:
        return f"[{kind}: {url}]"
    payload = url[m.end():]
    size = base64_size(payload) if m.group(2) else len(payload)
    return blob_placeholder(kind, m.group(1) or None, size)


def preview(text: str, n: int = 80) -> str:
    """One line of at most `n` characters; the whole text is never cut anywhere else."""
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: max(n - 1, 0)] + "…"


# A slash command the user typed in an agent's shell (`/exit`, `/clear`, `/compact keep the plan`):
# one line, a word after the slash (so "/usr/bin/x fails" is not one).
_SLASH = re.compile(r"/[A-Za-z][\w:-]*(?:[ \t][^\n]*)?")
_COMMAND_TAGS = ("<command-", "<local-command-")


def is_command(text: str) -> bool:
    """A slash command or its local output, as Claude Code records them (`<command-name>/exit
    </command-name>`, `<local-command-stdout>...`) or as typed (`/exit`): not a task."""
    s = text.strip()
    return s.startswith(_COMMAND_TAGS) or bool(_SLASH.fullmatch(s))


_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)


def command_label(text: str) -> str:
    """A short name for a command message: "/exit", "output of a local command"."""
    m = _COMMAND_NAME.search(text)
    if m:
        return m.group(1)
    if text.strip().startswith("<local-command-"):
        return "output of a local command"
    return preview(text, 60)


_VARIES = re.compile(r"\S*\d\S*|/\S+|\\\S+")  # what differs between warnings of one kind: numbers, ids, paths


def group_warnings(warnings: list[str]) -> list[str]:
    """Warnings of one kind (the same words, other numbers, ids or paths) as one line: the first,
    and how many more there were. A 52 MB log can have a thousand calls without a result."""
    groups: dict[str, list[str]] = {}
    for w in warnings:
        groups.setdefault(_VARIES.sub("#", w), []).append(w)
    return [ws[0] if len(ws) == 1 else f"{ws[0]} (and {len(ws) - 1:,} more like this)" for ws in groups.values()]
