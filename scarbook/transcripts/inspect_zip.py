"""Inspect AI `.eval` logs: zip archives (header.json, summaries.json, samples/<id>_epoch_<n>.json,
and _journal/ while the eval runs), read with the standard library's zipfile.

Inspect compresses the members with zstd (zip method 93) since 2025; older logs use deflate. Python
reads zstd from 3.14 (`compression.zstd`); before that the `zstandard` package does (`pip install
'scarbook[inspect]'`). A member is checked against its CRC either way, so a damaged log is named as
such and never read as a shorter one.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.transcripts.expand import TooExpanded, check_declared, read_expanded

ZSTD = 93  # the zip compression method number of zstd
SAMPLE_NAME = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")
_INSPECT_NAMES = ("_journal/", "header.json", "summaries.json", "reductions.json", "samples/")


def looks_like_eval_zip(head: bytes, path: Path) -> bool:
    """A zip archive that is an Inspect log by its suffix or by the name of its first member."""
    if not head.startswith(b"PK\x03\x04"):
        return False
    if path.suffix == ".eval":
        return True
    if len(head) < 30:
        return False
    n = struct.unpack("<H", head[26:28])[0]
    return head[30:30 + n].decode("utf-8", "replace").startswith(_INSPECT_NAMES)


def _zstd_decompress(raw: bytes, name: str) -> bytes:
    """Every zstd frame of `raw`, decompressed (at most its allowance: expand.py); ValueError when they are damaged."""
    try:
        from compression import zstd  # type: ignore[import-not-found, unused-ignore]  # Python 3.14+
    except ImportError:
        zstd = None
    if zstd is not None:
        try:
            with zstd.ZstdFile(io.BytesIO(raw)) as reader:
                return read_expanded(reader, name, len(raw))
        except zstd.ZstdError as exc:
            raise ValueError(str(exc)) from None
    try:
        import zstandard  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        raise ZstdMissing() from None
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
        return read_expanded(reader, name, len(raw))
    except zstandard.ZstdError as exc:
        raise ValueError(str(exc)) from None


class ZstdMissing(Exception):
    """The log's members are zstd-compressed and nothing here can decompress zstd."""


class EvalZip:
    """An open `.eval` archive; `member(name)` reads one member's JSON."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise self.damaged(f"not a whole zip archive ({exc})") from None
        self.names = self.zip.namelist()

    def damaged(self, why: str) -> ScarbookError:
        return ScarbookError(f"{self.path}: this Inspect .eval log is damaged or cut short: {why}; copy it again "
                             "from where the eval wrote it")

    def read(self, name: str) -> bytes:
        info = self.zip.getinfo(name)
        try:
            check_declared(name, info.compress_size, info.file_size)
            if info.compress_type != ZSTD:
                with self.zip.open(info) as member:
                    return read_expanded(member, name, info.compress_size)
            fh = self.zip.fp
            assert fh is not None
            fh.seek(info.header_offset)
            header = fh.read(30)
            if len(header) < 30 or header[:4] != b"PK\x03\x04":
                raise zipfile.BadZipFile(f"no local header for {name}")
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            fh.seek(info.header_offset + 30 + name_len + extra_len)
            data = _zstd_decompress(fh.read(info.compress_size), name)
        except TooExpanded as exc:
            raise ScarbookError(f"{self.path}: this Inspect .eval log is refused: {exc}; import a log you trust, "
                                "or convert it (inspect log convert --to json) and check what it holds") from None
        except ZstdMissing:
            raise ScarbookError(f"{self.path}: this Inspect .eval log is compressed with zstd, which this Python "
                                "cannot read: pip install zstandard (or 'scarbook[inspect]'), or convert the log: "
                                "inspect log convert --to json --output-dir DIR LOG") from None
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
            raise self.damaged(f"{name} cannot be read ({exc})") from None
        if zlib.crc32(data) != info.CRC or len(data) != info.file_size:
            raise self.damaged(f"{name} does not match its checksum")
        return data

    def member(self, name: str) -> Any:
        """The JSON of member `name`, or None when the archive has no such member."""
        if name not in self.names:
            return None
        try:
            return json.loads(self.read(name))
        except ValueError as exc:
            raise self.damaged(f"{name} is not JSON ({exc})") from None

    def sample_names(self) -> dict[tuple[str, int], str]:
        """(sample id, epoch) -> member name of every sample in the archive."""
        out = {}
        for name in self.names:
            m = SAMPLE_NAME.match(name)
            if m:
                out[(m["id"], int(m["epoch"]))] = name
        return out

    def summaries(self) -> list[dict[str, Any]]:
        """The samples' summaries: summaries.json when the eval finished, else the journal's pieces."""
        whole = self.member("summaries.json")
        if isinstance(whole, list):
            return [s for s in whole if isinstance(s, dict)]
        parts = sorted((n for n in self.names if re.match(r"^_journal/summaries/\d+\.json$", n)),
                       key=lambda n: int(n.rsplit("/", 1)[1].split(".")[0]))
        out: list[dict[str, Any]] = []
        for name in parts:
            piece = self.member(name)
            out += [s for s in piece if isinstance(s, dict)] if isinstance(piece, list) else []
        return out

    def header(self) -> dict[str, Any]:
        """header.json (written when the eval ends), else the journal's start.json."""
        for name in ("header.json", "_journal/start.json"):
            value = self.member(name)
            if isinstance(value, dict):
                return value
        raise self.damaged("it has neither header.json nor _journal/start.json")

    def close(self) -> None:
        self.zip.close()
