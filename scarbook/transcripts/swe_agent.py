"""SWE-agent `.traj` files and mini-swe-agent `.traj.json` files: agents that act by shell commands.

SWE-agent (`{environment, trajectory: [{action, observation, thought, response}], history: [...],
info: {submission, exit_status, model_stats}}`): each trajectory step is a command and what it
printed; the task is the issue of the instance prompt (the first user message of `history`).
mini-swe-agent (`{info, messages, trajectory_format}`) speaks a text protocol: the assistant writes a
```bash block, the harness answers as the user with `<returncode>N</returncode><output>…`; those
answers are tool results, never the task. Toolcall models (`tool_calls`, `role: tool`) read as OpenAI
chat. Both: the artifact is the patch or submission the run ended with (`info.submission`), else the
last thing the assistant said.
"""

from __future__ import annotations

import re
from typing import Any

from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript
from scarbook.transcripts.openai import add_chat_message, content_text
from scarbook.transcripts.source import Source

_ISSUE = [re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S),
          re.compile(r"<issue>\s*(.*?)\s*</issue>", re.S),
          re.compile(r"ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.S)]
_PREAMBLE = re.compile(r"\A(?:Consider the following PR description:|Here's the issue text:)\s*", re.S)
_BASH = re.compile(r"```(?:bash|sh|shell|mswea_bash_command)?\s*\n(.*?)```", re.S)
_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_RETURN = re.compile(r"\A\s*<returncode>\s*(-?\d+)\s*</returncode>\s*(?:<output>\s*(.*?)\s*</output>)?", re.S)
_HARNESS = re.compile(r"\A\s*(?:<returncode>|<warning>|<output>|Please always provide EXACTLY ONE action|"
                      r"The last command .* timed out|Observation:)", re.S)


def issue_of(prompt: str) -> str:
    """The issue an instance prompt wraps (<pr_description>, ISSUE: … INSTRUCTIONS:), else the prompt."""
    for pattern in _ISSUE:
        m = pattern.search(prompt)
        if m and m.group(1).strip():
            return _PREAMBLE.sub("", m.group(1).strip())
    return prompt.strip()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else content_text(value)


def _document(src: Source, what: str) -> dict[str, Any]:
    value = src.json
    if not isinstance(value, dict):
        raise NotThisFormat(f"not a JSON object ({what})")
    return value


def _finish(t: Transcript, info: Any) -> Transcript:
    info = info if isinstance(info, dict) else {}
    submission = info.get("submission")
    if isinstance(submission, str) and submission.strip():
        t.final_answer = submission
    if t.final_answer is not None:
        t.entries.append(Message("assistant", t.final_answer))
    status = info.get("exit_status")
    if isinstance(status, str) and status.lower() not in ("submitted", "submitted (exit_cost)", ""):
        t.warnings.append(f"the run ended with exit status {status!r}")
    stats = info.get("model_stats")
    if isinstance(stats, dict):
        t.model = t.model or (info.get("model_name") if isinstance(info.get("model_name"), str) else None)
    return finish_transcript(t)


def parse_swe_agent(src: Source) -> Transcript:
    doc = _document(src, "a SWE-agent .traj file is one")
    steps, history = doc.get("trajectory"), doc.get("history")
    if not isinstance(steps, list) and not isinstance(history, list):
        raise NotThisFormat("no `trajectory` or `history` list (a SWE-agent .traj file)")
    t = Transcript(format="swe-agent", source=src.path)
    users = [m for m in history or [] if isinstance(m, dict) and m.get("role") == "user"]
    prompt = next((m for m in users if m.get("agent") in ("primary", "main")), users[0] if users else None)
    if prompt is not None:
        t.entries.append(Message("user", issue_of(_text(prompt.get("content")))))
    if isinstance(steps, list) and steps:
        for k, step in enumerate(steps):
            if not isinstance(step, dict):
                continue
            thought = step.get("thought") or step.get("response")
            if isinstance(thought, str) and thought.strip():
                t.entries.append(Message("assistant", thought, kind="thinking"))
            action = step.get("action")
            if isinstance(action, str) and action.strip():
                t.entries.append(ToolCall(f"step-{k}", "bash", {"command": action.strip()}))
                t.entries.append(ToolResult(f"step-{k}", _text(step.get("observation"))))
    else:  # a demonstration: the history alone (function calling: tool_calls, role tool)
        fn_ids: list[str] = []
        for m in history or []:
            if not isinstance(m, dict) or m is prompt or m.get("role") == "system":
                continue
            if m.get("role") == "tool":
                ids = m.get("tool_call_ids")
                m = {"role": "tool", "tool_call_id": ids[0] if isinstance(ids, list) and ids else "",
                     "content": _text(m.get("content"))}
            elif m.get("role") == "assistant" and not m.get("tool_calls") and isinstance(m.get("action"), str):
                add_chat_message(t, {"role": "assistant", "content": _text(m.get("content"))}, fn_ids)
                m = {"role": "assistant", "content": "", "tool_calls": [
                    {"id": f"h{len(t.entries)}", "function": {"name": "bash", "arguments": {"command": m["action"]}}}]}
            add_chat_message(t, {k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id")},
                             fn_ids)
    _submission_from_submit(t)
    return _finish(t, doc.get("info"))


def _submission_from_submit(t: Transcript) -> None:
    """No `info.submission`: the output of the run's `submit` (SWE-agent) or of the command that said
    COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT (mini-swe-agent) is what the run submitted."""
    results = {r.call_id: r for r in t.tool_results}
    for call in reversed(t.tool_calls):
        text = " ".join(str(v) for v in call.input.values())
        if call.name == "submit" or text.strip() == "submit" or _SUBMIT in text:
            result = results.get(call.id)
            if result is not None and result.text.strip():
                t.final_answer = result.text
            return


def parse_mini(src: Source) -> Transcript:
    value = src.json
    doc = {"messages": value, "info": {}} if isinstance(value, list) else _document(src, "a mini-swe-agent .traj.json file is one")
    messages = doc.get("messages")
    if not isinstance(messages, list) or not messages:
        raise NotThisFormat("no `messages` list (a mini-swe-agent .traj.json file)")
    if "trajectory_format" not in doc and not isinstance(doc.get("info"), dict):
        raise NotThisFormat("no `trajectory_format` or `info` beside `messages`")
    t = Transcript(format="mini-swe-agent", source=src.path)
    pending: str | None = None  # the id of the command the next harness message answers
    first_user = True
    fn_ids: list[str] = []
    for k, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if m.get("tool_calls") or role == "tool":
            add_chat_message(t, m, fn_ids)
            continue
        text = _text(m.get("content"))
        if role == "assistant":
            t.entries.append(Message("assistant", text))
            block = _BASH.findall(text)
            if block:
                pending = f"cmd-{k}"
                t.entries.append(ToolCall(pending, "bash", {"command": block[-1].strip()}))
        elif role == "user" and (pending is not None or _HARNESS.match(text)) and not first_user:
            ret = _RETURN.match(text)
            code = int(ret.group(1)) if ret else 0
            output = ret.group(2) if ret and ret.group(2) is not None else text
            t.entries.append(ToolResult(pending or f"note-{k}", output, is_error=code != 0))
            pending = None
        elif role == "user":
            t.entries.append(Message("user", issue_of(text) if first_user else text))
            first_user = False
        elif role == "system":
            t.entries.append(Message("system", text))
    _submission_from_submit(t)
    return _finish(t, doc.get("info"))
