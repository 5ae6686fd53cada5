"""Issue 34 (corpus worklist): Codex rollouts the reader missed. The older rollout (a `{id, timestamp}`
header, then bare Responses items) was refused as "closest to claude-code"; a spawned agent's rollout
(`session_meta.source.subagent`), whose messages are only `event_msg`s after its parent's forked
history, was refused with "no candidate artifact"."""

from __future__ import annotations

import json
from pathlib import Path

from scarbook.transcripts import load_transcript, pick_task, turns


def _lines(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_legacy_rollout_header_then_bare_items(tmp_path):
    log = _lines(tmp_path, [
        {"id": "4444", "timestamp": "2025-05-04T05:06:07.000Z", "instructions": ""},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Add a README"}]},
        {"type": "function_call", "name": "shell", "call_id": "c1",
         "arguments": json.dumps({"command": ["bash", "-lc", "cat > README.md <<'EOF'\n# demo\nEOF"]})},
        {"type": "function_call_output", "call_id": "c1", "output": json.dumps({"output": "", "metadata": {"exit_code": 0}})},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "README added."}]}])
    t = load_transcript(log)
    assert (t.format, pick_task(t, 1).text, t.final_answer, t.date) == ("codex", "Add a README", "README added.",
                                                                          "2025-05-04")
    assert [(f.path, f.content) for f in t.files_written] == [("README.md", "# demo\n")]


def test_a_spawned_agents_rollout_is_its_own_prompt_and_answer(tmp_path):
    log = _lines(tmp_path, [
        {"timestamp": "2026-01-03T04:05:10.000Z", "type": "session_meta", "payload": {
            "id": "3333", "timestamp": "2026-01-03T04:05:10.000Z", "cwd": "/w",
            "source": {"subagent": {"thread_spawn": {"parent_thread_id": "2222", "spawn_call_id": "s1"}}}}},
        {"timestamp": "2026-01-03T04:05:07.000Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "Spawn a researcher."}},
        {"timestamp": "2026-01-03T04:05:08.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "spawn_agent", "call_id": "s1",
            "arguments": json.dumps({"message": "Inspect fixtures."})}},
        {"timestamp": "2026-01-03T04:05:11.000Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "Inspect fixtures."}},
        {"timestamp": "2026-01-03T04:05:12.000Z", "type": "event_msg",
         "payload": {"type": "agent_message", "message": "The fixtures are synthetic."}}])
    t = load_transcript(log)
    assert [tn.prompt for tn in turns(t)] == ["Inspect fixtures."]
    assert t.final_answer == "The fixtures are synthetic."


def test_ui_copies_of_messages_the_items_hold_are_not_doubled(tmp_path):
    log = _lines(tmp_path, [
        {"timestamp": "2026-01-03T04:05:10.000Z", "type": "session_meta", "payload": {"id": "1", "cwd": "/w"}},
        {"timestamp": "2026-01-03T04:05:11.000Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "List the files."}},
        {"timestamp": "2026-01-03T04:05:11.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the files."}]}},
        {"timestamp": "2026-01-03T04:05:12.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.txt"}]}},
        {"timestamp": "2026-01-03T04:05:12.000Z", "type": "event_msg",
         "payload": {"type": "agent_message", "message": "a.txt"}}])
    t = load_transcript(log)
    assert [(m.role, m.text) for m in t.messages] == [("user", "List the files."), ("assistant", "a.txt")]
