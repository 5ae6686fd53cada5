"""What a transcript file looks like, from a bounded prefix: the shape detection decides on.

Detection reads at most `HEAD_BYTES` of the file (`Source.head`) whatever its size: the kind of
file (JSON lines, one JSON object or array, SSE, YAML, text, binary), the keys of the object (or of
the first record or item) and the `type`s of the first records. Each format says from that alone
whether it may read the file (`claims`), so only its parser reads the whole file, and a refusal
names what was seen. A JSON document bigger than the head is scanned for its keys without being
parsed (strings skipped, nesting counted), so nesting deeper than a limit is found here too.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

MAX_DEPTH = 200  # nesting deeper than this is refused before any parser recurses into it
HEAD_RECORDS = 20  # JSON lines looked at to decide

Kind = Literal["empty", "binary", "json-lines", "json-object", "json-array", "sse", "yaml", "text"]
# A string, a punctuation mark or a bare word. A string the text's end cuts (`cut`) is no token: the words
# after its quote are read as bare ones, as before, but without trying a string at each later quote (each
# is cut too, and each try ran to the end: a head of 60 kB of `\"` took 12 s).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|(?P<cut>\\?\Z))|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.S)
_BARE = re.compile(r'[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _tokens(text: str) -> Iterator[re.Match[str]]:
    for m in _TOKEN.finditer(text):
        if m.group("cut") is not None:
            yield from _BARE.finditer(text, m.start() + 1)
            return
        yield m


@dataclass
class Shape:
    kind: Kind
    keys: list[str] = field(default_factory=list)  # the object's keys, or the first record's / item's
    values: dict[str, Any] = field(default_factory=dict)  # those keys' scalar values (type, version, object...)
    types: list[str] = field(default_factory=list)  # the `type`s of the first records / items, in order, once each
    records: list[Any] = field(default_factory=list)  # the first JSON lines parsed (up to HEAD_RECORDS)
    depth: int = 0  # the deepest nesting seen in the prefix
    whole: bool = False  # the prefix is the whole file
    items: str = ""  # a small array of no objects: what it holds ("2 int values")
    packed: str = ""  # a binary file that is a log in another wrapping: UTF-16 text, gzip (see packing)

    def describe(self) -> str:
        """What was seen, in a few words: "a JSON object with keys a, b, c"."""
        keys = ", ".join(self.keys[:8]) + (", …" if len(self.keys) > 8 else "") if self.keys else "none"
        first = f"type {self.types[0]!r}, " if self.types else ""
        if self.kind == "json-object":
            kind = f" (type {self.values['type']!r})" if isinstance(self.values.get("type"), str) else ""
            return f"a JSON object{kind} with keys {keys}"
        if self.kind == "json-array":
            return f"a JSON array whose first item has {first}keys {keys}" if self.keys else \
                "an empty JSON array" if self.items == "nothing" else \
                f"a JSON array of {self.items}" if self.items else "a JSON array"
        if self.kind == "json-lines":
            return f"JSON lines whose first record has {first}keys {keys}"
        if self.kind == "binary" and self.packed:
            return "a gzip-compressed file" if self.packed == "gzip" else "UTF-16 text (not UTF-8)"
        return {"empty": "an empty file", "binary": "a binary file (not UTF-8 text)", "sse": "a server-sent event stream",
                "yaml": f"a YAML document with keys {keys}", "text": "plain text"}[self.kind]



def packing(head: bytes) -> str:
    """What a binary file's first bytes say it is, when it is a log in another wrapping: "UTF-16" text with its
    byte-order mark (as Windows PowerShell's `>` and Out-File write a log), "UTF-16LE" / "UTF-16BE" without one (a
    NUL beside each character of ASCII text), "gzip"; else ""."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) and not head.startswith(b"\xff\xfe\x00\x00"):  # (not UTF-32)
        return "UTF-16"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    pairs = head[:512]
    if len(pairs) >= 8 and len(pairs) % 2 == 0:
        for name, nul, text in (("UTF-16LE", pairs[1::2], pairs[0::2]), ("UTF-16BE", pairs[0::2], pairs[1::2])):
            if not nul.strip(b"\x00") and 0 not in text:
                return name
    return ""

def utf8_command(path: Path, packed: str) -> str:
    """The command that writes UTF-16 text (`packed`: packing's name for it) as UTF-8 beside it."""
    name = shlex.quote(str(path))
    utf8 = shlex.quote(str(path.with_name(f"{path.stem}-utf8{path.suffix}")))
    shell = (f" (in PowerShell, `Get-Content {name} | Set-Content -Encoding utf8 {utf8}`)"
             if packed == "UTF-16" else "")  # (it reads a file without a byte-order mark as the machine's code page)
    return f"`iconv -f {packed} -t UTF-8 {name} > {utf8}`{shell}"


