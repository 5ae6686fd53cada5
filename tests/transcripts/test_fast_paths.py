"""Big logs in one pass (issue 34.7): each faster way of reading a shell agent's log gives what the plain
definition it replaced gave, and hostile input stays linear.

The references below are the code the fast paths replaced (a pattern, a pass of its own over the timeline),
kept here as the definition; Hypothesis draws the inputs (derandomized: the same examples in every run).
"""

from __future__ import annotations

import gc
import json
import re
import subprocess
import sys
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scarbook.transcripts import candidates, describe_call, load_transcript, preview
from scarbook.transcripts.files import file_operations, final_answer
from scarbook.transcripts.model import Message, ToolCall, ToolResult, Transcript, paused_gc
from scarbook.transcripts.shell import _SWE_RANGE, whole_output
from scarbook.transcripts.swe_agent import (
    _BASH,
    _RETURN,
    _clean_outputs,
    _follow_open_file,
    _last_open_file,
    _MiniMessages,
    _returned,
    _submission_from_submit,
    _text,
)

SAME = settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pieces(*words: str, max_size: int = 12) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(words), max_size=max_size).map("".join)


# --- a mini-swe-agent message's ```bash blocks, SWE-agent's `edit N:M … end_of_edit`, the harness's answer

_BASH_WAS = re.compile(r"```(?:bash|sh|shell|mswea_bash_command)?\s*\n(.*?)```", re.S)
_SWE_RANGE_WAS = re.compile(r"\Aedit\s+(\d+):(\d+)\s*\n(.*?)\n?end_of_edit\s*\Z", re.S)


@SAME
@given(_pieces("`", "```", "````", "bash", "sh", "shell", "ell", "mswea_bash_command", "\n", " ", "\t", "\r",
               "\u00a0", "\u2028", "ls -la", "x", "THOUGHT: "))
def test_the_command_blocks_are_those_the_backtracking_pattern_found(text):
    assert _BASH.findall(text) == _BASH_WAS.findall(text)


@SAME
@given(st.booleans(), _pieces("edit", "edit ", "edit 1:2", "edit 12:3", "1", ":", " ", "\n", "\t", "\r", "\u00a0",
                              "\u0663", "end_of_edit", "end_of_edi", "x = 1", "\n\n", max_size=10))
def test_an_edit_of_lines_is_what_the_backtracking_pattern_matched(lead, text):
    text = ("edit " if lead else "") + text
    m, was = _SWE_RANGE.match(text), _SWE_RANGE_WAS.match(text)
    assert (m and m.groups()) == (was and was.groups())


def _returned_was(text: str) -> tuple[int, str]:
    m = _RETURN.match(text)
    if m is None:
        return 0, text
    end = text.find("</output>", m.end() + 8) if text.startswith("<output>", m.end()) else -1
    return int(m.group(1)), text[m.end() + 8:end].strip() if end >= 0 else text


@SAME
@given(_pieces("<returncode>0</returncode>", "<returncode>1</returncode>", "<output>", "</output>", "</output",
               "<", ">", "<o", "x", "\n", " "))
def test_the_harness_answer_is_cut_at_the_first_end_of_output(text):
    assert _returned(text) == _returned_was(text)


