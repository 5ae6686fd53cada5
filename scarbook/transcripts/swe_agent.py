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
from scarbook.transcripts.text import between

# (OpenHands' SWE-bench instruction wraps the issue in <issue_description>)
_ISSUE_TAGS = (("<pr_description>", "</pr_description>"), ("<issue>", "</issue>"),
               ("<issue_description>", "</issue_description>"))
_ISSUE_HEAD = re.compile(r"ISSUE:[^\S\n]*\n")  # SWE-agent's older prompt: ISSUE: ending its line …
_ISSUE_TAIL = re.compile(r"(?<!\s)\s+INSTRUCTIONS:")  # … to INSTRUCTIONS: opening a later one (a run tried once)
_PREAMBLE = re.compile(r"\A(?:Consider the following PR description:|Here's the issue text:)\s*", re.S)
# The blanks before a block's first line are taken up to their last newline once and for all (an atomic group):
# `\s*\n` alone went back to try each blank line of a long run against the rest of the message (quadratic: 4 s
# at 16,000 blank lines after an unclosed fence, in one C call that lets no other thread run). It finds what
# it found: a block that does not close after the last newline closes after none of the earlier ones.
_BASH = re.compile(r"```(?:bash|sh|shell|mswea_bash_command)?(?>\s*\n)(.*?)```", re.S)
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
    start, end = m.end() + 8, -1
    if text.startswith("<output>", m.end()):
        # the first "</output>" after it: the last, unless a "<" stands before that (one test for one character
        # instead of a search for the tag through the whole output)
        end = text.rfind("</output>", start)
        first_tag = text.find("<", start, end) if end >= 0 else -1
        end = text.find("</output>", first_tag) if first_tag >= 0 else end
    return int(m.group(1)), text[start:end].strip() if end >= 0 else text


def issue_of(prompt: str) -> str:
    """The issue an instance prompt wraps (<pr_description>, <issue_description>, ISSUE: … INSTRUCTIONS:), else
    the prompt."""
    for opening, closing in _ISSUE_TAGS:
        issue = between(prompt, opening, closing)
        if issue:
            return _PREAMBLE.sub("", issue)
    issue = _issue_block(prompt)
    return _PREAMBLE.sub("", issue) if issue else prompt.strip()


def _issue_block(prompt: str) -> str | None:
    """The text from `ISSUE:` (the rest of its line blank) to `INSTRUCTIONS:` at the start of a later line
    (after blanks), stripped. Linear: `ISSUE:\\s*\\n(.*?)\\n\\s*INSTRUCTIONS:` took cubic time on a long
    run of blank lines after `ISSUE:` (16 s at 2,000)."""
    head = _ISSUE_HEAD.search(prompt)
    if head is None:
        return None
    rest = prompt[head.end():]  # (the newline ending INSTRUCTIONS:'s blanks is another than ISSUE:'s)
    tail = next((m for m in _ISSUE_TAIL.finditer(rest) if "\n" in m.group()), None)
    return rest[:tail.start()].strip() if tail is not None else None


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
    at = _last_open_file(text)
    if at < 0:
        return None
    return _FOOTER.search(text, max(text.rfind("\n", 0, at), 0))


def _last_open_file(text: str) -> int:
    """Where the last "(Open file: " starts (-1: nowhere). The footer's is among the last few "(": those are
    looked at first, each found by a search for one character (a tenth of the time a search for the words
    takes through an output that has none)."""
    end = len(text)
    for _ in range(3):
        at = text.rfind("(", 0, end)
        if at < 0:
            return -1
        if text.startswith("(Open file: ", at):
            return at
        end = at
    return text.rfind("(Open file: ", 0, end + len("(Open file: ") - 1)


