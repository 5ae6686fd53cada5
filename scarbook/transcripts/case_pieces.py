"""From a transcript to the pieces of a case: candidate artifacts, the task, seed files.

Candidates are numbered from 1 in a stable order: the final answer, then each file the agent
wrote (final content, in order of last write; files known only by their edits are marked
partial), then each tool result in timeline order, then each tool call's input text in timeline
order (a text field of at least `MIN_INPUT_CHARS`: a PR body sent through an MCP tool, a shell
command line; not a file tool's, whose content is the file's candidate) — last, so the numbers the
others had stay theirs. After them, the shorter texts of fields that hold prose (`PROSE_FIELDS`: a PR's
title, a chat message), in timeline order: the incident may be a 25-character title, while a short path,
flag or branch name is none.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from scarbook.transcripts.files import file_operations, is_absolute, is_shell, relative_path
from scarbook.transcripts.model import TODO_TOOL, Message, ToolCall, ToolResult, Transcript, paused_gc
from scarbook.transcripts.text import (
    PLACEHOLDER,
    human_size,
    is_command,
    preview,
    strip_ansi,
    strip_harness,
    well_formed,
)

CandidateKind = Literal["final_answer", "file", "plan", "todo", "tool_result", "tool_input"]
_KIND_LABEL = {"final_answer": "answer", "file": "file", "plan": "plan", "todo": "to-do list",
               "tool_result": "tool result", "tool_input": "tool input"}
MIN_INPUT_CHARS = 40  # a tool call's input text shorter than this (a path, a flag, `ls`) is not offered
# ... unless its field holds prose: offered after every longer input (a PR's title, a Slack message)
PROSE_FIELDS = frozenset({"body", "caption", "comment", "content", "message", "msg", "note", "reply",
                          "subject", "summary", "text", "title"})
_PLAN_TOOLS = {"ExitPlanMode", "exit_plan_mode"}


@dataclass(slots=True)
class Candidate:
    number: int
    kind: CandidateKind
    label: str
    content: str
    path: str | None = None  # the workspace path, for a file artifact
    partial: bool = False  # a file known only by its edits (the original is not in the transcript)
    entry: int = -1  # where in the timeline it was produced (its turn is the one before it)
    preamble: bool = False  # an answer that is only the words before tool calls the log ends with
    astray: bool = False  # a file outside the root and outside every cwd the log names (~/.claude/memory/…)
    summary: bool = False  # a compaction's summary: the answer it was asked for, the default before any file
    tool_input: tuple[str, str] | None = None  # (tool, field) of a tool call's input: case.yaml's {tool, field}

    def __post_init__(self) -> None:
        # what the draft writes and every screen shows: half a character the log cut is read as U+FFFD
        self.content, self.label = well_formed(self.content), well_formed(self.label)
        self.path = well_formed(self.path) if self.path is not None else None

    @property
    def made_by_agent(self) -> bool:
        """Something the agent handed in (an answer, a file, a plan), not a tool's output or its words
        before a tool call: what a draft files when the user names no artifact. A tool call's input (what the agent
        sent: a PR body) is filed only when the user names it, and so is a to-do list (the agent's account of its
        progress, beside the work it did)."""
        return self.kind not in ("tool_result", "tool_input", "todo") and not self.preamble


def describe_call(call: ToolCall | None, cwd: str | None = None) -> str:
    """A short name for a tool call: "Read README.md", "Bash: ls -la"."""
    if call is None:
        return "unknown tool"
    return _describe(_what_names(call), cwd)


def _what_names(call: ToolCall) -> tuple[str, str | None, str | None]:
    """What a call's short name is made of: (its tool, the path it acts on, or the words of its input that say
    what it did)."""
    ops = () if is_shell(call) else file_operations(call)  # a shell command is named by its command line
    if ops:
        return call.name, ops[0].path, None
    for key in ("command", "cmd", "query", "pattern", "url"):
        value = call.input.get(key)
        if isinstance(value, str):
            return call.name, None, value
    return call.name, None, None


def _describe(parts: tuple[str, str | None, str | None], cwd: str | None) -> str:
    name, path, words = parts
    if path is not None:
        return f"{name} {relative_path(path, cwd)}"
    return f"{name}: {preview(words, 40)}" if words is not None else name


def candidates(t: Transcript) -> list[Candidate]:
    """Every candidate artifact, numbered (worked out once for a timeline and its files)."""
    key = (id(t.entries), len(t.entries), id(t.files_written), t.root, t.final_answer)
    cached = t.memo.get("candidates")
    if cached is not None and cached[0] == key:
        return list(cached[1])
    with paused_gc():
        out = _candidates(t)
    t.memo["candidates"] = (key, out)
    return list(out)


def _candidates(t: Transcript) -> list[Candidate]:
    out: list[Candidate] = []

    def add(kind: CandidateKind, label: str, content: str, path: str | None = None, partial: bool = False,
            entry: int = -1) -> None:
        out.append(Candidate(len(out) + 1, kind, label, content, path, partial, entry))

    if t.final_answer is not None and t.final_answer.strip():
        whole = t.format == "plain" and not t.entries  # a log with no shape to read: all of it is the answer
        add("final_answer", "plain text (the whole log)" if whole else "final answer", t.final_answer,
            entry=_answer_entry(t))
        out[-1].preamble = t.preamble
        out[-1].summary = t.compaction
    for f in t.files_written:
        if f.content is not None:
            add("file", f"file {f.path} (final content)", f.content, f.path, entry=f.entry)
        elif f.fragments:
            why = "original unknown" if f.note.endswith("not in the transcript") else "could not replay them"
            add("file", f"file {f.path} (edits only, {why})", "\n".join(f.fragments), f.path, partial=True,
                entry=f.entry)
        else:
            continue
        out[-1].astray = is_absolute(f.path) and all(relative_path(f.path, cwd) == f.path for cwd in t.cwds)
    calls: dict[str, ToolCall] = {}  # (the last of an id wins)
    plans: list[int] = []
    for i, e in enumerate(t.entries):
        if isinstance(e, ToolCall):
            calls[e.id] = e
            if e.name in _PLAN_TOOLS or e.name == TODO_TOOL:
                plans.append(i)
    results = {r.call_id: r for r in t.tool_results} if plans else {}
    for i in plans:  # the plan the agent proposed: in plan mode, its whole work
        e = t.entries[i]
        assert isinstance(e, ToolCall)
        if e.name == TODO_TOOL:
            items = [x for x in e.input.get("items") or [] if isinstance(x, dict)]
            if items:
                done = sum(x.get("completed") is True for x in items)
                add("todo", f"to-do list ({done} of {len(items)} done)",
                    "\n".join(f"[{'x' if x.get('completed') is True else ' '}] {x.get('text', '')}" for x in items),
                    entry=i)
        elif isinstance(e.input.get("plan"), str) and e.input["plan"].strip():
            result = results.get(e.id)
            add("plan", f"plan ({e.name}{', rejected' if result is not None and result.is_error else ''})",
                e.input["plan"], entry=i)
    # A long log runs the same commands on the same files again and again: each label is made once and shared.
    labels: dict[tuple[tuple[str, str | None, str | None] | None, bool], str] = {}
    cwd = t.root or t.cwd
    for i, r in enumerate(t.entries):
        if not isinstance(r, ToolResult) or not r.text or r.text.isspace():  # (strip() copied every output)
            continue
        call = calls.get(r.call_id)
        key = (_what_names(call) if call is not None else None, r.is_error)
        label = labels.get(key)
        if label is None:
            name = _describe(key[0], cwd) if key[0] is not None else "unknown tool"
            label = labels[key] = f"result of {name}{' (error)' if r.is_error else ''}"
        out.append(Candidate(len(out) + 1, "tool_result", label, r.text, None, False, i))
    for short in (False, True):
        for i, e in enumerate(t.entries):
            if isinstance(e, ToolCall) and e.name not in _PLAN_TOOLS and e.name != TODO_TOOL:
                for name, text in _input_texts(e, short):
                    out.append(Candidate(len(out) + 1, "tool_input", f"input of {e.name}: {name}", text, entry=i,
                                         tool_input=(e.name, name)))
    return out


def _input_texts(call: ToolCall, short: bool = False) -> list[tuple[str, str]]:
    """The text fields of a call's input worth filing (at least MIN_INPUT_CHARS): a shell call's command line, any
    other tool's text fields — none of a tool that writes files (its content is the file's candidate). With
    `short`, the shorter ones of those fields that hold prose (PROSE_FIELDS; not a shell call's)."""
    if is_shell(call):
        keys: tuple[str, ...] = () if short else ("command", "cmd")
    elif file_operations(call):
        return []
    else:
        keys = tuple(k for k in call.input if isinstance(k, str) and (not short or k.lower() in PROSE_FIELDS))
    return [(k, v) for k in keys if isinstance(v := call.input.get(k), str) and v.strip()
            and (len(v.strip()) < MIN_INPUT_CHARS) == short]


def _answer_entry(t: Transcript) -> int:
    for i in range(len(t.entries) - 1, -1, -1):
        m = t.entries[i]
        if isinstance(m, Message) and m.role == "assistant" and m.text == t.final_answer:
            return i
    return len(t.entries)


def default_artifact(cands: list[Candidate]) -> int:
    """The candidate to pick when the user names none: the file written last (inside the root), else the
    answer or the plan (whichever came later), else a file known only by its edits (a part of a file is a
    poor artifact), else a file outside every folder the agent worked in (memory, a temp file: no check
    can name it). A preamble or a tool result only when nothing else is there (`Candidate.made_by_agent`
    says the draft must then ask)."""
    picks = (lambda: [c for c in cands if c.summary],  # (each looked through only when those before found none)
             lambda: [c for c in cands if c.kind == "file" and not c.partial and not c.astray],
             lambda: sorted((c for c in cands if c.kind in ("final_answer", "plan") and not c.preamble),
                            key=lambda c: c.entry),
             lambda: [c for c in cands if c.kind == "file" and not c.astray],
             lambda: [c for c in cands if c.kind == "file"])
    for pick in picks:
        found = pick()
        if found:
            return found[-1].number
    return cands[0].number if cands else 1


@dataclass(slots=True)
class Turn:
    """One prompt of the user and what followed it, up to the next prompt."""

    number: int  # from 1
    entry: int  # the prompt's index in the timeline
    prompt: str


def turns(t: Transcript) -> list[Turn]:
    """The user's prompts in the main conversation (not a subagent's; not slash commands, harness
    messages or attachments alone), in order. Computed once a timeline (a draft asks for them many times)."""
    key = (id(t.entries), len(t.entries))
    cached = t.memo.get("turns")
    if cached is not None and cached[0] == key:
        return list(cached[1])
    out = _turns(t)
    t.memo["turns"] = (key, out)
    return list(out)


def _turns(t: Transcript) -> list[Turn]:
    out: list[Turn] = []
    for i, m in enumerate(t.entries):
        if isinstance(m, Message) and m.role == "user" and m.kind == "text" and not m.sidechain and m.text and \
                not m.text.isspace():
            # an attached image cannot be replayed as a task: keep only the words
            words = [line for line in strip_harness(clean_task(m.text)).splitlines()
                     if not PLACEHOLDER.match(line.strip())]
            task = "\n".join(words).strip()
            if task and not is_command(task):
                out.append(Turn(len(out) + 1, i, task))
    return out


def turn_of(t: Transcript, entry: int, all_turns: list[Turn] | None = None) -> int | None:
    """The number of the turn whose prompt came last before timeline index `entry`."""
    found = all_turns if all_turns is not None else turns(t)
    k = bisect.bisect_right([turn.entry for turn in found], entry)  # the turns are in timeline order
    return found[k - 1].number if k else None


def suggest_task(t: Transcript, turn: int | None = None) -> str:
    """The prompt of turn `turn` (default: the first thing the user asked)."""
    all_turns = turns(t)
    if not all_turns:
        return ""
    return all_turns[(turn or 1) - 1].prompt if 1 <= (turn or 1) <= len(all_turns) else ""


# A prompt that only makes sense with what came before it: "continue", "go on", "fix it", "yes".
_FOLLOW_UP = re.compile(
    r"\A(?:please\s+)?(?:continue|go on|go ahead|keep going|carry on|proceed|resume|next|yes|yep|yeah|y|ok|okay|sure|"
    r"do it|do that|fix it|fix that|try again|again|retry|same|that'?s wrong|still (?:broken|failing|wrong)|"
    r"it (?:still )?(?:fails|failed|doesn'?t work)|didn'?t work|now do the rest|and the rest|finish it|"
    r"finish|complete it|go|lgtm|looks good)\b", re.I)


# A short prompt that corrects the one before ("actually, the parser first") or points back at what was
# said ("the context you asked for", "the word you just gave me"): it only makes sense with what came before.
_CORRECTION = re.compile(r"\A(?:actually|instead|wait|no,|oh,? and|also,)\b", re.I)
_BACK_REFERENCE = re.compile(r"\b(?:you (?:just |already )?(?:asked|gave|said|wrote|suggested|mentioned|proposed|"
                             r"made|did)|(?:as|like) (?:i|you) said|the above|as before)\b", re.I)


def is_follow_up(prompt: str) -> bool:
    """A prompt that continues the one before it rather than asking something new."""
    text = prompt.strip().rstrip(".!")
    words = len(text.split())
    return (words <= 8 and bool(_FOLLOW_UP.match(text))
            or words <= 15 and bool(_CORRECTION.match(text) or _BACK_REFERENCE.search(text)))


@dataclass
class TaskPick:
    text: str
    turns: list[int]  # the turns whose prompts make the task, in order

    one_input: bool = False  # joined because they are one model call's input

    @property
    def note(self) -> str:
        """What the draft says about a joined task ("" for one turn)."""
        if len(self.turns) < 2:
            return ""
        if self.one_input:
            return (f"the task joins turns {', '.join(map(str, self.turns))}: the model answered them as one input, "
                    "each message in the context of those before it")
        return (f"the task joins turns {', '.join(map(str, self.turns))}: turn {self.turns[-1]} only continues "
                f"turn {self.turns[0]}'s request")


# Formats whose timeline is what one model call was given (a request body, a recorded call, a traced
# call, an eval sample's input): every user message in it is context of the answer, not a separate request.
ONE_INPUT = frozenset({"anthropic-messages", "anthropic-stream", "openai-chat", "openai-responses", "http-cassette",
                       "otel", "inspect"})


def pick_task(t: Transcript, turn: int | None, *, exact: bool = False) -> TaskPick:
    """The task for turn `turn` (default 1): its prompt, or — when that prompt is a follow-up
    ("continue", "fix it") and `exact` is off — the request it follows and every turn since, each
    marked with its number. In a model call's input (`ONE_INPUT`) every earlier user message is part of
    the request the answer was given to, so they all join. `exact` (`--turn N`) is that one prompt alone."""
    all_turns = turns(t)
    number = turn or 1
    if not 1 <= number <= len(all_turns):
        return TaskPick("", [])
    one_input = t.format in ONE_INPUT
    if exact or not (one_input or is_follow_up(all_turns[number - 1].prompt)):
        return TaskPick(all_turns[number - 1].prompt, [number])
    start = 1 if one_input else number
    while start > 1 and is_follow_up(all_turns[start - 1].prompt):
        start -= 1
    chosen = all_turns[start - 1:number]
    if len(chosen) == 1:
        return TaskPick(chosen[0].prompt, [number])
    return TaskPick("\n\n".join(f"[turn {tn.number}] {tn.prompt}" for tn in chosen), [tn.number for tn in chosen],
                    one_input=one_input)


_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_task(text: str) -> str:
    """A task as a person wrote it: no `<system-reminder>` blocks the harness injected, no ANSI
    codes or raw control characters (tabs and newlines stay)."""
    text = strip_ansi(_REMINDER.sub("", text)).replace("\r\n", "\n")
    return well_formed(_CONTROL.sub("", text))


def format_candidates(cands: list[Candidate]) -> str:
    """The text `scarbook import PATH --list` prints: one numbered entry and a preview each."""
    if not cands:
        return "no candidate artifacts in this transcript"
    lines = []
    for c in cands:
        size = human_size(len(c.content.encode("utf-8")))
        lines.append(f"{c.number:>3}  {_KIND_LABEL[c.kind]:<11}  {c.label}  [{size}]")
        lines.append(f"     {preview(c.content, 72)}")
    return "\n".join(lines)
