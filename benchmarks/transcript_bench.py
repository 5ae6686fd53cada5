"""Transcript import at scale: peak memory and CPU of `scarbook import --list`'s work (load, candidates,
seed suggestions, task), printed as ratios (a script, not a test).

    .venv/bin/python benchmarks/transcript_bench.py                  # every format at 200,000 records
    .venv/bin/python benchmarks/transcript_bench.py --records 20000  # smaller
    .venv/bin/python benchmarks/transcript_bench.py --formats claude-code,plain
    .venv/bin/python benchmarks/transcript_bench.py --sizes          # Claude Code logs of 5, 10, 20 and 50 MB
    .venv/bin/python benchmarks/transcript_bench.py --sizes --shape simple   # the earlier, simpler logs

Issue 34.7's targets, for every format at 200,000 records: peak memory <= 2x the file size, and CPU
<= 3x a bare json.loads loop over the same file (one json.loads per line of a JSON-lines file, one of
the whole document, one per `data:` line of an event stream, one per line of text read as a JSON
string). Each format's log is real-shaped (benchmarks/transcript_shapes.py; Claude Code logs by
`generate_real` below) and measured in fresh processes: the bare loop in one, the import in another;
peak memory is the growth of the process's RSS high-water mark (VmHWM; ru_maxrss would carry this
script's own peak into every child) over its RSS right after imports.

`--sizes`: each Claude Code log shaped like a real session (`generate_real`, issue 26.9: every content
block its own record with the whole envelope, thinking signatures, Bash output repeated in
toolUseResult, Grep path lists, TodoWrite, structuredPatch, hook and file-history records), or the
simpler shape (`--shape simple`: user turns, assistant text split over several records, Read calls
whose results carry the `cat -n` gutter *and* `toolUseResult.file.content`, Writes, Edits whose
`toolUseResult` repeats the whole `originalFile`, a sidechain, summaries). Targets: peak <= 2x the
file size; time linear in size (seconds per MB roughly constant from 5 MB to the largest).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from transcript_shapes import SHAPES, write_shape

CHILD = r"""
import json, resource, sys, time
from scarbook.transcripts import candidates, load_transcript, suggest_seeds, suggest_task

def rss_kb(field="VmRSS"):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def peak_kb():
    # this process's own high-water mark: ru_maxrss carries the parent's across fork and exec, so a
    # benchmark that built a big log in memory would lend every child its peak
    return rss_kb("VmHWM")

base = rss_kb()
start, cpu = time.perf_counter(), time.process_time()
t = load_transcript(sys.argv[1])
cands = candidates(t)
seeds = suggest_seeds(t)
task = suggest_task(t)
took, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = peak_kb()
print(json.dumps({"seconds": took, "cpu": cpu, "peak_kb": peak - base, "entries": len(t.entries),
                  "files": len(t.files_written), "candidates": len(cands), "task": bool(task), "format": t.format}))
"""

# The floor each format is held to: one bare json.loads pass over the file, in its own process.
BARE = r"""
import json, resource, sys, time

def rss_kb(field="VmRSS"):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def peak_kb():
    # this process's own high-water mark: ru_maxrss carries the parent's across fork and exec, so a
    # benchmark that built a big log in memory would lend every child its peak
    return rss_kb("VmHWM")

path, kind = sys.argv[1], sys.argv[2]
base = rss_kb()
cpu = time.process_time()
if kind == "document":
    with open(path, "rb") as fh:
        json.loads(fh.read())
