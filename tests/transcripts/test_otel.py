"""OpenTelemetry GenAI spans as OTLP JSON, current and older attribute names."""

import json
from pathlib import Path

from scarbook.models import Usage
from scarbook.transcripts import SeedSuggestion, candidates, load_transcript, suggest_seeds, suggest_task
from tests.helpers.paths import FIXTURES

FIX = FIXTURES / "transcripts"


def rows(t):
    return [(c.number, c.kind, c.label, c.path, c.content) for c in candidates(t)]


def test_current_semconv_history_is_not_repeated():
    t = load_transcript(FIX / "otel_genai.json")
    assert (t.format, t.model, t.warnings) == ("otel", "gpt-4.1-2025-04-14", [])
    # the invoke_agent span's totals are not added on top of its chat spans
    assert t.usage == Usage(input_tokens=450, output_tokens=60)
    assert [(type(e).__name__, getattr(e, "text", getattr(e, "name", ""))) for e in t.entries] == [
        ("Message", "You are a careful agent."),
        ("Message", "Write the word count of poem.txt to count.txt"),
        ("ToolCall", "read_file"),
        ("ToolResult", "roses are red\n"),
        ("Message", "Three words."),
        ("ToolCall", "write_file"),
        ("ToolResult", "ok"),
        ("Message", "count.txt says 3."),
    ]
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "count.txt says 3."),
        (2, "file", "file count.txt (final content)", "count.txt", "3\n"),
        (3, "tool_result", "result of read_file poem.txt", None, "roses are red\n"),
        (4, "tool_result", "result of write_file count.txt", None, "ok"),
    ]
    assert suggest_task(t) == "Write the word count of poem.txt to count.txt"
    assert suggest_seeds(t) == [SeedSuggestion("poem.txt", "roses are red\n", "read by read_file; content from its result")]


def test_older_attribute_names_in_json_lines_of_exports():
    t = load_transcript(FIX / "otel_legacy.jsonl")
    assert (t.format, t.model) == ("otel", "gpt-3.5-turbo")
    assert t.usage == Usage(input_tokens=100, output_tokens=20)
    assert rows(t) == [
        (1, "final_answer", "final answer", None, "final.txt is ready."),
        (2, "file", "file final.txt (final content)", "final.txt", "v1\n"),
        (3, "tool_result", "result of write_file final.txt", None, "written"),
    ]
    assert suggest_task(t) == "Rename draft.txt to final.txt content-wise"
    assert suggest_seeds(t) == []


def test_attributes_without_a_string_key_are_ignored(tmp_path):
    """An attribute keyed by a number (or by nothing) names no gen_ai field: the spans read as without it
    (it crashed the reader with "'int' object has no attribute 'startswith'")."""
    export = json.loads((FIX / "otel_genai.json").read_text())
    for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"][:0] = [{"key": 7, "value": {"stringValue": "x"}}, {"value": {"stringValue": "y"}}]
    path = tmp_path / "odd_keys.json"
    path.write_text(json.dumps(export))
    t = load_transcript(path)
    clean = load_transcript(FIX / "otel_genai.json")
    assert (t.format, t.model, t.warnings, t.usage) == ("otel", "gpt-4.1-2025-04-14", [], clean.usage)
    assert t.entries == clean.entries


def test_an_openinference_span_with_only_input_and_output_values(tmp_path):
    """Issue 34 (corpus worklist): `input.value` (the messages as JSON) and `output.value` (a `{text}` object)
    were all the span held, and it was refused as "no format is close"."""
    span = tmp_path / "span.json"
    span.write_text(json.dumps({
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4-0613",
        "input.value": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]),
        "input.mime_type": "application/json",
        "output.value": json.dumps({"text": "Rainy, 57F.", "finish_reason": "stop"}),
        "llm.token_count.prompt": 9, "llm.token_count.completion": 4}))
    t = load_transcript(span)
    assert (t.format, suggest_task(t), t.final_answer, t.usage) == (
        "otel", "Weather in Paris?", "Rainy, 57F.", Usage(input_tokens=9, output_tokens=4))
