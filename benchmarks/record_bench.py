"""The model-call recorder's cost (issue 28.5): latency a call gains by going through the proxy.

16 concurrent "runs" (each with its own recorder token, as in a session) call the tests' local
Messages server (tests/helpers/judge_server.py) directly and through scarbook's recorder, non-streamed and
streamed (SSE), in alternating rounds so both routes see the same machine load. A call's latency is
from sending the request to having read the whole response. Added latency = the proxied
percentile minus the direct one; every proxied call is recorded into its run's transcript, as in an
eval, so the figure includes the recording.

    .venv/bin/python benchmarks/record_bench.py [--calls 40] [--concurrency 16] [--rounds 5] [--upstream-ms 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import aiohttp  # noqa: E402

BODY = {"model": "claude-test", "max_tokens": 256,
        "messages": [{"role": "user", "content": "Summarise the README in one line. " * 20}]}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]


async def timed(urls: list[str], stream: bool, calls: int, session: aiohttp.ClientSession,
                stagger_s: float = 0.0) -> list[float]:
    """`calls` calls from each of len(urls) concurrent workers, each to its own URL: every latency (ms).
    Worker i starts i x `stagger_s` late (runs do not call their model in lockstep)."""
    body = json.dumps({**BODY, "stream": stream}).encode()
    out: list[float] = []

    async def worker(i: int, url: str) -> None:
        await asyncio.sleep(i * stagger_s)
        for _ in range(calls):
            start = time.perf_counter()
            async with session.post(url, data=body, headers={"content-type": "application/json",
                                                             "x-api-key": "dummy"}) as resp:
                await resp.read()
                assert resp.status == 200, resp.status
            out.append((time.perf_counter() - start) * 1000)

    await asyncio.gather(*(worker(i, url) for i, url in enumerate(urls)))
    return out


UPSTREAM = """
import sys, time
sys.path[:0] = {paths!r}
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
ThreadingHTTPServer.request_queue_size = 256  # 16 clients at once: the default backlog of 5 drops SYNs (1 s retries)
BaseHTTPRequestHandler.protocol_version = "HTTP/1.1"  # keep-alive, as the vendors' APIs (a stream still closes)
BaseHTTPRequestHandler.disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall
from tests.helpers.judge_server import JudgeServer, text_reply
server = JudgeServer().start()
server.default = text_reply("ok", usage={{"input_tokens": 200, "output_tokens": 2}})
server.default.delay_s = {delay_s}
print(server.url, flush=True)
time.sleep(10**6)
"""
PROXY = """
import asyncio, sys
sys.path[:0] = {paths!r}
from scarbook.record import RecordSettings, Recorder
async def main():
    recorder = Recorder(RecordSettings(anthropic=sys.argv[1]), env={{"ANTHROPIC_API_KEY": "sk-bench"}})
    await recorder.start()
    tokens = [recorder.open_run("bench", i, f"{{sys.argv[2]}}/{{i}}.transcript.jsonl") for i in range({n})]
    print(recorder.url, *tokens, flush=True)
    await asyncio.sleep(10**6)
asyncio.run(main())
"""


async def spawn(code: str, *args: str) -> tuple[asyncio.subprocess.Process, list[str]]:
    """A helper process (the upstream, or the recorder as in a session: its own process and loop)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, *args, stdout=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    return proc, (await proc.stdout.readline()).decode().split()


async def main(calls: int, concurrency: int, rounds: int, upstream_ms: float) -> None:
    paths = [str(ROOT)]
    folder = Path(tempfile.mkdtemp(prefix="record-bench-"))
    upstream, (server_url,) = await spawn(UPSTREAM.format(paths=paths, delay_s=upstream_ms / 1000))
    proxy, (proxy_url, *tokens) = await spawn(PROXY.format(paths=paths, n=concurrency), server_url, str(folder))
    routes = {"direct": [f"{server_url}/v1/messages"] * concurrency,
              "proxied": [f"{proxy_url}/{t}/anthropic/v1/messages" for t in tokens]}
    results: dict[tuple[str, str], list[float]] = {}
    cpu_at_start = _cpu_seconds(proxy.pid)  # (its start-up and imports are not a call's cost)
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            for mode, stream in (("json", False), ("sse", True)):
                for route in routes.values():  # warm up both
                    await timed(route[:2], stream, 3, session)
                for r in range(rounds):
                    for route in (("direct", "proxied") if r % 2 == 0 else ("proxied", "direct")):
                        results.setdefault((mode, route), []).extend(
                            await timed(routes[route], stream, calls, session, upstream_ms / 1000 / concurrency))
        cpu = _cpu_seconds(proxy.pid) - cpu_at_start
    finally:
        for proc in (proxy, upstream):
            proc.kill()
            await proc.wait()
    recorded = sum(p.read_text().count('"type": "model_call"') for p in folder.glob("*.jsonl"))
    print(f"record_bench: {concurrency} concurrent runs, {calls} calls each x {rounds} rounds per route and mode, "
          f"the model answering in {upstream_ms:g} ms; "
          f"load {os.getloadavg()[0]:.1f}; {recorded} calls recorded; the recorder's CPU "
          f"{1000 * cpu / max(recorded, 1):.2f} ms a call (forwarding, streaming and recording)")
    print(f"{'mode':6} {'direct p50':>11} {'p99':>9} {'proxied p50':>12} {'p99':>9} {'added p50':>10} {'added p99':>10}")
    for mode in ("json", "sse"):
        d, p = results[(mode, "direct")], results[(mode, "proxied")]
        print(f"{mode:6} {pct(d, .5):9.2f}ms {pct(d, .99):7.2f}ms {pct(p, .5):10.2f}ms {pct(p, .99):7.2f}ms "
              f"{pct(p, .5) - pct(d, .5):8.2f}ms {pct(p, .99) - pct(d, .99):8.2f}ms")


def _cpu_seconds(pid: int) -> float:
    """user + system CPU time of a process (Linux /proc), 0.0 elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--upstream-ms", type=float, default=0.0,
                    help="the local model server's think time per call (0: the worst case, calls back to back); "
                    "the runs then start that time / N apart, as runs that do not call in lockstep")
    a = ap.parse_args()
    asyncio.run(main(a.calls, a.concurrency, a.rounds, a.upstream_ms))
