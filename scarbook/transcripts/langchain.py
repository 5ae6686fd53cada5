"""LangChain and LangGraph transcripts: messages as LangChain writes them (`type: human | ai | tool | system`,
an AI message's `tool_calls` with `args` as an object, a tool message's `tool_call_id`), in each of the
shapes people save them in:

- a bare list of messages (`[m.model_dump() for m in state["messages"]]`, `messages_to_dict`'s
  `{"type": "human", "data": {...}}`, `dumpd`'s `{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
  "kwargs": {...}}`);
- a graph's state or result (`{"messages": [...]}`), or the LangGraph API's thread state (`{"values":
  {"messages": [...]}, "created_at": ...}`);
- a LangSmith run exported as JSON (`run_type`, `inputs`, `outputs`, `child_runs`): a graph run's
  `outputs.messages`, a chat model run's `inputs.messages` and `outputs.generations`, or an AgentExecutor's
  `inputs.input`, its tool runs and `outputs.output`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import Broken, walk
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, date_of, shared_names
from scarbook.transcripts.openai import part_text
from scarbook.transcripts.source import Source

FORMAT = "langchain"
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool",
          "chat": "chat", "HumanMessageChunk": "user", "AIMessageChunk": "assistant",
          "SystemMessageChunk": "system", "ToolMessageChunk": "tool", "ChatMessageChunk": "chat"}
_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
            "FunctionMessage": "function", "ChatMessage": "chat", **{k: k for k in _ROLES if k.endswith("Chunk")}}
# what marks a LangChain message in a file's head: its type, or its serialised class
HEAD_MARK = re.compile(rb'"type"\s*:\s*"(?:human|ai)"|"lc"\s*:\s*1\s*,|"run_type"\s*:\s*"(?:chain|llm|tool)"')
_LISTS = {"", "messages", "values.messages", "outputs.messages"}


def parse(src: Source) -> Transcript:
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON document")
    t = Transcript(format=FORMAT, source=src.path)
    streamed = [0]

    def on_item(path: str, item: Any) -> None:
        _add_message(t, _message(item, f"{path or 'the list'}[{streamed[0]}]"))
        streamed[0] += 1

    try:
        value = walk(src.path, _LISTS, on_item)
    except Broken:
        raise NotThisFormat("not a JSON document") from None
    if isinstance(value, dict):
        _add_run(t, value, streamed[0])
    if not any(isinstance(e, Message) and e.role == "user" for e in t.entries):
        raise NotThisFormat("no human message (type: human) to be the task")
    return finish_transcript(t)


def _message(item: Any, where: str) -> dict[str, Any]:
    """One message as a flat dict with `type` (human, ai, ...), whichever way it was serialised."""
    if isinstance(item, dict) and item.get("lc") == 1 and isinstance(item.get("kwargs"), dict):
        name = ids[-1] if isinstance(ids := item.get("id"), list) and ids else ""
        return {**item["kwargs"], "type": item["kwargs"].get("type") or _CLASSES.get(str(name), "")}
    if isinstance(item, dict) and isinstance(item.get("data"), dict) and set(item) <= {"type", "data"}:
        return {**item["data"], "type": item["data"].get("type") or item.get("type")}
    if isinstance(item, dict) and item.get("type") in _ROLES and "content" in item:
        return item
    raise NotThisFormat(f"{where} is not a LangChain message (type one of human, ai, tool, system, with content)")


def _add_message(t: Transcript, m: dict[str, Any]) -> None:
    role = _ROLES.get(str(m.get("type")), "")
    if role == "chat":
        role = "assistant" if m.get("role") in ("assistant", "ai") else str(m.get("role") or "user")
    content = m.get("content")
    if role == "tool":
        t.entries.append(ToolResult(str(m.get("tool_call_id") or m.get("name") or ""), _text(content),
                                    is_error=m.get("status") == "error"))
        return
    blocks = content if isinstance(content, list) else []
    thinking = "\n".join(str(b.get("thinking") or "") for b in blocks if isinstance(b, dict) and b.get("type") == "thinking")
    if thinking.strip():
        t.entries.append(Message("assistant", thinking, kind="thinking"))
    text = _text(content)
    calls = m.get("tool_calls") or [
        {"id": b.get("id"), "name": b.get("name"), "args": b.get("input")}
        for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    if text or not calls:
        t.entries.append(Message(role, text))
    for call in calls:
        if isinstance(call, dict):
            args = call.get("args")
            t.entries.append(ToolCall(str(call.get("id") or ""), str(call.get("name") or ""),
                                      shared_names(args) if isinstance(args, dict) else {"input": args}))
    meta = r if isinstance(r := m.get("response_metadata"), dict) else {}
    t.model = meta.get("model_name") or meta.get("model") or t.model
    usage = m.get("usage_metadata")
    if isinstance(usage, dict):
        t.usage = t.usage or Usage()
        t.usage.add(Usage(input_tokens=int(usage.get("input_tokens") or 0),
                          output_tokens=int(usage.get("output_tokens") or 0)))


def _text(content: Any) -> str:
    """A message's words: its text, and its blocks' text (a tool_use or thinking block is said elsewhere)."""
    if content is None:
        return ""
    if not isinstance(content, list):
        return part_text(content)
    return "\n".join(part_text(b) for b in content
                     if not (isinstance(b, dict) and b.get("type") in ("tool_use", "thinking", "redacted_thinking")))


def _add_run(t: Transcript, run: dict[str, Any], streamed: int) -> None:
    """What a document that is not a bare list adds: a LangSmith run's messages, prompt and answer; its date."""
    t.date = date_of(run.get("end_time") or run.get("start_time") or run.get("created_at"))
    if streamed or "run_type" not in run:
        return
    inputs = i if isinstance(i := run.get("inputs"), dict) else {}
    outputs = o if isinstance(o := run.get("outputs"), dict) else {}
    prompt = inputs.get("messages")
    if isinstance(prompt, list):  # a chat model run: a batch of message lists; the first is the call's
        first = prompt[0] if prompt and isinstance(prompt[0], list) else prompt
        for i, item in enumerate(first):
            _add_message(t, _message(item, f"inputs.messages[{i}]"))
        generations = outputs.get("generations")
        if isinstance(generations, list) and generations:
            gen = generations[0][0] if isinstance(generations[0], list) and generations[0] else generations[0]
            if isinstance(gen, dict) and gen.get("message") is not None:
                _add_message(t, _message(gen["message"], "outputs.generations[0][0].message"))
            elif isinstance(gen, dict):
                t.entries.append(Message("assistant", str(gen.get("text") or "")))
        return
    task = inputs.get("input", inputs.get("question"))
    if isinstance(task, str):
        t.entries.append(Message("user", task))
    _add_tool_runs(t, run.get("child_runs"))
    answer = outputs.get("output", outputs.get("answer"))
    if isinstance(answer, str):
        t.entries.append(Message("assistant", answer))


