"""The recorder's proxy on its own (no session): its Recorder driven by an aiohttp client in the
test's event loop, against the tests' local Messages server."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import aiohttp
import pytest

from scarbook.record import Recorder, RecordSettings
from scarbook.record.apis import fold, sse_events
from tests.helpers.judge_server import ScriptedReply, judge_server, text_reply  # noqa: F401


def test_the_last_call_is_in_the_summary_the_moment_its_response_has_ended(judge_server, tmp_path):
    """A run is closed as soon as its agent exits, and an agent exits on its last answer: the call is
    recorded before the response ends, so the summary taken at once has it."""
    judge_server.default = text_reply("ok", usage={"input_tokens": 7, "output_tokens": 3})

    async def go() -> list[int]:
        recorder = Recorder(RecordSettings(anthropic=judge_server.url), env={"ANTHROPIC_API_KEY": "k"})
        await recorder.start()
        calls = []
        try:
            async with aiohttp.ClientSession() as session:
                for i in range(20):
                    token = await recorder.open_run("c", i, tmp_path / f"{i}.jsonl")
                    async with session.post(f"{recorder.base_url(token)}/anthropic/v1/messages",
                                            json={"model": "m", "messages": []}) as resp:
                        await resp.read()
                    summary = recorder.close_run(token)  # at once, as the runner does when the agent exits
                    calls.append(summary.usage.get("input_tokens", 0))
        finally:
            await recorder.stop()
        return calls

    assert asyncio.run(go()) == [7] * 20


def test_a_stream_reaches_the_agent_as_it_arrives_and_a_responses_call_is_recorded(judge_server, tmp_path):
    """The first event is passed on while the server still holds the rest (until the client has it);
    an OpenAI Responses call's function call and usage land in the transcript."""
    judge_server.stream_gate = threading.Event()
    judge_server.push(text_reply("streamed words"))
    judge_server.push(ScriptedReply(200, {"object": "response", "model": "gpt-5", "output": [
        {"type": "function_call", "call_id": "fc_1", "name": "read_file", "arguments": "{\"path\": \"a\"}"}],
        "usage": {"input_tokens": 30, "output_tokens": 4}}))

    async def go() -> tuple[float, bytes, int]:
        recorder = Recorder(RecordSettings(anthropic=judge_server.url, openai=judge_server.url + "/v1"), env={})
        await recorder.start()
        token = await recorder.open_run("c", 1, tmp_path / "t.jsonl")
        try:
            async with aiohttp.ClientSession() as session:
                start = time.perf_counter()
                async with session.post(f"{recorder.base_url(token)}/anthropic/v1/messages",
                                        json={"model": "m", "messages": [], "stream": True}) as resp:
                    await resp.content.readany()
                    first = time.perf_counter() - start
                    judge_server.stream_gate.set()  # now the server sends the rest
                    rest = await resp.read()
                async with session.post(f"{recorder.base_url(token)}/openai/responses",
                                        json={"model": "gpt-5", "input": "read a"}) as resp:
                    status = resp.status
                    await resp.read()  # its end comes after its recording
        finally:
            recorder.close_run(token)
            await recorder.stop()
        return first, rest, status

    first, rest, status = asyncio.run(go())
    assert first < 4 and b"message_stop" in rest and status == 200  # (a buffering proxy: 5 s, then all at once)
    assert judge_server.requests[1]["path"] == "/v1/responses"
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [r["type"] for r in lines] == ["model_call", "assistant", "usage", "model_call", "tool_call", "usage"]
    assert lines[3]["api"] == "openai.responses"
    assert lines[4] == {"type": "tool_call", "call": 2, "id": "fc_1", "name": "read_file", "input": {"path": "a"}}
    assert lines[5]["input_tokens"] == 30 and lines[1]["text"] == "streamed words"


def test_a_responses_stream_and_a_chat_stream_fold_into_their_tool_calls():
    responses = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in [
        {"type": "response.created", "response": {"output": []}},
        {"type": "response.completed", "response": {"model": "gpt-5", "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "reading"}]},
            {"type": "function_call", "call_id": "fc_1", "name": "read_file", "arguments": "{\"path\": \"a\"}"}],
            "usage": {"input_tokens": 30, "output_tokens": 4, "input_tokens_details": {"cached_tokens": 10}}}}])
    r = fold("openai.responses", None, sse_events(responses))
    assert r is not None
    assert (r.model, r.texts, r.tool_calls) == ("gpt-5", ["reading"], [("fc_1", "read_file", {"path": "a"})])
    assert r.usage == {"input_tokens": 20, "output_tokens": 4, "cache_read_tokens": 10, "cache_write_tokens": 0}
    assert fold("openai.responses", {"output": "nope"}, None) is None


@pytest.mark.parametrize(("raw", "why"), [
    ("record: yes-please", "record must be true, false or a mapping, got 'yes-please'"),
    ("record: {mode: replay}", "record.mode: replay needs record.from (the session to replay)"),
    ("record: {mode: live}", "record.mode must be 'record' or 'replay', got 'live'"),
    ("record: {anthropic: api.anthropic.com}", "record.anthropic must be an http(s) URL, got 'api.anthropic.com'"),
    ("record: {fork_at: 2}", "record.from and record.fork_at are for record.mode: replay"),
    ("record: {upstream: x}", "unknown key record.upstream"),
])
def test_a_bad_record_section_is_a_config_error(project, raw, why):
    project.config(f"agent: {{type: demo}}\n{raw}\n")
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert why in result.stderr