def test_blank_lines_after_an_unclosed_fence_or_edit_are_read_in_linear_time(tmp_path):
    """Both patterns tried each of a long run of blank lines against the rest of the text, in one C call
    that holds the GIL (quadratic: hours at 200,000 lines). A child process, so that the old code fails
    the test at the time bound instead of hanging the run."""
    mini = tmp_path / "hostile.traj.json"
    mini.write_text(json.dumps({"info": {}, "trajectory_format": "mini-swe-agent-1", "messages": [
        {"role": "user", "content": "<pr_description>fix it</pr_description>"},
        {"role": "assistant", "content": "```bash" + "\n" * 200_000 + "ls"},
        {"role": "assistant", "content": "```bash\nls\n```"}]}))
    swe = tmp_path / "hostile.traj"
    swe.write_text(json.dumps({"environment": "swe_main", "info": {}, "history": [
        {"role": "user", "content": "<issue>fix it</issue>"}], "trajectory": [
        {"action": "open a.py", "observation": "[File: /r/a.py (1 lines total)]\n1:x", "thought": "look"},
        {"action": "edit 1:1" + "\n" * 200_000 + "y", "observation": "", "thought": "change"}]}))
    code = ("import sys; from scarbook.transcripts import load_transcript, suggest_seeds\n"
            "for p in sys.argv[1:]:\n"
            "    t = load_transcript(p); suggest_seeds(t)\n"
            "    print(t.format, [c.input['command'][:6] for c in t.tool_calls])\n")
    out = subprocess.run([sys.executable, "-c", code, str(mini), str(swe)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.splitlines() == ["mini-swe-agent ['ls']", "swe-agent ['open a', 'edit 1']"]


@SAME
@given(_pieces("(", "((", "(Open file: ", "(Open file:", "Open file: ", "(Current directory: /r)", "x", "\n",
               "(Open file: (Open file: "))
def test_the_last_open_file_footer_is_found_where_a_search_for_it_finds_it(text):
    assert _last_open_file(text) == text.rfind("(Open file: ")


# --- whether an output is whole, and a preview


def _whole_output(text: str) -> bool:
    return not ("truncated" in text or "Truncated" in text or "TRUNCATED" in text or "<elided_chars>" in text
                or "<output_head>" in text or "[..." in text)


@SAME
@given(_pieces("truncated", "Truncated", "TRUNCATED", "runcated", "RUNCATED", "t", "T", "<", "[", "...", "[..",
               "<elided_chars>", "<output_head>", "<output", "x", " ", "\n"))
def test_an_output_is_whole_as_the_marks_say(text):
    assert whole_output(text) == _whole_output(text)


def _preview(text: str, n: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: max(n - 1, 0)] + "…"


@SAME
@given(st.lists(st.sampled_from(["word", "a", " ", "  ", "\n", "\t", "\u00a0", "\u2028", "\u3000", "x" * 50,
                                 " " * 300, "é"]), max_size=60).map("".join), st.integers(0, 90))
def test_a_preview_of_a_long_text_is_the_preview_of_all_of_it(text, n):
    assert preview(text, n) == _preview(text, n)


# --- SWE-agent: the footer, the open file and the submission, taken as each step comes


def _reference(doc: dict[str, Any]) -> Transcript:
    """The timeline as the separate passes made it: every step's output as printed, then the footers cleaned
    over all outputs, then the open file followed over all calls."""
    t = Transcript(format="swe-agent")
    for k, step in enumerate(doc["trajectory"]):
        if not isinstance(step, dict):
            continue
        thought = step.get("thought") or step.get("response")
        if isinstance(thought, str) and thought.strip():
            t.entries.append(Message("assistant", thought, kind="thinking"))
        action = step.get("action")
        if isinstance(action, str) and action.strip():
            t.entries.append(ToolCall(f"step-{k}", "bash", {"command": action.strip()}))
            t.entries.append(ToolResult(f"step-{k}", _text(step.get("observation"))))
    _submission_from_submit(t)
    _clean_outputs(t)
    _follow_open_file(t)
    return t


_FOOTER = st.sampled_from(["", "\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$",
                           "\r\n(Open file: n/a)\r\n(Current directory: /r/src)\r\nbash-$",
                           "\n(Open file: a.py)\n(Current directory: rel)\n"])
_WINDOW = st.sampled_from(["[File: /r/a.py (2 lines total)]\n1:x = 1\n2:y", "[File: a.py (1 lines total)]\r\n1:z",
                           "[File: /r/src/b.py (9 lines total)]\n(3 more lines above)\n4:q", "Replaced 1 occurrences.",
                           "diff --git a/a.py b/a.py\n", "", "  "])
_STEP = st.fixed_dictionaries({
    "action": st.sampled_from(["open a.py", "open /r/a.py", "open \"src/b.py\" 20", "open", "create c.py",
                               "edit 'x = 1' 'x = 2'", "edit 1:1\nx = 3\nend_of_edit", "submit", "  submit  ",
                               "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "python a.py", "", " "]),
    "observation": st.tuples(_WINDOW, _FOOTER).map("".join) | st.sampled_from([None, 3]),
    "thought": st.sampled_from(["look", "", " ", None])}) | st.sampled_from([None, "x"])


@SAME
@given(st.lists(_STEP, min_size=1, max_size=8))
def test_a_swe_agent_trajectory_read_in_one_pass_equals_the_passes_it_replaced(tmp_path_factory, steps):
    doc = {"environment": "swe_main", "trajectory": steps, "info": {},
           "history": [{"role": "user", "content": "<issue>fix a.py</issue>"}]}
    path = tmp_path_factory.mktemp("swe") / "run.traj"
    path.write_text(json.dumps(doc))
    t, want = load_transcript(path), _reference(doc)
    assert t.entries[1:-1 if want.final_answer is not None else None] == want.entries
    assert (t.cwd, t.final_answer) == (want.cwd, want.final_answer)


_MESSAGE = st.sampled_from([
    {"role": "assistant", "content": "THOUGHT: look\n\n```bash\ncat a.py\n```"},
    {"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
    {"role": "assistant", "content": "no command"},
    {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx = 1\n</output>"},
    {"role": "user", "content": "<returncode>0</returncode>\r\n<output>\r\ndiff --git a/a b/a\r\n</output>"},
    {"role": "user", "content": "<returncode>1</returncode><output>a\n(Open file: a.py)\n(Current directory: /r)\nbash-$"
                                "</output>"},
    {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": {"name": "bash", "arguments": json.dumps({"command": "submit"})}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "patch\r\n(Open file: n/a)\r\n(Current directory: /w)\r\nbash-$"},
    {"role": "tool", "tool_call_id": "c1", "content": "  "}, {"role": "system", "content": "note"}, None])


@SAME
@given(st.lists(_MESSAGE, max_size=10), st.booleans())
def test_a_mini_swe_agent_run_read_in_one_pass_equals_the_passes_it_replaced(tmp_path_factory, messages,
                                                                             submitted):
    messages = [{"role": "user", "content": "<pr_description>fix a.py</pr_description>"}, *messages]
    info = {"submission": "diff\n"} if submitted else {}
    path = tmp_path_factory.mktemp("mini") / "run.traj.json"
    path.write_text(json.dumps({"info": info, "trajectory_format": "mini-swe-agent-1", "messages": messages}))
    want = Transcript(format="mini-swe-agent")
    reader = _MiniMessages(want)
    reader._cleaned = lambda result: result  # type: ignore[method-assign]  # (as printed: the passes clean)
    for m in messages:
        reader.add("messages", m)
    if not submitted:
        _submission_from_submit(want)
    _clean_outputs(want)
    t = load_transcript(path)
    assert t.entries[:len(want.entries)] == want.entries
    answer = "diff\n" if submitted else want.final_answer
    assert (t.cwd, t.final_answer) == (want.cwd, final_answer(want.entries)[0] if answer is None else answer)


# --- candidates and file operations: worked out once, shared


def test_a_long_logs_repeated_commands_share_their_labels_and_file_operations(tmp_path):
    """A label ("result of bash: cat a.py") and a command's file operations are made once and shared by every
    call that ran the same command: each was a string and a FileOp of its own for every call of a big log."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "<pr_description>fix</pr_description>"}]
    for _ in range(3):
        messages += [{"role": "assistant", "content": "```bash\ncat a.py\n```"},
                     {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx = 1\n</output>"}]
    messages += [{"role": "assistant", "content": "```bash\ncat " + "b" * 400 + ".py\n```"},
                 {"role": "user", "content": "<returncode>1</returncode>\n<output>\nnope\n</output>"}]
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"info": {}, "trajectory_format": "mini-swe-agent-1", "messages": messages}))
    t = load_transcript(path)
    results = [c for c in candidates(t) if c.kind == "tool_result"]
    assert [c.label for c in results] == ["result of bash: cat a.py"] * 3 + [
        f"result of bash: {preview('cat ' + 'b' * 400 + '.py', 40)} (error)"]
    assert len({id(c.label) for c in results[:3]}) == 1
    calls = t.tool_calls
    assert [c.label for c in results] == [f"result of {describe_call(c, t.root)}" + " (error)" * (k == 3)
                                          for k, c in enumerate(calls)]
    ops = [file_operations(c) for c in calls]
    assert ops[0] is ops[1] is ops[2] and [op.path for op in ops[0]] == ["a.py"]
    assert ops[3] is not file_operations(ToolCall("x", "bash", dict(calls[3].input)))  # a long command: not kept


def test_a_harness_note_with_no_command_before_it_keeps_its_error_in_its_label(tmp_path):
    """Labels are shared by what names them; a result whose call the log lacks is named by that and by its
    error alone (a shared label once lost the "(error)" of a note answering no command)."""
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps({"info": {}, "trajectory_format": "mini-swe-agent-1", "messages": [
        {"role": "user", "content": "<pr_description>fix</pr_description>"},
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\na.py\n</output>"},
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\nkilled\n</output>"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nok\n</output>"}]}))
    t = load_transcript(path)
    assert [c.label for c in candidates(t) if c.kind == "tool_result"] == [
        "result of bash: ls", "result of unknown tool (error)", "result of unknown tool"]


# --- the collector after a pause


class _Node:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def test_what_a_big_pause_made_goes_to_the_oldest_generation_and_nothing_frozen_thaws():
    """Left young, the first allocation after a pause had the collector walk everything the pause made (0.12 s
    after a 100 MB log); moved to the oldest generation, no young collection walks it. Not when something
    else froze objects (the TUI freezes the library's): unfreezing would thaw those too."""
    gc.unfreeze()  # (tests/conftest.py freezes what outlives each test: this is a process where nothing is frozen)
    with paused_gc():
        made = [_Node("x") for _ in range(60_000)]
    [[] for _ in range(10)]  # (an allocation: a young collection would run here)
    assert any(o is made[-1] for o in gc.get_objects(generation=2))
    kept = _Node("kept")
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            more = [_Node("y") for _ in range(60_000)]
        assert gc.get_freeze_count() == frozen and not any(o is kept for o in gc.get_objects())
        assert len(more) == 60_000
    finally:
        gc.unfreeze()