def scan_keys(text: str, limit: int = MAX_DEPTH) -> tuple[list[str], dict[str, Any], list[str], int]:
    """(keys of the top object or of the first array item, their scalar values, the `type`s of the
    array's first items, the deepest nesting) of a JSON text that may be cut anywhere — without
    parsing it. Stops once nesting passes `limit` (the depth returned is then above it)."""
    stack: list[str] = []
    keys: list[str] = []
    values: dict[str, Any] = {}
    types: list[str] = []
    depth, item = 0, 0
    array = text.lstrip().startswith("[")
    key_depth = 2 if array else 1
    pending: str | None = None
    prev = ""
    for m in _tokens(text):
        tok = m.group()
        if tok in ("{", "["):
            stack.append(tok)
            depth = max(depth, len(stack))
            if depth > limit:
                break
            pending = None
        elif tok in ("}", "]"):
            if stack:
                stack.pop()
            pending = None
        elif tok == ":":
            if prev.startswith('"') and stack and stack[-1] == "{":
                pending = _string(prev)
                if len(stack) == key_depth and item == 0 and pending not in keys:
                    keys.append(pending)
        elif tok == ",":
            if array and len(stack) == 1:
                item += 1
                if item >= 8 and keys:
                    break
            pending = None
        elif pending is not None:
            if len(stack) == key_depth:
                value = _scalar(tok)
                if item == 0 and pending in keys and pending not in values and not isinstance(value, (dict, list)):
                    values[pending] = value
                if array and pending == "type" and isinstance(value, str) and value not in types:
                    types.append(value)
            pending = None
        prev = tok
    if not array and isinstance(values.get("type"), str):
        types = [values["type"]]
    return keys, values, types, depth


def _string(tok: str) -> str:
    try:
        value = json.loads(tok)
    except ValueError:
        return tok.strip('"')
    return value if isinstance(value, str) else tok


def _scalar(tok: str) -> Any:
    try:
        return json.loads(tok)
    except ValueError:
        return tok


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting of a parsed value, counted without recursion; stops once past `limit`."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            todo.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return deepest


_YAML_KEY = re.compile(r"^([A-Za-z_][\w.-]*):(?:\s|$)", re.M)


def shape_of(head: str, *, whole_value: Any = None, whole: bool, lines: list[Any] | None,
             sse: bool = False) -> Shape:
    """The shape of a text file from its head (`head`, already decoded): `lines` are its first JSON
    lines parsed when it is JSON lines (None otherwise); `whole_value` the parsed document when the
    head is the whole file and it is one JSON document."""
    text = head.lstrip()
    if sse:
        return Shape("sse", whole=whole)
    if lines is not None:
        first = next((r for r in lines if isinstance(r, dict)), None)
        types = list(dict.fromkeys(str(r["type"]) for r in lines if isinstance(r, dict) and isinstance(r.get("type"), str)))
        return Shape("json-lines", keys=list(first) if first else [], values=_scalars(first), types=types,
                     records=lines, depth=max((depth_of(r) for r in lines), default=0), whole=whole)
    if text.startswith(("{", "[")) and lines is None and whole_value is None and _bracketed_text(text):
        return Shape("text", whole=whole)
    if text.startswith(("{", "[")):
        if whole and whole_value is not None:
            value = whole_value
            first = value if isinstance(value, dict) else next((v for v in value if isinstance(v, dict)), None) \
                if isinstance(value, list) else None
            types = ([value["type"]] if isinstance(value, dict) and isinstance(value.get("type"), str) else
                     list(dict.fromkeys(str(v["type"]) for v in value[:8] if isinstance(v, dict) and
                                        isinstance(v.get("type"), str))) if isinstance(value, list) else [])
            kind: Kind = "json-object" if isinstance(value, dict) else "json-array"
            items = ""
            if isinstance(value, list) and first is None:
                names = sorted({type(v).__name__ for v in value})
                items = f"{len(value)} {'/'.join(names)} value{'s' if len(value) != 1 else ''}" if value else "nothing"
            return Shape(kind, keys=list(first) if first else [], values=_scalars(first), types=types,
                         depth=depth_of(value), whole=True, items=items)
        keys, values, types, depth = scan_keys(text)
        return Shape("json-object" if text.startswith("{") else "json-array", keys=keys, values=values, types=types,
                     depth=depth, whole=whole)
    if text.startswith("---") or _YAML_KEY.match(text):
        return Shape("yaml", keys=list(dict.fromkeys(_YAML_KEY.findall(text))), whole=whole)
    return Shape("text", whole=whole)


def _bracketed_text(text: str) -> bool:
    """A text log whose first line opens with a bracket ("[INFO] started", "[2026-11-14 09:00] build",
    "{build} ok"), not JSON: its first line fails to parse at its first word, before any string, key or
    nesting (a JSON file cut short, or a JSON line broken further in, fails later)."""
    first = text.partition("\n")[0].rstrip()
    try:
        json.loads(first)
    except json.JSONDecodeError as exc:
        seen = first[1:exc.pos]
        return 0 < exc.pos < len(first) and not any(c in seen for c in '"{}[]:')
    except (ValueError, RecursionError):
        return False
    return False


def _scalars(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        return {}
    return {k: v for k, v in record.items() if isinstance(v, (str, int, float, bool)) or v is None}
