"""What a bounded pattern match costs a run (issue 38: the per-run cost matters).

A `regex` / `output_regex` check used to be `re.compile(p, re.MULTILINE).search(text)`, which holds the GIL
for as long as a backtracking pattern runs. It is now `scarbook.checks.patterns.search`: the `regex` package
with a time limit and `concurrent=True` (the GIL let go while it matches). Both are timed here on what a
case meets — an agent's short answer, a 200 KB file, a 20 MB file (the read cap) — with the patterns the
bundled cases and tests use, each pattern compiled once (`re` caches it; patterns.py keeps it compiled), then
searched again per run. Prints each side's microseconds per check and the ratio (new / old).

Also times a whole rule check both ways: `run_plain_check` of output_regex (what a session's run does on
its trip off the loop) and `run_check` (which now moves output_regex to a thread, as the file rules are).

    .venv/bin/python benchmarks/regex_check_bench.py [--repeat 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scarbook.checks import CheckContext, run_check  # noqa: E402
from scarbook.checks.patterns import search  # noqa: E402
from scarbook.checks.sequence import run_plain_check  # noqa: E402
from scarbook.models import Case, Check  # noqa: E402

PATTERNS = [r"contains (one|1) line", r"^A \w+ AI", r"^v\d+$", r"\A(?![\s\S]*secret)", r"(?i)done\b.*\bone line"]
OUTPUT = "done — the file contains one line\n"
LINE = "A minimal AI agent wrote this line, and another one after it, for the check to read.\n"
TEXTS = {"output (35 B)": OUTPUT, "file (200 KB)": LINE * 2_400, "file (20 MB)": LINE * 240_000}


def per_call(fn, repeat: int) -> float:
    fn()  # compile and cache
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1e6


def old_search(pattern: str, text: str):
    return re.compile(pattern, re.MULTILINE).search(text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    print(f"{'text':<15} {'pattern':<28} {'re µs':>10} {'regex µs':>10} {'ratio':>7}")
    for name, text in TEXTS.items():
        repeat = max(3, args.repeat * len(OUTPUT) // len(text))
        for pattern in PATTERNS:
            old = per_call(lambda p=pattern, t=text: old_search(p, t), repeat)
            new = per_call(lambda p=pattern, t=text: search(p, t, 2.0), repeat)
            print(f"{name:<15} {pattern:<28} {old:>10.1f} {new:>10.1f} {new / old:>7.2f}")
    ctx = CheckContext(case=Case(id="c", task="t"), workspace=ROOT, output=OUTPUT)
    check = Check("output_regex", {"pattern": PATTERNS[0]})
    plain = per_call(lambda: run_plain_check(check, ctx), args.repeat)

    async def on_thread() -> float:
        await run_check(check, ctx)
        start = time.perf_counter()
        for _ in range(args.repeat):
            await run_check(check, ctx)
        return (time.perf_counter() - start) / args.repeat * 1e6

    threaded = asyncio.run(on_thread())
    print(f"output_regex check: run_plain_check {plain:.1f} µs, run_check (to a thread) {threaded:.1f} µs")


if __name__ == "__main__":
    main()
