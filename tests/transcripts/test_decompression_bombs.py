"""Issue 33.16: a decompression bomb in an Inspect `.eval` log is refused with a message, never expanded.

Each bomb is a zip whose summaries.json (the first member a reader reads) is valid JSON (`[`, spaces,
`]`) that expands hundreds of times its size: deflate (what zipfile writes) and zstd (method 93, what Inspect writes). `scarbook import`
runs as a real process, so its peak memory is measured (RUSAGE_CHILDREN): before, the deflate bomb
held all of it (and the zstd one reached 2.1 GB at issue size)."""

from __future__ import annotations

import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from scarbook.transcripts.expand import MAX_EXPANDED, RATIO

SIZE = 300 << 20  # spaces of the bomb's JSON: more than MAX_EXPANDED
MEMBER = "summaries.json"


def _spaces(size: int):
    yield b"["
    chunk = b" " * (1 << 20)
    for _ in range(size >> 20):
        yield chunk
    yield b"]"


def deflate_bomb(path: Path, size: int = SIZE) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open(MEMBER, "w", force_zip64=True) as out:
        for part in _spaces(size):
            out.write(part)
    return path


def zstd_bomb(path: Path, size: int = SIZE, declared: int | None = None) -> Path:
    """A one-member zip of method 93 (zstd), written by hand: zipfile cannot write zstd before 3.14.
    `declared`: the uncompressed size its headers claim (a liar says little)."""
    zstandard = pytest.importorskip("zstandard")
    comp = zstandard.ZstdCompressor(level=3).compressobj()
    crc, parts = 0, []
    for part in _spaces(size):
        crc = zlib.crc32(part, crc)
        parts.append(comp.compress(part))
    parts.append(comp.flush())
    data = b"".join(parts)
    name = MEMBER.encode()
    real = min(size + 2, 0xFFFFFFFF) if declared is None else declared
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(data), real, len(name), 0) + name
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(data), real,
                          len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path


# Runs scarbook as its child and writes the child's peak RSS (KiB) to argv[1]: measured from a small
# process, since a child forked from pytest starts with pytest's own pages counted in its peak.
PEAK = """import resource, subprocess, sys
done = subprocess.run(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(done.returncode)
"""


def _import(path: Path, cwd: Path) -> tuple[subprocess.CompletedProcess, int]:
    """`scarbook import PATH --list` as a real process: what it said, and its peak RSS in bytes."""
    peak = cwd / "peak.txt"
    done = subprocess.run([sys.executable, "-c", PEAK, str(peak), str(Path(sys.executable).parent / "scarbook"),
                           "-C", str(cwd), "import", str(path), "--list"], capture_output=True, text=True, timeout=300)
    return done, int(peak.read_text()) * 1024


@pytest.mark.parametrize("make", [deflate_bomb, zstd_bomb], ids=["deflate", "zstd"])
def test_a_bomb_eval_log_is_refused_with_a_message_and_bounded_memory(tmp_path, make) -> None:
    bomb = make(tmp_path / "bomb.eval")
    done, peak = _import(bomb, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"scarbook: {bomb}: this Inspect .eval log is refused: summaries.json expands "), done.stderr
    assert done.stderr.endswith("; import a log you trust, or convert it (inspect log convert --to json) and check "
                                "what it holds\n"), done.stderr
    assert "Traceback" not in done.stderr
    assert peak < 200 << 20, f"peak RSS {peak:,} bytes"


def test_the_declared_size_refuses_before_reading_and_a_liar_is_stopped_while_reading(tmp_path) -> None:
    honest, _ = _import(zstd_bomb(tmp_path / "honest.eval"), tmp_path)
    assert f"summaries.json expands to more than {MAX_EXPANDED:,} bytes, the most scarbook expands one member to" \
        in honest.stderr, honest.stderr
    liar, _ = _import(zstd_bomb(tmp_path / "liar.eval", size=40 << 20, declared=100), tmp_path)
    assert f"summaries.json expands more than {RATIO}-fold (" in liar.stderr, liar.stderr
    assert "a decompression bomb, not a log" in liar.stderr


def test_a_gzip_bomb_in_a_cassette_is_refused(tmp_path) -> None:
    import gzip

    import yaml

    packed = gzip.compress(b"".join(_spaces(SIZE)), compresslevel=9)
    body = {"string": packed}  # YAML's !!binary, as vcrpy writes a gzip-encoded body
    request = {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
               "body": {"string": '{"model": "claude-test", "messages": [{"role": "user", "content": "hi"}]}'}}
    cassette = tmp_path / "bomb.yaml"
    cassette.write_text(yaml.safe_dump({"interactions": [{"request": request, "response": {
        "status": {"code": 200}, "headers": {"content-encoding": ["gzip"]}, "body": body}}]}))
    done, peak = _import(cassette, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (f"scarbook: {cassette}: this cassette is refused: a gzip body expands more than "
                           f"{RATIO}-fold ({len(packed):,} bytes to more than {max(32 << 20, RATIO * len(packed)):,}): "
                           "a decompression bomb, not a log\n"), done.stderr
    assert peak < 200 << 20, f"peak RSS {peak:,} bytes"
