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
from scarbook.transcripts.json_walk import STREAMED, Broken, walk
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript
from scarbook.transcripts.openai import add_chat_message, content_text
from scarbook.transcripts.shell import window_path
from scarbook.transcripts.source import Source

_ISSUE = [re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S),
          re.compile(r"<issue>\s*(.*?)\s*</issue>", re.S),
          re.compile(r"ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.S)]
_PREAMBLE = re.compile(r"\A(?:Consider the following PR description:|Here's the issue text:)\s*", re.S)
_BASH = re.compile(r"```(?:bash|sh|shell|mswea_bash_command)?\s*\n(.*?)```", re.S)
_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_RETURN = re.compile(r"\A\s*<returncode>\s*(-?\d+)\s*</returncode>\s*")
_HARNESS = re.compile(r"\A\s*(?:<returncode>|<warning>|<output>|Please always provide EXACTLY ONE action|"
                      r"The last command [^\n]* timed out|Observation:)")


def _returned(text: str) -> tuple[int, str]:
    """(exit code, output) of mini-swe-agent's answer `<returncode>N</returncode><output>…</output>`; a
    message of another shape is its own output, code 0. (Found with str.find: a pattern that looked for
    the output's end at every character cost quadratic time on a long output.)"""
    m = _RETURN.match(text)
    if m is None:
        return 0, text
    end = text.find("</output>", m.end() + 8) if text.startswith("<output>", m.end()) else -1
    return int(m.group(1)), text[m.end() + 8:end].strip() if end >= 0 else text


def issue_of(prompt: str) -> str:
    """The issue an instance prompt wraps (<pr_description>, ISSUE: … INSTRUCTIONS:), else the prompt."""
    for pattern in _ISSUE:
        m = pattern.search(prompt)
        if m and m.group(1).strip():
            return _PREAMBLE.sub("", m.group(1).strip())
    return prompt.strip()


_DEMO = re.compile(r"\A\s*Here is a demonstration of how to correctly accomplish this task")


def is_demonstration(message: dict[str, Any]) -> bool:
    """The worked example of another issue SWE-agent shows the model before its own (`is_demo`, or its
    opening words): never the task."""
    return bool(message.get("is_demo")) or bool(_DEMO.match(_text(message.get("content"))))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else content_text(value)


_FOOTER = re.compile(r"\n?\(Open file: (?P<open>[^\n]*)\)\n\(Current directory: (?P<cwd>[^\n]*)\)\n?(?:bash-\$)?\s*\Z")


def _footer(text: str) -> re.Match[str] | None:
    """The terminal's footer ending `text`, searched for only from the line of the last "(Open file: " (a
    search over the whole output, at every character, cost more than parsing it)."""
    at = text.rfind("(Open file: ")
    if at < 0:
        return None
    return _FOOTER.search(text, max(text.rfind("\n", 0, at), 0))


def _clean_outputs(t: Transcript) -> None:
    """SWE-agent's terminal: each output ends with "(Open file: …)\\n(Current directory: …)\\nbash-$" and
    its lines with CRLF. The output is what the command printed; the footer says where the agent stood."""
    for r in t.tool_results:
        text = r.text.replace("\r\n", "\n") if "\r" in r.text else r.text
        m = _footer(text)
        if m:
            text = text[:m.start()]
            if t.cwd is None and m.group("cwd").startswith("/"):
                t.cwd = m.group("cwd")
        r.text = text


def _follow_open_file(t: Transcript) -> None:
    """SWE-agent's `edit` changes the file it has open: name it on each edit call (`ToolCall.target`). The
    file opened or created last is the open one; an `open` of a relative path whose window names the
    absolute one also says where the agent worked (its cwd)."""
    results = {r.call_id: r for r in t.tool_results}
    open_file: str | None = None
    for call in t.tool_calls:
        command = call.input.get("command") if call.name == "bash" else None
        words = command.split(maxsplit=2) if isinstance(command, str) else []
        verb = call.name if call.name in ("open", "create", "edit") else words[0] if words else ""
        result = results.get(call.id)
        if verb in ("open", "create"):
            named = call.input.get("path") if call.name == verb else words[1] if len(words) > 1 else None
            shown = window_path(result.text) if result is not None else None
            if isinstance(named, str):
                open_file = shown if shown and shown.startswith("/") else named.strip("'\"")
                if t.cwd is None and shown and shown.startswith("/") and not named.strip("'\"").startswith("/") \
                        and shown.endswith("/" + named.strip("'\"")):
                    t.cwd = shown[: -len(named.strip("'\"")) - 1] or "/"
        elif verb == "edit" and open_file is not None:
            call.target = open_file


def _finish(t: Transcript, info: Any, history_cwd: str | None = None) -> Transcript:
    info = info if isinstance(info, dict) else {}
    _clean_outputs(t)
    if t.format == "swe-agent":  # (mini-swe-agent runs plain shell commands: no open file to follow)
        _follow_open_file(t)
    t.cwd = t.cwd or history_cwd
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
    """The trajectory is read a step at a time (json_walk): a long run's steps are never parsed whole."""
    what = "not a JSON object (a SWE-agent .traj file is one)"
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat(what)
    t = Transcript(format="swe-agent", source=src.path)
    steps = _Steps(t)
    try:
        doc = walk(src.path, {"", "trajectory"}, lambda at, step: steps.add(step) if at else None)
    except Broken:
        raise NotThisFormat(what) from None
    if not isinstance(doc, dict):
        raise NotThisFormat(what)
    history = doc.get("history")
    if doc.get("trajectory") is not STREAMED and not isinstance(history, list):
        raise NotThisFormat("no `trajectory` or `history` list (a SWE-agent .traj file)")
    users = [m for m in history or [] if isinstance(m, dict) and m.get("role") == "user" and not is_demonstration(m)]
    prompt = next((m for m in users if m.get("agent") in ("primary", "main")), users[0] if users else None)
    if prompt is not None:
        t.entries.insert(0, Message("user", issue_of(_text(prompt.get("content")))))
    if not steps.count:  # a demonstration: the history alone (function calling: tool_calls, role tool)
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
    info = doc.get("info")
    if not _submitted(info):  # (the submission, when the run recorded one, is the answer whatever `submit` printed)
        _submission_from_submit(t)
    return _finish(t, info, _cwd_in_history(history))


class _Steps:
    """SWE-agent's trajectory steps into the timeline as they come: its thought, then its command and what
    the command printed."""

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.count = 0  # steps seen, of any shape

    def add(self, step: Any) -> None:
        k, entries = self.count, self.t.entries
        self.count += 1
        if not isinstance(step, dict):
            return
        thought = step.get("thought") or step.get("response")
        if isinstance(thought, str) and thought and not thought.isspace():
            entries.append(Message("assistant", thought, kind="thinking"))
        action = step.get("action")
        if isinstance(action, str) and action.strip():
            entries.append(ToolCall(f"step-{k}", "bash", {"command": action.strip()}))
            entries.append(ToolResult(f"step-{k}", _text(step.get("observation"))))


def _submitted(info: Any) -> bool:
    submission = info.get("submission") if isinstance(info, dict) else None
    return isinstance(submission, str) and bool(submission.strip())


_CWD = re.compile(r"\(Current directory: (/[^\n)]*)\)")


def _cwd_in_history(history: Any) -> str | None:
    """Where the agent worked, as the terminal's footer in the history says it ("(Current directory: /repo)")."""
    for m in history if isinstance(history, list) else []:
        found = _CWD.search(_text(m.get("content"))) if isinstance(m, dict) and not is_demonstration(m) else None
        if found:
            return found.group(1)
    return None


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
    """The messages are read one at a time (json_walk): a long run's trajectory is never parsed whole."""
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON object (a mini-swe-agent .traj.json file is one)")
    t = Transcript(format="mini-swe-agent", source=src.path)
    reader = _MiniMessages(t)
    try:
        doc = walk(src.path, {"", "messages"}, lambda _, m: reader.add(m))
    except Broken:
        raise NotThisFormat("not a JSON object (a mini-swe-agent .traj.json file is one)") from None
    if doc is STREAMED:
        doc = {"messages": STREAMED, "info": {}}
    if not isinstance(doc, dict):
        raise NotThisFormat("not a JSON object (a mini-swe-agent .traj.json file is one)")
    if doc.get("messages") is not STREAMED or not reader.count:
        raise NotThisFormat("no `messages` list (a mini-swe-agent .traj.json file)")
    if "trajectory_format" not in doc and not isinstance(doc.get("info"), dict):
        raise NotThisFormat("no `trajectory_format` or `info` beside `messages`")
    if not _submitted(doc.get("info")):
        _submission_from_submit(t)
    return _finish(t, doc.get("info"))


class _MiniMessages:
    """mini-swe-agent's messages into the timeline as they come: a ```bash block is a command, the harness's
    `<returncode>` answer its result, the first user message the issue."""

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.count = 0
        self.pending: str | None = None  # the id of the command the next harness message answers
        self.first_user = True
        self.fn_ids: list[str] = []

    def add(self, m: Any) -> None:
        k, t = self.count, self.t
        self.count += 1
        if not isinstance(m, dict):
            return
        role = m.get("role")
        if m.get("tool_calls") or role == "tool":
            add_chat_message(t, m, self.fn_ids)
            return
        text = _text(m.get("content"))
        if role == "assistant":
            t.entries.append(Message("assistant", text))
            block = _BASH.findall(text)
            if block:
                self.pending = f"cmd-{k}"
                t.entries.append(ToolCall(self.pending, "bash", {"command": block[-1].strip()}))
        elif role == "user" and (self.pending is not None or _HARNESS.match(text)) and not self.first_user:
            code, output = _returned(text)
            t.entries.append(ToolResult(self.pending or f"note-{k}", output, is_error=code != 0))
            self.pending = None
        elif role == "user":
            t.entries.append(Message("user", issue_of(text) if self.first_user else text))
            self.first_user = False
        elif role == "system":
            t.entries.append(Message("system", text))