def _add_tool_runs(t: Transcript, runs: Any) -> None:
    """An AgentExecutor's tool runs, depth first in the order they ran: each a call and its result."""
    for run in runs if isinstance(runs, list) else []:
        if not isinstance(run, dict):
            continue
        if run.get("run_type") == "tool":
            cid = str(run.get("id") or f"tool-{len(t.entries)}")
            t.entries.append(ToolCall(cid, str(run.get("name") or ""), _tool_args(run.get("inputs"))))
            outputs = run.get("outputs")
            out = outputs.get("output") if isinstance(outputs, dict) else outputs
            t.entries.append(ToolResult(cid, _text(out) if out is not None else str(run.get("error") or ""),
                                        is_error=bool(run.get("error"))))
        _add_tool_runs(t, run.get("child_runs"))


def _tool_args(inputs: Any) -> dict[str, Any]:
    """A tool run's arguments: its inputs, or the one `input` they hold (a JSON object written as a string)."""
    if not isinstance(inputs, dict):
        return {}
    if set(inputs) != {"input"}:
        return shared_names(inputs)
    value = inputs["input"]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"input": inputs["input"]}
    return shared_names(value) if isinstance(value, dict) else {"input": value}


def looks_like_langchain(head: bytes) -> bool:
    return HEAD_MARK.search(head) is not None