else:
    with open(path, "rb") as fh:
        for line in fh:
            if kind == "lines" and line.strip():
                json.loads(line)
            elif kind == "sse" and line.startswith(b"data:"):
                json.loads(line[5:])
            elif kind == "text":
                json.loads(b'"' + line.rstrip(b"\n").replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"')
cpu = time.process_time() - cpu
print(json.dumps({"cpu": cpu, "peak_kb": peak_kb() - base}))
"""

WORDS = ["the", "agent", "reads", "the", "file", "then", "writes", "a", "summary", "of", "each", "section", "and", "checks", "the", "result", "again", "before", "it", "answers", "with", "what", "it", "did", "and", "why", "it", "chose", "that", "way"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _file(rng: random.Random, lines: int) -> str:
    return "".join(f"{_text(rng, rng.randint(4, 12))}\n" for _ in range(lines))


def generate(path: Path, target_bytes: int, seed: int = 7) -> None:
    """Write a Claude Code session log of about `target_bytes`."""
    rng = random.Random(seed)
    cwd = "/home/dev/project"
    files: dict[str, str] = {}
    parent = None
    n = 0

    def rec(kind: str, message: dict, **extra) -> str:
        nonlocal parent, n
        n += 1
        uuid = f"u{n:08d}"
        r = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
             "sessionId": "bench", "version": "1.0.80", "gitBranch": "main", "type": kind,
             "message": message, "uuid": uuid, "timestamp": f"2026-11-14T09:{(n // 60) % 60:02d}:{n % 60:02d}.000Z",
             **extra}
        parent = uuid
        return json.dumps(r) + "\n"

    def assistant(blocks: list, mid: str) -> list[str]:
        return [rec("assistant", {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                  "content": [b], "usage": {"input_tokens": 10, "output_tokens": 20,
                                                            "cache_read_input_tokens": 5000}}) for b in blocks]

    def result(tid: str, text: str, extra: dict | None = None) -> str:
        return rec("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}]},
                   **({"toolUseResult": extra} if extra else {}))

    written = 0
    with open(path, "w") as fh:
        fh.write(json.dumps({"type": "summary", "summary": "bench session", "leafUuid": "x"}) + "\n")
        turn = 0
        while written < target_bytes:
            turn += 1
            lines = [rec("user", {"role": "user", "content": f"Step {turn}: {_text(rng, 20)}"})]
            name = f"src/mod{rng.randint(0, 40)}.py"
            tid = f"toolu_{turn}"
            if name in files and rng.random() < 0.5:  # an Edit, whose toolUseResult repeats the file
                old = files[name].splitlines(keepends=True)[0]
                new = _text(rng, 8) + "\n"
                lines += assistant([{"type": "text", "text": _text(rng, 30)},
                                    {"type": "tool_use", "id": tid, "name": "Edit",
                                     "input": {"file_path": f"{cwd}/{name}", "old_string": old, "new_string": new}}],
                                   f"msg_{turn}")
                lines.append(result(tid, "The file has been updated.",
                                    {"filePath": f"{cwd}/{name}", "oldString": old, "newString": new,
                                     "originalFile": files[name], "structuredPatch": []}))
                files[name] = files[name].replace(old, new, 1)
            elif name in files:  # a Read: gutter text and the file in toolUseResult
                content = files[name]
                gutter = "".join(f"{i:>6}\u2192{ln}\n" for i, ln in enumerate(content.splitlines(), 1))
                lines += assistant([{"type": "tool_use", "id": tid, "name": "Read",
                                     "input": {"file_path": f"{cwd}/{name}"}}], f"msg_{turn}")
                lines.append(result(tid, gutter, {"type": "text", "file": {
                    "filePath": f"{cwd}/{name}", "content": content, "numLines": content.count("\n"),
                    "startLine": 1, "totalLines": content.count("\n")}}))
            else:  # a Write
                files[name] = _file(rng, rng.randint(20, 200))
                lines += assistant([{"type": "text", "text": _text(rng, 15)},
                                    {"type": "tool_use", "id": tid, "name": "Write",
                                     "input": {"file_path": f"{cwd}/{name}", "content": files[name]}}], f"msg_{turn}")
                lines.append(result(tid, f"File created successfully at: {cwd}/{name}"))
            lines += assistant([{"type": "text", "text": _text(rng, 60)}], f"msg_{turn}_end")
            for line in lines:
                fh.write(line)
                written += len(line)


def generate_real(path: Path, target_bytes: int, seed: int = 7, records: int | None = None) -> None:
    """Write a log shaped like a real Claude Code 1.0.8x-2.x session (issue 26.9: the generated logs
    above understate memory): every content block of a reply is its own record carrying the whole
    envelope and usage; thinking blocks with their signatures; Bash results whose output is repeated
    in `toolUseResult.stdout`; Grep/Glob results listing many paths; TodoWrite with old and new
    todos; Edits with a `structuredPatch`; and the many small records between them (hook `system`
    records, `file-history-snapshot`s, sidechain task records)."""
    rng = random.Random(seed)
    cwd = "/home/dev/project"
    files: dict[str, str] = {}
    parent = None
    n = 0

    def rec(kind: str, message: dict | None, **extra) -> str:
        nonlocal parent, n
        n += 1
        uuid = f"{n:08x}-1c2d-4e5f-8a9b-{rng.getrandbits(48):012x}"
        r = {"parentUuid": parent, "isSidechain": extra.pop("sidechain", False), "userType": "external",
             "cwd": cwd, "sessionId": "0f6a3c52-5d7e-4b8a-9c1d-2e3f4a5b6c7d", "version": "1.0.98",
             "gitBranch": "main", "type": kind, "uuid": uuid,
             "timestamp": f"2026-11-14T09:{(n // 60) % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z", **extra}
        if message is not None:
            r["message"] = message
        parent = uuid
        return json.dumps(r) + "\n"

    def reply(blocks: list, mid: str) -> list[str]:
        usage = {"input_tokens": rng.randint(3, 9), "cache_creation_input_tokens": rng.randint(100, 4000),
                 "cache_read_input_tokens": rng.randint(10000, 90000), "output_tokens": rng.randint(20, 900),
                 "service_tier": "standard", "server_tool_use": {"web_search_requests": 0}}
        return [rec("assistant", {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                  "content": [b], "stop_reason": None, "stop_sequence": None, "usage": usage},
                    requestId=f"req_011C{rng.getrandbits(64):016x}") for b in blocks]

    def thinking() -> dict:
        return {"type": "thinking", "thinking": _text(rng, rng.randint(20, 150)),
                "signature": "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                                     for _ in range(rng.randint(400, 1600)))}

    def result(tid: str, content, extra: dict | None = None) -> str:
        return rec("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": content}]},
                   **({"toolUseResult": extra} if extra else {}))

    def small() -> list[str]:
        out = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.5:
                out.append(rec("system", None, subtype="informational", level="info", isMeta=False,
                               content="PostToolUse:Edit [ruff check --fix] completed successfully",
                               toolUseID=f"toolu_{rng.getrandbits(40):010x}"))
            else:
                out.append(json.dumps({"type": "file-history-snapshot", "messageId": f"m{n}", "isSnapshotUpdate": True,
                                       "snapshot": {"messageId": f"m{n}", "timestamp": "2026-11-14T09:00:00.000Z",
                                                    "trackedFileBackups": {f"src/mod{i}.py": {"backupFileName": f"{i:x}@v2",
                                                                                              "version": 2}
                                                                           for i in range(rng.randint(0, 6))}}}) + "\n")
        return out

    written = lines_written = 0
    with open(path, "w") as fh:
        turn = 0
        while written < target_bytes if records is None else lines_written < records:
            turn += 1
            lines = [rec("user", {"role": "user", "content": f"Step {turn}: {_text(rng, 20)}"})] + small()
            tid, mid = f"toolu_01{rng.getrandbits(64):016x}", f"msg_01{rng.getrandbits(64):016x}"
            name = f"src/mod{rng.randint(0, 40)}.py"
            pick = rng.random()
            if pick < 0.3:  # Bash: a test run's output, repeated in toolUseResult
                output = _file(rng, rng.randint(20, 400))
                lines += reply([thinking(), {"type": "text", "text": _text(rng, 20)},
                                {"type": "tool_use", "id": tid, "name": "Bash",
                                 "input": {"command": "pytest -q tests/", "description": "Run the tests"}}], mid)
                lines.append(result(tid, output, {"stdout": output, "stderr": "", "interrupted": False,
                                                  "isImage": False}))
            elif pick < 0.45:  # Grep/Glob: many paths
                paths = [f"{cwd}/src/pkg{rng.randint(0, 9)}/mod{rng.randint(0, 999)}.py" for _ in range(rng.randint(10, 200))]
                lines += reply([{"type": "tool_use", "id": tid, "name": "Grep",
                                 "input": {"pattern": "def main", "output_mode": "files_with_matches"}}], mid)
                lines.append(result(tid, f"Found {len(paths)} files\n" + "\n".join(paths),
                                    {"mode": "files_with_matches", "filenames": paths, "numFiles": len(paths)}))
            elif pick < 0.55:  # TodoWrite: old and new todos
                todos = [{"content": _text(rng, 8), "status": rng.choice(["pending", "in_progress", "completed"]),
                          "activeForm": _text(rng, 6)} for _ in range(rng.randint(3, 12))]
                lines += reply([{"type": "tool_use", "id": tid, "name": "TodoWrite", "input": {"todos": todos}}], mid)
                lines.append(result(tid, "Todos have been modified successfully.", {"oldTodos": todos[1:], "newTodos": todos}))
            elif name in files and pick < 0.75:  # Edit with a structuredPatch and the original file
                old = files[name].splitlines(keepends=True)[0]
                new = _text(rng, 8) + "\n"
                lines += reply([thinking(), {"type": "tool_use", "id": tid, "name": "Edit",
                                             "input": {"file_path": f"{cwd}/{name}", "old_string": old, "new_string": new}}], mid)
                lines.append(result(tid, f"The file {cwd}/{name} has been updated. Here's the result of running `cat -n`...",
                                    {"filePath": f"{cwd}/{name}", "oldString": old, "newString": new,
                                     "originalFile": files[name], "userModified": False, "replaceAll": False,
                                     "structuredPatch": [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
                                                          "lines": ["-" + old.rstrip(), "+" + new.rstrip(),
                                                                    *(" " + ln for ln in files[name].splitlines()[1:3])]}]}))
                files[name] = files[name].replace(old, new, 1)
            elif name in files:  # Read: gutter text and the file again in toolUseResult
                content = files[name]
                gutter = "".join(f"{i:>6}\u2192{ln}\n" for i, ln in enumerate(content.splitlines(), 1))
                lines += reply([{"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": f"{cwd}/{name}"}}], mid)
                lines.append(result(tid, gutter, {"type": "text", "file": {
                    "filePath": f"{cwd}/{name}", "content": content, "numLines": content.count("\n"),
                    "startLine": 1, "totalLines": content.count("\n")}}))
            else:  # Write
                files[name] = _file(rng, rng.randint(20, 200))
                lines += reply([{"type": "text", "text": _text(rng, 15)},
                                {"type": "tool_use", "id": tid, "name": "Write",
                                 "input": {"file_path": f"{cwd}/{name}", "content": files[name]}}], mid)
                lines.append(result(tid, f"File created successfully at: {cwd}/{name}",
                                    {"type": "create", "filePath": f"{cwd}/{name}", "content": files[name],
                                     "structuredPatch": []}))
            lines += small()
            lines += reply([{"type": "text", "text": _text(rng, 60)}], f"msg_01{rng.getrandbits(64):016x}")
            for line in lines[: None if records is None else records - lines_written]:
                fh.write(line)
                written += len(line)
                lines_written += 1


def measure(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def bare(path: Path, kind: str) -> dict:
    out = subprocess.run([sys.executable, "-c", BARE, str(path), kind], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def by_format(names: list[str], records: int) -> None:
    """Every format at `records` records: the import's CPU over the bare json.loads pass's, its peak over
    the file's size."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="scarbook-transcript-bench-") as tmp:
        for name in names:
            path = Path(tmp) / f"{name}.log"
            if name == "claude-code":
                generate_real(path, 0, records=records)
                kind, fmt = "lines", "claude-code"
            else:
                write_shape(name, path, records)
                _, kind, fmt = SHAPES[name]
            size = path.stat().st_size
            floor, m = bare(path, kind), measure(path)
            rows.append((name, fmt, size, floor, m))
            path.unlink()
            print(f"  measured {name}", file=sys.stderr)
    print(f"{records:,} records a log")
    print(f"{'format':<20} {'size MB':>8} {'bare s':>7} {'import s':>9} {'CPU x':>6} {'peak MB':>8} {'peak/size':>9}  "
          "targets")
    for name, fmt, size, floor, m in rows:
        cpu_x = m["cpu"] / max(floor["cpu"], 1e-6)
        mem_x = m["peak_kb"] * 1e3 / size
        met = ("cpu ok" if cpu_x <= 3 else "CPU OVER") + ", " + ("mem ok" if mem_x <= 2 else "MEM OVER")
        wrong = "" if m["format"] == fmt else f" (read as {m['format']}!)"
        print(f"{name:<20} {size / 1e6:>8.1f} {floor['cpu']:>7.2f} {m['cpu']:>9.2f} {cpu_x:>6.2f} "
              f"{m['peak_kb'] / 1e3:>8.1f} {mem_x:>9.2f}  {met}{wrong}")
    worst_cpu = max(m["cpu"] / max(f["cpu"], 1e-6) for *_, f, m in rows)
    worst_mem = max(m["peak_kb"] * 1e3 / size for _, _, size, _, m in rows)
    print(f"\nworst CPU / bare json.loads: {worst_cpu:.2f}x (target <= 3x); worst peak / file size: {worst_mem:.2f}x "
          "(target <= 2x)")


def by_size(shape: str, sizes: list[int]) -> None:
    make = generate_real if shape == "real" else generate
    rows = []
    print(f"logs shaped: {shape}")
    with tempfile.TemporaryDirectory(prefix="scarbook-transcript-bench-") as tmp:
        for mb in sizes:
            path = Path(tmp) / f"session-{mb}mb.jsonl"
            make(path, mb * 1_000_000)
            size = path.stat().st_size
            m = measure(path)
            rows.append((mb, size, m))
            path.unlink()
    print(f"{'log':>6} {'size MB':>8} {'seconds':>8} {'s/MB':>6} {'peak MB':>8} {'peak/size':>9}  entries  files")
    for mb, size, m in rows:
        print(f"{mb:>4}MB {size / 1e6:>8.1f} {m['seconds']:>8.2f} {m['seconds'] / (size / 1e6):>6.3f} "
              f"{m['peak_kb'] / 1e3:>8.1f} {m['peak_kb'] * 1e3 / size:>9.2f}  {m['entries']:>7}  {m['files']:>5}")
    worst = max(m["peak_kb"] * 1e3 / size for _, size, m in rows)
    per_mb = [m["seconds"] / (size / 1e6) for _, size, m in rows]
    print(f"\npeak memory / file size, worst: {worst:.2f}x (target <= 2x)")
    print(f"time per MB, largest / smallest log: {per_mb[-1] / per_mb[0]:.2f} (linear in size: about 1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000, help="records a log (default 200,000)")
    parser.add_argument("--formats", default=",".join(["claude-code", *SHAPES]),
                        help="comma-separated: claude-code, " + ", ".join(SHAPES))
    parser.add_argument("--sizes", action="store_true", help="Claude Code logs of 5, 10, 20 and 50 MB instead")
    parser.add_argument("--quick", action="store_true", help="with --sizes: 5, 10 and 20 MB only")
    parser.add_argument("--shape", choices=["real", "simple"], default="real",
                        help="with --sizes: real (default, generate_real) or simple (the earlier generated log)")
    args = parser.parse_args()
    if args.sizes:
        by_size(args.shape, [5, 10, 20] if args.quick else [5, 10, 20, 50])
    else:
        by_format([n.strip() for n in args.formats.split(",") if n.strip()], args.records)


if __name__ == "__main__":
    main()
