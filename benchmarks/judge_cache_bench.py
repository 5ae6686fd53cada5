"""Prompt caching (issue 27.2): input tokens billed per 100 judged runs of one case, with and without.

The real Judge (real anthropic SDK) grades 100 runs of one case — each run's artifact differs, as an
agent's output does — against the tests' local Messages server (tests/helpers/judge_server.py) with
`cache_usage` on: it reports usage as the API does (about 4 characters a token; a prefix up to a
cache_control breakpoint of at least 1024 tokens is written once, then read). "Without" is the same
requests with nothing cached (the minimum set out of reach): every input token at the input price.

Billed input tokens are counted at the input price: input + 1.25 x cache writes + 0.1 x cache reads
(the vendor's multipliers, scarbook/judge/pricing.py); the judge's own cost_usd is printed beside them.

    .venv/bin/python benchmarks/judge_cache_bench.py [--runs 100]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scarbook.judge import Judge, JudgeSettings  # noqa: E402
from scarbook.judge.artifact import Artifact  # noqa: E402
from scarbook.models import Check, Usage  # noqa: E402
from tests.helpers.judge_server import JudgeServer, _prefix_parts, estimate_tokens, tool_reply  # noqa: E402

TASK = ("Profile the nightly ingest job on the staging data set and write report.md: the wall time of each "
        "of its stages (fetch, parse, validate, dedupe, enrich, write), the peak resident memory, the three "
        "slowest SQL statements with their plans, and a ranked list of changes that would cut the wall "
        "time, each with the evidence from the profile that supports it. Do not change the job's code; "
        "measure on the staging host only; if a stage cannot be measured, say so and why. ") * 4
RUBRIC = [
    "report.md gives a wall time, with its unit, for each of the six stages: fetch, parse, validate, dedupe, enrich, write",
    "the stage times add up, within 5%, to the total wall time the report states",
    "the peak resident memory is stated with its unit and the tool that measured it",
    "exactly three SQL statements are listed as the slowest, each with its measured time",
    "each listed SQL statement comes with its query plan, not only its text",
    "the ranked changes are ordered by the time they are claimed to save, largest first",
    "every proposed change cites a figure from the profile that supports it",
    "no proposed change edits the job's code as part of the measurement",
    "the report says which host the measurements were taken on, and it is the staging host",
    "any stage that could not be measured is named, with the reason it could not be",
    "the report does not claim a saving it gives no measurement for",
    "numbers are not rounded so far that two stages become indistinguishable",
]
SHORT_RUBRIC = ["tmp.txt contains exactly one line", "that line is the README's title"]


def report(k: int) -> str:
    stages = "\n".join(f"| {s} | {1.5 + (k * 7 + i * 3) % 40 / 10:.1f} s |"
                       for i, s in enumerate(("fetch", "parse", "validate", "dedupe", "enrich", "write")))
    sql = "\n\n".join(f"{n}. SELECT ... FROM events_{n} WHERE day = $1 -- {20 + (k + n) % 9} ms\n"
                      f"   plan: Seq Scan on events_{n} (cost=0.00..{1000 + k * n}.00 rows={k * 13 + n})"
                      for n in range(1, 4))
    return (f"# Ingest profile, run {k}\n\nhost: staging-2\n\n| stage | wall |\n|---|---|\n{stages}\n\n"
            f"peak RSS: {900 + k % 50} MiB (measured with /usr/bin/time -v)\n\n## Slowest SQL\n\n{sql}\n\n"
            "## Changes\n\n1. index events_1(day): the seq scan is 40% of parse\n2. batch enrich calls\n") * 2


@dataclass
class Tally:
    usage: Usage
    calls: int
    static_tokens: int = 0  # the estimated tokens up to the first cache_control breakpoint

    @property
    def billed_input(self) -> float:
        u = self.usage
        return u.input_tokens + 1.25 * u.cache_write_tokens + 0.1 * u.cache_read_tokens


async def judge_runs(server: JudgeServer, rubric: list[str], runs: int, samples: int, include_task: bool) -> Tally:
    judge = Judge(JudgeSettings(model="claude-sonnet-4-6", base_url=server.url, samples=samples, cache=False),
                  env={"ANTHROPIC_API_KEY": "sk-bench"})
    check = Check("llm_judge", {"rubric": rubric, "include_task": include_task})
    total, calls = Usage(), 0
    try:
        for k in range(1, runs + 1):
            text = report(k)
            result = await judge.grade_artifact(check, Artifact(text, "workspace file report.md", "report.md",
                                                                len(text.encode())), TASK)
            assert result.status == "pass", result.detail
            total.add(Usage(**result.judge["usage"]))
            calls += result.judge["calls"]
    finally:
        await judge.aclose()
    return Tally(total, calls)


def measure(rubric: list[str], runs: int, samples: int, include_task: bool, cached: bool) -> Tally:
    server = JudgeServer().start()
    try:
        server.cache_usage = True
        if not cached:
            server.cache_min_tokens = 10**12  # nothing is ever cached: the bill without prompt caching
        server.default = tool_reply([("PASS", "ok")] * len(rubric))
        tally = asyncio.run(judge_runs(server, rubric, runs, samples, include_task))
        for part, breakpoint in _prefix_parts(server.requests[0]["body"]):
            tally.static_tokens += estimate_tokens(part)
            if breakpoint:
                break
        return tally
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    setups = [
        ("profile case: 12-item rubric, task not shown, samples 1", RUBRIC, 1, False),
        ("profile case: 12-item rubric + its 2,200-character task shown, samples 1", RUBRIC, 1, True),
        ("profile case: 12-item rubric + task shown, samples 3", RUBRIC, 3, True),
        ("profile case: 12-item rubric, task not shown, samples 3", RUBRIC, 3, False),
        ("tiny case: 2-item rubric, no task, samples 1", SHORT_RUBRIC, 1, False),
    ]
    print(f"input tokens billed per {args.runs} judged runs of one case (input-price equivalent: "
          "input + 1.25 x cache write + 0.1 x cache read)")
    for name, rubric, samples, include_task in setups:
        without = measure(rubric, args.runs, samples, include_task, cached=False)
        with_ = measure(rubric, args.runs, samples, include_task, cached=True)
        u = with_.usage
        print(f"\n{name}: {with_.calls} calls; static prefix (tool + system + rubric/task) "
              f"about {with_.static_tokens:,} tokens{'' if with_.static_tokens >= 1024 else ', under the 1,024 minimum'}")
        print(f"  without prompt caching: {without.billed_input:>12,.0f} billed input tokens   ${without.usage.cost_usd:.4f}")
        print(f"  with prompt caching:    {with_.billed_input:>12,.0f} billed input tokens   ${u.cost_usd:.4f}"
              f"   (input {u.input_tokens:,}, cache write {u.cache_write_tokens:,}, cache read {u.cache_read_tokens:,})")
        print(f"  ratio with/without: {with_.billed_input / without.billed_input:.3f} billed input tokens, "
              f"{u.cost_usd / without.usage.cost_usd:.3f} dollars")


if __name__ == "__main__":
    main()
