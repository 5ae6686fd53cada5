"""The judge's SDK clients: one TLS context for the process, and a client built on it still reaches the
Messages API (the loopback server) and grades."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from scarbook.judge import client as judge_client
from scarbook.judge.client import call_judge, make_client
from scarbook.judge.settings import JudgeSettings
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401


@pytest.fixture
def ca_loads(monkeypatch) -> list[object]:
    """Each time a TLS context reads a CA bundle (what makes building one cost ~20 ms), from a process
    that has built none yet."""
    judge_client.shared_tls.cache_clear()  # as in a process that has built none yet
    loads: list[object] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):
        loads.append(args or kwargs)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return loads


def test_clients_of_many_event_loops_read_the_ca_bundle_once(ca_loads) -> None:
    settings = JudgeSettings(base_url="https://judge.invalid")

    async def one() -> None:
        await make_client(settings, "sk-test").close()

    for _ in range(3):
        asyncio.run(one())
    assert len(ca_loads) == 1  # each client read it again before: 3


def test_a_client_on_the_shared_context_grades_through_the_loopback_api(judge_server, ca_loads) -> None:
    judge_server.default = tool_reply([("PASS", "it does")])
    settings = JudgeSettings(base_url=judge_server.url, max_retries=0)
    request = {"model": settings.model, "max_tokens": 64, "messages": [{"role": "user", "content": "grade"}]}

    async def ask() -> object:
        client = make_client(settings, "sk-test")
        try:
            return await call_judge(client, settings, request)
        finally:
            await client.close()

    reply = asyncio.run(ask())
    assert reply.tool_input["items"][0]["verdict"] == "PASS" and reply.retries == 0
    assert len(ca_loads) == 1