def _clean_output(text: str) -> tuple[str, str | None]:
    """SWE-agent's terminal: each output ends with "(Open file: …)\\n(Current directory: …)\\nbash-$" and
    its lines with CRLF. (What the command printed, the absolute directory the footer says the agent stood in.)"""
    text = text.replace("\r\n", "\n") if "\r" in text else text
    m = _footer(text) if "(" in text else None  # (a footer opens with one: most outputs are told by that test)
    if m is None:
        return text, None
    cwd = m.group("cwd")
    return text[:m.start()], cwd if cwd.startswith("/") else None


def _clean_outputs(t: Transcript) -> None:
    """Every output as the command printed it; the cwd the first footer names (see _clean_output)."""
    for r in t.tool_results:
        r.text, cwd = _clean_output(r.text)
        t.cwd = t.cwd or cwd


class _OpenFile:
    """SWE-agent's `edit` changes the file it has open: name it on each edit call (`ToolCall.target`). The
    file opened or created last is the open one; an `open` of a relative path whose window names the
    absolute one also says where the agent worked (`cwd`, the first such)."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.cwd: str | None = None

    def follow(self, call: ToolCall, result: ToolResult | None) -> None:
        command = call.input.get("command") if call.name == "bash" else None
        words = command.split(maxsplit=2) if isinstance(command, str) else []
        verb = call.name if call.name in ("open", "create", "edit") else words[0] if words else ""
        if verb in ("open", "create"):
            named = call.input.get("path") if call.name == verb else words[1] if len(words) > 1 else None
            if not isinstance(named, str):
                return
            named = named.strip("'\"")
            shown = window_path(result.text) if result is not None else None
            self.path = shown if shown and shown.startswith("/") else named
            if self.cwd is None and shown and shown.startswith("/") and not named.startswith("/") \
                    and shown.endswith("/" + named):
                self.cwd = shown[: -len(named) - 1] or "/"
        elif verb == "edit" and self.path is not None:
            call.target = self.path


def _follow_open_file(t: Transcript) -> None:
    """The open file named on each edit call of a timeline, in order (see _OpenFile)."""
    results = {r.call_id: r for r in t.tool_results}
    open_file = _OpenFile()
    for call in t.tool_calls:
        open_file.follow(call, results.get(call.id))
    t.cwd = t.cwd or open_file.cwd


def _finish(t: Transcript, info: Any, history_cwd: str | None = None, *, cleaned: bool = False) -> Transcript:
    """`cleaned`: the parser has already cleaned each output and followed the open file, as it read them."""
    info = info if isinstance(info, dict) else {}
    if not cleaned:
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
        doc = walk(src.path, {"", "trajectory"}, steps.add)
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
    if not steps.count:
        if not _submitted(info):  # (the submission, when the run recorded one, is the answer whatever `submit` printed)
            _submission_from_submit(t)
        return _finish(t, info, _cwd_in_history(history))
    if not _submitted(info) and steps.submit_output and not steps.submit_output.isspace():
        t.final_answer = steps.submit_output  # (as printed, footer and all: what _submission_from_submit takes)
    t.cwd = steps.footer_cwd or steps.open_file.cwd
    return _finish(t, info, _cwd_in_history(history), cleaned=True)


class _Steps:
    """SWE-agent's trajectory steps into the timeline as they come: its thought, then its command and what
    the command printed — cleaned of the terminal's footer, the open file followed, the last `submit`'s output
    kept, each as the step comes (one pass: no later walk of the timeline for each)."""

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.count = 0  # steps seen, of any shape
        self.open_file = _OpenFile()
        self.footer_cwd: str | None = None  # the first absolute cwd a footer names
        self.submit_output: str | None = None  # what the last `submit` printed, as it printed it

    def add(self, at: str, step: Any) -> None:
        """One step of `trajectory` (walk's on_item; a document that is itself a list is no trajectory)."""
        if not at:
            return
        k, entries = self.count, self.t.entries
        self.count += 1
        if not isinstance(step, dict):
            return
        thought = step.get("thought") or step.get("response")
        if isinstance(thought, str) and thought and not thought.isspace():
            entries.append(Message("assistant", thought, kind="thinking"))
        action = step.get("action")
        if isinstance(action, str) and action and not action.isspace():
            step_id, command = f"step-{k}", action.strip()  # (one id string for the call and its result)
            call = ToolCall(step_id, "bash", {"command": command})
            output = _text(step.get("observation"))
            if command == "submit" or _SUBMIT in command:
                self.submit_output = output
            text, cwd = _clean_output(output)
            result = ToolResult(step_id, text)
            entries.append(call)
            entries.append(result)
            self.footer_cwd = self.footer_cwd or cwd
            self.open_file.follow(call, result)


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


def _submission_from_submit(t: Transcript, printed: dict[int, str] | None = None) -> None:
    """No `info.submission`: the output of the run's `submit` (SWE-agent) or of the command that said
    COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT (mini-swe-agent) is what the run submitted, as it was printed
    (`printed`: by id of each result, the outputs the footer's cleaning changed)."""
    results = {r.call_id: r for r in t.tool_results}
    for call in reversed(t.tool_calls):
        text = " ".join(str(v) for v in call.input.values())
        if call.name == "submit" or text.strip() == "submit" or _SUBMIT in text:
            result = results.get(call.id)
            output = None if result is None else (printed or {}).get(id(result), result.text)
            if output is not None and output.strip():
                t.final_answer = output
            return


def parse_mini(src: Source) -> Transcript:
    """The messages are read one at a time (json_walk): a long run's trajectory is never parsed whole."""
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON object (a mini-swe-agent .traj.json file is one)")
    t = Transcript(format="mini-swe-agent", source=src.path)
    reader = _MiniMessages(t)
    try:
        doc = walk(src.path, {"", "messages"}, reader.add)
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
        _submission_from_submit(t, reader.printed)
    t.cwd = reader.footer_cwd
    return _finish(t, doc.get("info"), cleaned=True)


class _MiniMessages:
    """mini-swe-agent's messages into the timeline as they come: a ```bash block is a command, the harness's
    `<returncode>` answer its result, the first user message the issue."""

    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.count = 0
        self.pending: str | None = None  # the id of the command the next harness message answers
        self.first_user = True
        self.fn_ids: list[str] = []
        self.footer_cwd: str | None = None  # the first absolute cwd a footer names
        self.printed: dict[int, str] = {}  # by id of each result, an output the footer's cleaning changed

    def _cleaned(self, result: ToolResult) -> ToolResult:
        """A result as the command printed it, cleaned as it comes (not in a later walk of every result)."""
        text, cwd = _clean_output(result.text)
        if text is not result.text:
            self.printed[id(result)] = result.text
            result.text = text
        self.footer_cwd = self.footer_cwd or cwd
        return result

    def add(self, _at: str, m: Any) -> None:
        """One message (walk's on_item: a long run has hundreds of thousands, so each costs as little as it can)."""
        k = self.count
        self.count = k + 1
        if not isinstance(m, dict):
            return
        role = m.get("role")
        if m.get("tool_calls") or role == "tool":
            entries = self.t.entries
            n = len(entries)
            add_chat_message(self.t, m, self.fn_ids)
            for e in entries[n:]:
                if isinstance(e, ToolResult):
                    self._cleaned(e)
            return
        content = m.get("content")
        text = content if isinstance(content, str) else content_text(content)
        entries = self.t.entries
        if role == "assistant":
            entries.append(Message("assistant", text))
            block = _BASH.findall(text) if "```" in text else None
            if block:
                self.pending = pending = f"cmd-{k}"
                entries.append(ToolCall(pending, "bash", {"command": block[-1].strip()}))
        elif role == "user" and not self.first_user and (self.pending is not None or _HARNESS.match(text)):
            code, output = _returned(text)
            entries.append(self._cleaned(ToolResult(self.pending or f"note-{k}", output, code != 0)))
            self.pending = None
        elif role == "user":
            entries.append(Message("user", issue_of(text) if self.first_user else text))
            self.first_user = False
        elif role == "system":
            entries.append(Message("system", text))
