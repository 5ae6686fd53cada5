"""Inspect AI `.json` logs read one sample at a time: import holds the file once, not the whole log
parsed (a log with its events is tens of MB for a few hundred samples, and parsed JSON is several
times its text).

The file is decoded as Latin-1, a byte per character whatever it holds, so its text costs its size:
JSON's structure is ASCII, and the bytes of a UTF-8 character are all above 0x7F, so the parser
reads the structure right and each string comes out as its UTF-8 bytes, decoded back afterwards
(`_utf8`). The top-level object is walked key by key, each sample parsed alone and reduced to what
the sample list shows; the one imported is parsed again whole.

Inspect writes `version` first; a JSON document that starts otherwise is left to the usual reading
(`Source.json`) and the same parser.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*\d+\s*,')
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    """The position of the first character at or after `pos` that is not JSON whitespace."""
    m = _WS.match(text, pos)
    return m.end() if m else pos


def starts_like_inspect_json(head: bytes) -> bool:
    """The head of a JSON object whose first key is `version`, as Inspect writes its logs."""
    return _HEAD.match(head) is not None


def _utf8(value: Any) -> Any:
    """Strings read from the Latin-1 text back to what their UTF-8 bytes say (a string that holds a
    character above U+00FF came from a \\u escape, and is kept as it is)."""
    if isinstance(value, str):
        try:
            return value.encode("latin-1").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return value
    if isinstance(value, list):
        return [_utf8(v) for v in value]
    if isinstance(value, dict):
        return {_utf8(k): _utf8(v) for k, v in value.items()}
    return value


@dataclass
class JsonLog:
    header: dict[str, Any] = field(default_factory=dict)  # every top-level key but `samples`
    samples: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (offset, reduced sample)
    cut: str | None = None  # why the samples stop early (the file was cut short or damaged there)
    text: str = ""
    utf8: bool = False  # the file holds bytes above 0x7F: strings need _utf8

    def sample(self, offset: int) -> dict[str, Any]:
        value, _ = _DECODER.raw_decode(self.text, offset)
        return _utf8(value) if self.utf8 else value


class NotInspectJson(ValueError):
    """The document is not an Inspect log after all (or is damaged before its samples)."""


def _reduced(sample: dict[str, Any], preview_of, fix) -> dict[str, Any]:
    """What the sample list needs of a sample: id, epoch, whether it errored, its scores' values, the
    start of its input."""
    scores = sample.get("scores")
    return {"id": fix(sample.get("id")), "epoch": sample.get("epoch"), "error": bool(sample.get("error")),
            "scores": {fix(k): {"value": fix(v.get("value"))} for k, v in scores.items() if isinstance(v, dict)}
            if isinstance(scores, dict) else {},
            "input": preview_of(fix(sample.get("input")))}


def read_json_log(path: Path, preview_of) -> JsonLog:
    """Walk the log's top level; NotInspectJson when it is not an Inspect log or breaks before its samples."""
    data = path.read_bytes()
    log = JsonLog(utf8=not data.isascii())
    text = log.text = data.decode("latin-1")
    del data
    fix = _utf8 if log.utf8 else (lambda v: v)
    pos = _skip(text, 3 if text.startswith("\xef\xbb\xbf") else 0)
    try:
        if text[pos:pos + 1] != "{":
            raise NotInspectJson("not a JSON object")
        pos = _skip(text, pos + 1)
        while text[pos:pos + 1] != "}":
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos:pos + 1] != ":":
                raise NotInspectJson(f"no ':' after the key {key!r} (byte {pos})")
            pos = _skip(text, pos + 1)
            if key == "samples" and text[pos:pos + 1] == "[":
                pos = _samples(log, text, pos, preview_of, fix)
                if log.cut:
                    break
            else:
                value, pos = _DECODER.raw_decode(text, pos)
                log.header[fix(key)] = fix(value)
            pos = _skip(text, pos)
            if text[pos:pos + 1] == ",":
                pos = _skip(text, pos + 1)
            elif text[pos:pos + 1] != "}":
                raise NotInspectJson(f"the log is cut short or damaged at byte {pos}")
    except (json.JSONDecodeError, RecursionError) as exc:
        raise NotInspectJson(f"the log is cut short or damaged at byte {getattr(exc, 'pos', pos)}") from None
    spec = log.header.get("eval")
    if not (isinstance(spec, dict) and "task" in spec and "model" in spec):
        raise NotInspectJson("no `eval` naming a task and a model")
    return log


def _samples(log: JsonLog, text: str, pos: int, preview_of, fix) -> int:
    """Read the `samples` array from its `[` at `pos`; returns the position after its `]`. A sample
    that does not parse ends the list there (`log.cut` says where)."""
    pos = _skip(text, pos + 1)
    while text[pos:pos + 1] != "]":
        start = pos
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            log.cut = f"the file is cut short or damaged in its sample {len(log.samples) + 1} (byte {start})"
            return pos
        if isinstance(value, dict):
            log.samples.append((start, _reduced(value, preview_of, fix)))
        del value
        pos = _skip(text, pos)
        if text[pos:pos + 1] == ",":
            pos = _skip(text, pos + 1)
        elif text[pos:pos + 1] != "]":
            log.cut = f"the file is cut short or damaged after its sample {len(log.samples)} (byte {pos})"
            return pos
    return pos + 1