def test_fork_at_without_replay_is_refused(project):
    project.case("c", "id: c\ntask: t\nchecks:\n  - type: output_contains\n    text: x\n")
    result = project.cli("eval", "-q", "--fork-at", "2")
    assert result.exit_code == 2
    assert result.stderr == "scarbook: --fork-at K goes with --replay SESSION: it replays the first K calls of each run\n"


def test_a_response_of_an_unforeseen_shape_still_reaches_the_agent(judge_server, tmp_path):
    """Chat Completions JSON whose tool_calls hold a string, not objects: the agent gets it as sent and
    the run says the call could not be recorded (the recorder's parser raised on it)."""
    weird = {"choices": [{"message": {"content": "x", "tool_calls": ["not an object"]}}], "model": "gpt"}
    judge_server.push(ScriptedReply(200, weird))

    async def go():
        recorder = Recorder(RecordSettings(openai=judge_server.url + "/v1"), env={})
        await recorder.start()
        token = await recorder.open_run("c", 1, tmp_path / "t.jsonl")
        try:
            async with aiohttp.ClientSession() as session, \
                    session.post(f"{recorder.base_url(token)}/openai/chat/completions", json={"messages": []}) as r:
                got = (r.status, await r.json())
        finally:
            summary = recorder.close_run(token)
            await recorder.stop()
        return got, summary

    (status, body), summary = asyncio.run(go())
    assert (status, body) == (200, weird)
    assert summary.warnings == [
        f"recorder: call 1 went to {judge_server.url}/v1 with no key: scarbook's own environment has no "
        "OPENAI_API_KEY (the agent's key is never passed on; set it where scarbook runs)",
        "recorder: call 1 could not be recorded (AttributeError: 'str' object has no attribute 'get'); "
        "the agent got the response"]


def test_a_conversation_is_recorded_once_and_put_back_whole_for_replay(tmp_path):
    """Each request repeats the conversation so far: the recording keeps the messages the previous
    call already had as a prefix reference, and replay reads every request whole again."""
    from scarbook.record.recording import RunRecording
    from scarbook.record.replay import read_calls

    run = RunRecording("c", 1, tmp_path / "t.jsonl", 10_000)
    conversation = [{"role": "user", "content": "task"}]
    sent = []
    for n in range(1, 4):
        body = {"model": "m", "messages": list(conversation)}
        sent.append(json.loads(json.dumps(body)))
        req = {"method": "POST", "path": "v1/messages", "headers": {}}
        run.next_call()
        req["body"] = run.compact(body, req)
        run.add({"type": "model_call", "n": n, "api": "anthropic.messages", "request": req,
                 "response": {"status": 200, "body": {}}, "digest": str(n)}, "anthropic.messages", body, None)
        conversation += [{"role": "assistant", "content": f"a{n}"}, {"role": "user", "content": f"u{n}"}]
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    calls = [r for r in lines if r["type"] == "model_call"]
    assert [c["request"].get("prefix") for c in calls] == [
        None, {"call": 1, "key": "messages", "count": 1}, {"call": 2, "key": "messages", "count": 3}]
    assert [len(c["request"]["body"]["messages"]) for c in calls] == [1, 2, 2]  # only the new ones kept
    assert [c["request"]["body"] for c in read_calls(tmp_path / "t.jsonl")] == sent


def test_the_recorder_stops_at_once_when_an_agent_left_a_call_hanging(judge_server, tmp_path):
    """A run killed mid-call (timeout, Ctrl-C) leaves its request waiting on the model: the session's
    end must not wait for the model's answer (aiohttp's default waits up to 60 s for handlers)."""
    judge_server.push(text_reply("late"))
    judge_server.queue[0].delay_s = 3.0

    async def go() -> float:
        recorder = Recorder(RecordSettings(anthropic=judge_server.url), env={})
        await recorder.start()
        token = await recorder.open_run("c", 1, tmp_path / "t.jsonl")
        async with aiohttp.ClientSession() as session:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(session.post(f"{recorder.base_url(token)}/anthropic/v1/messages", json={}), 0.2)
        recorder.close_run(token)
        start = time.perf_counter()
        await recorder.stop()
        return time.perf_counter() - start

    assert asyncio.run(go()) < 1.5


def test_a_chat_stream_of_two_choices_records_choice_zero():
    """n=2 streams one choice a chunk: the recorder took the first choice of every chunk ("HeBylloe")."""
    from scarbook.record import apis
    events = [{"model": "gpt-4o", "choices": [{"index": i, "delta": {"content": text}}]}
              for i, text in ((0, "He"), (1, "By"), (0, "llo"), (1, "e"))]
    reply = apis.fold("openai.chat", None, events)
    assert reply is not None and reply.texts == ["Hello"]
