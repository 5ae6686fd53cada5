"""Issue 34.4 (corpus worklist): HTTP cassettes as recorders write them today. pydantic-ai's `parsed_body`
was not read (the file fell through to `plain`, the whole YAML as the answer); a response recorded alone,
the legacy Text Completions API and Responses calls chained by `previous_response_id` were refused or
lost their first turn; a response that is not a model reply drafted a case with no answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scarbook.cases.transcript_draft import write_draft_case
from scarbook.errors import ScarbookError
from scarbook.transcripts import candidates, default_artifact, load_transcript, pick_task

CORPUS = Path(__file__).parent / "corpus" / "cassettes"


def _cassette(tmp_path: Path, *exchanges: tuple[str, object, object], name: str = "c.yaml") -> Path:
    doc = {"interactions": [{"request": {"method": "POST", "uri": uri, "parsed_body": req},
                             "response": {"status": {"code": 200, "message": "OK"}, "parsed_body": resp}}
                            for uri, req, resp in exchanges], "version": 1}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def _answer(t) -> str:
    cands = candidates(t)
    return cands[default_artifact(cands) - 1].content


def test_a_parsed_body_is_read_as_the_call(tmp_path):
    """pydantic-ai writes `parsed_body:` (a YAML mapping), not `body:`: the cassette was read as plain text."""
    path = _cassette(tmp_path, ("https://api.openai.com/v1/chat/completions",
                                {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]},
                                {"object": "chat.completion", "model": "gpt-4o",
                                 "choices": [{"message": {"role": "assistant", "content": "Hello! How can I help?"}}]}))
    t = load_transcript(path)
    assert (t.format, pick_task(t, 1).text, t.final_answer) == ("http-cassette", "hello", "Hello! How can I help?")


def test_a_streamed_messages_reply_under_a_parsed_request():
    t = load_transcript(CORPUS / "pydantic_anthropic_stream.yaml")
    assert (t.format, pick_task(t, 1).text, t.final_answer) == (
        "http-cassette", "What is 1+1? Answer with just the number.", "2")


def test_a_response_recorded_alone_is_its_answer_with_no_task(tmp_path):
    """`{status, headers, body}` (OpenInference's test cassettes): refused as "no format is close"."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"status": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(
        {"type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
         "content": [{"type": "thinking", "thinking": "27*453 = 12,231"}, {"type": "text", "text": "12,231"}]})}))
    t = load_transcript(path)
    assert (t.format, pick_task(t, None).text, t.final_answer) == ("http-cassette", "", "12,231")


def test_the_legacy_text_completions_api_is_read_as_messages(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"interactions": [{
        "request": {"uri": "https://api.anthropic.com/v1/complete", "method": "POST", "body": json.dumps(
            {"model": "claude-instant-1.2", "max_tokens_to_sample": 50,
             "prompt": "\n\nHuman:\nHello world\n\n\nAssistant:"})},
        "response": {"status": {"code": 200}, "body": {"string": json.dumps(
            {"completion": " Hello! How can I help?", "stop_reason": "stop_sequence"})}}}]}))
    t = load_transcript(path)
    assert (t.format, pick_task(t, 1).text, t.final_answer) == ("http-cassette", "Hello world", "Hello! How can I help?")


def test_responses_chained_by_previous_response_id_carry_the_first_turn(tmp_path):
    """The second call's request holds only "What is the secret code?": the first turn is on the server."""
    url = "https://api.openai.com/v1/responses"
    path = _cassette(
        tmp_path,
        (url, {"model": "gpt-5", "input": [{"role": "user", "content": "The secret key is sesame"}]},
         {"id": "resp_1", "object": "response", "output": [
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]}]}),
        (url, {"model": "gpt-5", "previous_response_id": "resp_1",
               "input": [{"role": "user", "content": "What is the secret code?"}]},
         {"id": "resp_2", "object": "response", "output": [
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "sesame"}]}]}))
    t = load_transcript(path)
    task = pick_task(t, 2)
    assert task.text == "[turn 1] The secret key is sesame\n\n[turn 2] What is the secret code?"
    assert task.note == ("the task joins turns 1, 2: the model answered them as one input, each message in the "
                         "context of those before it")
    assert t.final_answer == "sesame"


def test_a_response_that_is_not_a_model_reply_is_refused_naming_what_it_holds(tmp_path):
    path = _cassette(tmp_path, ("https://api.openai.com/v1/chat/completions",
                                {"model": "gpt-4o", "messages": [{"role": "user", "content": "Capital of France?"}]},
                                {"x": 42}))
    with pytest.raises(ScarbookError) as exc:
        load_transcript(path)
    assert str(exc.value) == (
        f"{path}: nothing to import: the last model call's response (keys x) is not a reply of the OpenAI API: the "
        "model's answer is not in the log; import a cassette that recorded the response")


def test_server_tool_results_and_the_code_execution_editor(tmp_path):
    """Anthropic's server-side text editor (`server_tool_use`, `text_editor_code_execution_tool_result`) was
    an unknown block type: the call was refused and the cassette read as plain text."""
    t = load_transcript(CORPUS / "pydantic_anthropic_text_editor.yaml")
    assert t.format == "http-cassette"
    assert [(f.path, f.content) for f in t.files_written] == [("hello.txt", "Hello, world!")]
    assert _answer(t) == "Hello, world!"


def test_a_cassette_nothing_reads_is_closest_to_a_cassette_not_inspect(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"interactions": [{"request": {"uri": "https://example.com/x", "body": "{}"},
                                                      "response": {"status": {"code": 200}, "body": "ok"}}],
                                    "version": 1}))
    with pytest.raises(ScarbookError) as exc:
        load_transcript(path, format="http-cassette")
    assert str(exc.value) == (
        f"{path} is not an http-cassette transcript: 1 HTTP exchange, none of them a call to the Anthropic Messages "
        "API or OpenAI; seen: a YAML document with keys interactions, version; import it without --format to detect "
        "its format, or with --format plain to keep it whole as text")


def test_the_draft_of_a_cassette_writes_the_answer_not_the_yaml(tmp_path):
    t = load_transcript(CORPUS / "pydantic_openai_hello.yaml")
    folder = write_draft_case(t, tmp_path / "cases", "hello", transcript_path=CORPUS / "pydantic_openai_hello.yaml")
    assert (folder / "scar" / "artifact.txt").read_text() == "Hello! How can I assist you today?"
    assert yaml.safe_load((folder / "case.yaml").read_text())["task"] == "hello"


def test_a_streamed_chat_reply_of_two_choices_is_the_first_choice_as_the_recorder_reads_it(tmp_path):
    """Both the cassette reader and the recorder folded every choice's deltas into one text ("HeBylloe" for n=2,
    each chunk carrying one choice); one function folds a stream for both now (transcripts/sse.py), keeping
    choice 0."""
    chunks = [{"model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": "He"}}]},
              {"model": "gpt-4o", "choices": [{"index": 1, "delta": {"content": "By"}}]},
              {"model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": "llo"}}]},
              {"model": "gpt-4o", "choices": [{"index": 1, "delta": {"content": "e"}}]}]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"interactions": [{
        "request": {"uri": "https://api.openai.com/v1/chat/completions", "method": "POST", "body": json.dumps(
            {"model": "gpt-4o", "n": 2, "stream": True, "messages": [{"role": "user", "content": "Greet me"}]})},
        "response": {"status": {"code": 200}, "body": {"string": stream}}}]}))
    assert load_transcript(path).final_answer == "Hello"
