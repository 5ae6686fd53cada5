"""OpenAI Chat Completions messages and Responses API items."""

import json
from pathlib import Path

from scarbook.models import Usage
from scarbook.transcripts import SeedSuggestion, ToolCall, candidates, load_transcript, suggest_seeds, suggest_task
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts"


def rows(t):
    return [(c.number, c.kind, c.label, c.path, c.content) for c in candidates(t)]


def test_chat_request_and_response_pair():
    t = load_transcript(FIX / "openai_chat.json")
    assert (t.format, t.model) == ("openai-chat", "gpt-4o-2024-08-06")
    assert t.usage == Usage(input_tokens=388, output_tokens=40, cache_read_tokens=512)
    assert t.tool_calls[1] == ToolCall("call_2", "write_file", {"path": "greeting.txt", "content": "Hello, world\n"})
    assert t.tool_calls[2].input == {"_raw_arguments": '{"cmd": "cat greeting.txt'}
    assert t.warnings == ["tool call call_3 has arguments that are not JSON; kept as raw text"]
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "Fixed: greeting.txt now says Hello, world."),
        (2, "file", "file greeting.txt (final content)", "greeting.txt", "Hello, world\n"),
        (3, "tool_result", "result of read_file greeting.txt", None, "Helo, world\n"),
        (4, "tool_result", "result of write_file greeting.txt", None, "ok"),
        (5, "tool_result", "result of shell", None, "error: bad arguments"),
    ]
    assert suggest_task(t) == "Fix the typo in greeting.txt"
    assert t.messages[1].text == "Fix the typo in greeting.txt\n[image: image/png, 3 kB]"
    # read before the agent overwrote it: the original is the seed
    assert suggest_seeds(t) == [SeedSuggestion("greeting.txt", "Helo, world\n", "read by read_file; content from its result")]


def test_chat_messages_list(tmp_path):
    data = json.loads((FIX / "openai_chat.json").read_text())
    (tmp_path / "m.json").write_text(json.dumps(data["request"]["messages"]))
    t = load_transcript(tmp_path / "m.json")
    assert t.format == "openai-chat"
    assert t.final_answer == "I'll rewrite it."


def test_responses_items():
    t = load_transcript(FIX / "openai_responses.json")
    assert t.format == "openai-responses"
    assert [(m.role, m.kind, m.text) for m in t.messages] == [
        ("user", "text", "Add a CHANGELOG entry for 1.2"),
        ("assistant", "thinking", "Look at the folder first."),
        ("assistant", "text", "Added the 1.2 entry."),
    ]
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "Added the 1.2 entry."),
        (2, "file", "file CHANGELOG.md (final content)", "CHANGELOG.md", "# Changelog\n## 1.2\n- new\n"),
        (3, "tool_result", "result of list_dir .", None, "CHANGELOG.md\nsrc/\n"),
        (4, "tool_result", "result of read_file CHANGELOG.md", None, "# Changelog\n## 1.1\n- fix\n"),
        (5, "tool_result", "result of write_file CHANGELOG.md", None, "written"),
    ]
    assert suggest_seeds(t) == [
        SeedSuggestion("CHANGELOG.md", "# Changelog\n## 1.1\n- fix\n", "read by read_file; content from its result")]


def test_responses_response_object(tmp_path):
    items = json.loads((FIX / "openai_responses.json").read_text())
    doc = {"request": {"model": "gpt-5", "instructions": "Be brief.", "input": "Add a CHANGELOG entry for 1.2"},
           "response": {"object": "response", "model": "gpt-5-2025-08-07", "output": items[1:],
                        "usage": {"input_tokens": 80, "output_tokens": 20, "input_tokens_details": {"cached_tokens": 0}}}}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    t = load_transcript(tmp_path / "r.json")
    assert (t.format, t.model, t.usage) == ("openai-responses", "gpt-5-2025-08-07", Usage(input_tokens=80, output_tokens=20))
    assert suggest_task(t) == "Add a CHANGELOG entry for 1.2"
    assert t.messages[0].role == "system"
