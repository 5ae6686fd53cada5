"""Replaying file tools: Write, Edit (replace_all), MultiEdit in order, Write over a file, insert."""

import json

from scarbook.transcripts import load_transcript


def _claude_log(tmp_path, calls):
    """A Claude Code log: one assistant record per tool call, each followed by its result."""
    recs = [{"type": "user", "uuid": "u0", "parentUuid": None, "cwd": "/w", "sessionId": "s",
             "message": {"role": "user", "content": "edit things"}}]
    parent = "u0"
    for i, (name, inp, ok) in enumerate(calls):
        recs.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": parent, "sessionId": "s",
                     "message": {"id": f"m{i}", "role": "assistant", "content": [
                         {"type": "tool_use", "id": f"t{i}", "name": name, "input": inp}]}})
        recs.append({"type": "user", "uuid": f"r{i}", "parentUuid": f"a{i}", "sessionId": "s",
                     "message": {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok" if ok else "failed",
                          "is_error": not ok}]}})
        parent = f"r{i}"
    p = tmp_path / "log.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs))
    return load_transcript(p)


def test_edits_replay_in_order(tmp_path):
    t = _claude_log(tmp_path, [
        ("Write", {"file_path": "/w/a.txt", "content": "x x x\n"}, True),
        ("Edit", {"file_path": "/w/a.txt", "old_string": "x", "new_string": "y", "replace_all": True}, True),
        ("Edit", {"file_path": "/w/a.txt", "old_string": "y", "new_string": "z"}, True),  # first only
        ("MultiEdit", {"file_path": "/w/a.txt", "edits": [
            {"old_string": "z", "new_string": "q"}, {"old_string": "q y", "new_string": "done"}]}, True),
        ("Edit", {"file_path": "/w/a.txt", "old_string": "nope", "new_string": "!"}, False),  # refused
        ("Write", {"file_path": "/w/b.txt", "content": "old\n"}, True),
        ("Write", {"file_path": "/w/b.txt", "content": "new\n"}, True),  # replaces
        ("Write", {"file_path": "/elsewhere/c.txt", "content": "c"}, True),
    ])
    assert [(f.path, f.content, f.tools) for f in t.files_written] == [
        ("a.txt", "done y\n", ["Write", "Edit", "Edit", "MultiEdit"]),
        ("b.txt", "new\n", ["Write", "Write"]),
        ("/elsewhere/c.txt", "c", ["Write"]),
    ]


def test_edit_of_unknown_file_and_unreplayable_edit(tmp_path):
    t = _claude_log(tmp_path, [
        ("Edit", {"file_path": "/w/never-seen.py", "old_string": "a", "new_string": "b"}, True),
        ("Write", {"file_path": "/w/d.txt", "content": "abc"}, True),
        ("Edit", {"file_path": "/w/d.txt", "old_string": "zzz", "new_string": "b"}, True),
    ])
    assert [(f.path, f.content, f.note) for f in t.files_written] == [
        ("never-seen.py", None, "Edit changed a file whose earlier content is not in the transcript"),
        ("d.txt", None, "could not replay Edit (call t2): its old text is not in the file"),
    ]


def test_edit_after_whole_read_uses_the_read_content(tmp_path):
    lines = [{"type": "task", "text": "fix"},
             {"type": "tool_call", "id": "1", "name": "read_file", "input": {"path": "cfg.ini"}},
             {"type": "tool_result", "id": "1", "output": "debug = true\nport = 1\n"},
             {"type": "tool_call", "id": "2", "name": "str_replace_based_edit_tool",
              "input": {"command": "str_replace", "path": "cfg.ini", "old_str": "true", "new_str": "false"}},
             {"type": "tool_result", "id": "2", "output": "ok"},
             {"type": "tool_call", "id": "3", "name": "str_replace_based_edit_tool",
              "input": {"command": "insert", "path": "cfg.ini", "insert_line": 1, "new_str": "# note"}},
             {"type": "tool_result", "id": "3", "output": "ok"}]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    t = load_transcript(tmp_path / "t.jsonl")
    assert t.files_written[0].content == "debug = false\n# note\nport = 1\n"
    assert t.files_read[0].content == "debug = true\nport = 1\n"


def test_an_editor_call_whose_command_is_not_a_string_is_not_a_file_operation(tmp_path):
    """`command` came from the model: a list there crashed the reader ("unhashable type: 'list'")."""
    t = _claude_log(tmp_path, [
        ("str_replace_based_edit_tool", {"command": ["create"], "path": "/w/a.txt", "file_text": "a\n"}, True),
        ("str_replace_based_edit_tool", {"command": "create", "path": "/w/b.txt", "file_text": "b\n"}, True),
    ])
    assert [(f.path, f.content) for f in t.files_written] == [("b.txt", "b\n")]
    assert t.files_read == []
