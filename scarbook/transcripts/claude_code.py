"""Claude Code session logs (`~/.claude/projects/<dir>/<session>.jsonl`).

Each line is a record. `user` / `assistant` records embed a Messages API message and are linked
by `parentUuid`; an edited or rewound prompt leaves an abandoned branch, so the timeline follows
the chain back from the last record. One assistant message streamed as several blocks is written
as several records sharing `message.id`: they are merged into one message. `isSidechain` records
are a subagent's conversation (kept, marked, never the final answer or the task). `summary` and
`system` records are kept out of / at the side of the conversation. A last line cut off by a
crash is skipped with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.anthropic_api import add_content, add_usage
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.model import (
    Message,
    NothingToImport,
    NotThisFormat,
    ToolCall,
    ToolResult,
    Transcript,
    date_of,
)
from scarbook.transcripts.source import JsonLines, Source, truncation_warning
from scarbook.transcripts.subagents import read_as_subagent, summary_of
from scarbook.transcripts.text import PLACEHOLDER, command_args, is_command, strip_ansi

FORMAT = "claude-code"
# (the blanks before a block are taken from their start only, not again from each of them: quadratic)
_REMINDER = re.compile(r"(?:(?<!\s)\s*)?<system-reminder>.*?</system-reminder>\s*", re.S)
_SIDE_KINDS = {"system", "summary", "file-history-snapshot", "queue-operation"}
_NUMBERED = re.compile(r"^ *(\d+)(?:\t|\u2192)(.*)$")


def _is_record(r: dict[str, Any], loose: bool = False) -> bool:
    """A user or assistant record; `loose`: in a document of records (`{"loglines": [...]}`, a JSON
    array) the ids may be missing, as exporters drop them."""
    return r.get("type") in ("user", "assistant") and isinstance(r.get("message"), dict) and (
        loose or "uuid" in r or "parentUuid" in r or "sessionId" in r or "session_id" in r)


def is_record_like(value: Any) -> bool:
    """A Claude Code record of any kind (session log, stream-json, the web export's loglines)."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    return _is_one_record(value) or (kind in ("user", "assistant") and isinstance(value.get("message"), dict)) or (
        kind == "system" and value.get("subtype") == "init" and "session_id" in value)


def _is_one_record(value: Any) -> bool:
    """A file of one Claude Code record (a log cut after its first line, a stream that only started)."""
    return isinstance(value, dict) and (_is_record(value) or isinstance(value.get("type"), str)
                                        and value["type"] in _SIDE_KINDS and any(
        k in value for k in ("uuid", "sessionId", "session_id", "leafUuid")))


def _parent(r: dict[str, Any]) -> str | None:
    return r.get("parentUuid") or r.get("logicalParentUuid")


def _active_uuids(rows: list[dict[str, Any]], parent_of: dict[str, str | None]) -> tuple[set[str] | None, bool]:
    """(uuids on the chain from the last main record back to its root, whether records link by
    parent at all). The set is None when the chain does not describe the file (records without uuid
    or parent, as older versions, exported samples and `claude -p` streams write them; or a parent
    outside this file): then file order is the timeline."""
    main = [r for r in rows if not r["side"]]
    linked = any(r["parent"] is not None for r in main)
    if not main or any(not isinstance(r["uuid"], str) for r in main) or sum(r["parent"] is None for r in main) > 1:
        return None, linked
    active: set[str] = set()
    node: str | None = main[-1]["uuid"]
    while node is not None and node not in active:
        active.add(node)
        if node not in parent_of:
            return None, linked  # a parent outside this file
        node = parent_of[node]
    return active, linked


_CUT_SHORT = re.compile(r"truncated|too large|exceeds|more lines", re.I)


def _split_reminders(text: str) -> tuple[str, str]:
    """(the <system-reminder> blocks of a Read result, joined; the text with each block and the blanks around
    it turned into one newline). Looked for only up to the last closing tag: an opening after it has none,
    and each such opening searched to the end (quadratic in a file of unclosed ones)."""
    end = text.rfind("</system-reminder>")
    if end < 0:
        return "", text
    tail = text[end + len("</system-reminder>"):]
    cut = len(text) - len(tail.lstrip())
    head = text[:cut]
    return "".join(_REMINDER.findall(head)), _REMINDER.sub("\n", head) + text[cut:]


def _read_content(text: str, call_input: dict[str, Any]) -> str | None:
    """The whole file from a Read result's `cat -n` text, or None when it shows only a part."""
    if call_input.get("offset") or call_input.get("limit"):
        return None
    reminders, body = _split_reminders(text)
    body = body.strip("\n")
    if not body:
        return "" if "empty" in reminders else None
    if not any(_NUMBERED.match(line) for line in body.split("\n")[:3]):
        # no `cat -n` gutter at all: an SDK or an older version that hands the file back as it is
        cut = _CUT_SHORT.search(reminders + body[-200:]) or PLACEHOLDER.match(body.strip())  # an image is no text
        return None if cut else body
    lines: list[str] = []
    for k, line in enumerate(body.split("\n"), start=1):
        m = _NUMBERED.match(line)
        if not m or int(m.group(1)) != k:
            return None
        lines.append(m.group(2))
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # a last gutter with nothing after it is the file's final newline, not a line
    return "\n".join(lines) + "\n"


def _tool_use_extras(result: ToolResult, extra: Any, call_input: dict[str, Any], is_read: bool) -> None:
    if isinstance(extra, dict):
        f = extra.get("file")
        if isinstance(f, dict) and isinstance(f.get("content"), str):
            start, num, total = f.get("startLine", 1), f.get("numLines"), f.get("totalLines")
            if start == 1 and (num is None or total is None or num >= total):
                result.file_content = f["content"]
        original = extra.get("originalFile", extra.get("originalFileContents"))
        if isinstance(original, str):
            result.original_file = original
    if result.file_content is None and is_read and not result.is_error:
        result.file_content = _read_content(result.text, call_input)


def _extras(r: dict[str, Any]) -> dict[str, Any] | None:
    """The parts of a tool result's side record (`toolUseResult`, or `tool_use_result` in
    stream-json output) that are used: only these are kept, not the whole record."""
    extra = r.get("toolUseResult", r.get("tool_use_result"))
    if not isinstance(extra, dict):
        return None
    return {k: extra[k] for k in ("file", "originalFile", "originalFileContents") if k in extra}


def _compact_usage(u: dict[str, Any]) -> Usage:
    usage = Usage()
    add_usage(usage, u)
    return usage


def _result_event(t: Transcript, r: dict[str, Any]) -> Usage | None:
    """`claude -p --output-format stream-json` ends with a `result` event: the final answer, the
    session's usage and its cost."""
    if isinstance(r.get("result"), str) and not r.get("is_error"):
        t.final_answer = r["result"]
    elif r.get("is_error") or str(r.get("subtype", "")).startswith("error"):
        t.warnings.append(f"the session ended with an error: {r.get('subtype') or r.get('result')}")
    if not isinstance(r.get("usage"), dict):
        return None
    usage = Usage()
    add_usage(usage, r["usage"])
    cost = r.get("total_cost_usd", r.get("cost_usd"))
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        usage.cost_usd = float(cost)
    return usage


@dataclass
class _Records:
    """The first pass over the file: the conversation records in file order, each cut to a small
    dict (`_conversation_row`), and what links them."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    parent_of: dict[str, str | None] = field(default_factory=dict)
    final_usage: Usage | None = None  # from a stream-json `result` event
    objects: int = 0  # JSON objects seen, records or not
    session_id: str | None = None  # of the first conversation record: a subagent's parent session
    agent_id: str | None = None  # a subagent's id (`agentId`), which its parent's Task result names
    kinds: set[str] = field(default_factory=set)  # their `type`s, while only side records are seen


def _read_records(records: Iterable[Any], t: Transcript, loose: bool = False) -> _Records:
    read = _Records()
    for r in records:
        if not isinstance(r, dict):
            continue
        read.objects += 1
        if not read.rows and len(read.kinds) < 8:
            read.kinds.add(str(r.get("type")))
        # a subagent's messages: `isSidechain` in session logs, `parent_tool_use_id` in stream-json output
        uuid, kind, side = r.get("uuid"), r.get("type"), bool(r.get("isSidechain") or r.get("parent_tool_use_id"))
        if isinstance(uuid, str):
            read.parent_of[uuid] = _parent(r)
        if kind == "result":
            read.final_usage = _result_event(t, r) or read.final_usage
        elif kind == "system" and r.get("subtype") == "init":
            t.cwd = t.cwd or r.get("cwd")
            t.model = t.model or r.get("model")
        elif kind == "queue-operation" and isinstance(r.get("content"), str) and r["content"].strip():
            # what the user typed while the agent worked (queued, then handed to it): their words too
            read.rows.append({"uuid": None, "parent": None, "side": False, "queued": r["content"], "chain": False})
        elif kind == "system" and r.get("content"):
            read.rows.append({"uuid": uuid, "parent": _parent(r), "side": side, "system": str(r["content"]),
                              "chain": False})
        elif _is_record(r, loose):
            if not read.rows:
                read.session_id = r["sessionId"] if isinstance(r.get("sessionId"), str) else None
                read.agent_id = r["agentId"] if isinstance(r.get("agentId"), str) else None
            read.rows.append(_conversation_row(r, side, want_cwd=not read.rows or not t.cwd))
            if isinstance(r.get("cwd"), str) and not side and r["cwd"] not in t.cwds:
                t.cwds.append(r["cwd"])  # the folders the session worked in (a log of several sessions has more)
    return read


def _conversation_row(r: dict[str, Any], side: bool, *, want_cwd: bool) -> dict[str, Any]:
    """Only what the timeline needs, in a small dict per record: the parsed record itself (and its
    message's other fields) is dropped at once."""
    msg, kind = r["message"], r["type"]
    row = {"uuid": r.get("uuid"), "parent": _parent(r), "side": side, "kind": kind, "content": msg.get("content"),
           "chain": True}
    if kind == "assistant":
        row["mid"], row["model"] = msg.get("id"), msg.get("model")
        if isinstance(msg.get("usage"), dict):
            row["usage"] = _compact_usage(msg["usage"])
    else:
        row["extra"] = _extras(r)
    if kind == "assistant" and (msg.get("model") == "<synthetic>" or r.get("isApiErrorMessage")):
        row["synthetic"] = True  # written by the harness in the model's place (an API error, a usage limit)
    for key, name in (("isMeta", "meta"), ("isCompactSummary", "compact")):
        if r.get(key):
            row[name] = True
    if want_cwd:
        row["cwd"] = r.get("cwd")
    if isinstance(r.get("timestamp"), str):
        row["timestamp"] = r["timestamp"]
    return row


def _timeline_turns(t: Transcript, rows: list[dict[str, Any]],
                    active: set[str] | None) -> tuple[list[dict[str, Any]], dict[str, Usage]]:
    """The turns of the timeline ({role, blocks, sidechain, extra}) and each assistant message's
    usage by message id. Meta records and records on an abandoned branch are left out (the latter
    counted in a warning); sets the transcript's cwd, model and date on the way."""
    turns: list[dict[str, Any]] = []
    by_message_id: dict[str, dict[str, Any]] = {}
    usage_by_id: dict[str, Usage] = {}
    abandoned = 0
    last_time: str | None = None
    prompts = {_prompt_text(row["content"]) for row in rows if row.get("kind") == "user"}
    for row in rows:
        side = row["side"]
        if "queued" in row:
            text = row["queued"].strip()
            if text not in prompts:  # not delivered later as a prompt of its own: it steered the turn under way
                prompts.add(text)
                turns.append({"role": "user", "blocks": text, "sidechain": False, "extra": None})
            continue
        if "system" in row:
            turns.append({"role": "system", "blocks": row["system"], "sidechain": side})
            continue
        if row.get("meta"):
            continue  # caveats and other records that are not part of the conversation
        if active is not None and not side and row["uuid"] not in active:
            abandoned += 1
            continue
        if not side and row.get("timestamp"):
            last_time = row["timestamp"]
        t.cwd = t.cwd or (row.get("cwd") if not side else None)
        content = row["content"]
        if row["kind"] == "assistant":
            _merge_assistant_row(t, row, turns, by_message_id, usage_by_id)
        elif isinstance(content, str) and row.get("compact"):
            turns.append({"role": "system", "blocks": content, "sidechain": side})
        elif (command := _command(content)) is not None:
            args = command_args(command)
            if args:  # a custom slash command: its arguments are the user's request
                turns.append({"role": "user", "blocks": args, "sidechain": side, "extra": None})
            turns.append({"role": "system", "blocks": command, "sidechain": side, "command": True})
        else:
            turns.append({"role": "user", "blocks": content, "sidechain": side, "extra": row["extra"]})
    if abandoned:
        t.warnings.append(f"{abandoned} records on an abandoned branch (an edited or rewound prompt) were skipped")
    t.date = date_of(last_time)
    return turns, usage_by_id


def _prompt_text(content: Any) -> str:
    if isinstance(content, list):
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return content.strip() if isinstance(content, str) else ""


def _command(content: Any) -> str | None:
    """The text of a user record that is a slash command or its local output, else None."""
    if isinstance(content, list) and content and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        content = "\n".join(str(b.get("text", "")) for b in content)
    return content if isinstance(content, str) and is_command(content) else None


def _merge_assistant_row(t: Transcript, row: dict[str, Any], turns: list[dict[str, Any]],
                         by_message_id: dict[str, dict[str, Any]], usage_by_id: dict[str, Usage]) -> None:
    """One assistant message streamed as several records (sharing `message.id`) becomes one turn."""
    content = row["content"]
    mid = row["mid"] or row["uuid"] or f"_line{len(turns)}"
    if row.get("usage"):
        usage_by_id[mid] = row["usage"]
    if row["model"] and row["model"] != "<synthetic>":
        t.model = row["model"]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    turn = by_message_id.get(mid)
    if turn is None:
        turn = by_message_id[mid] = {"role": "assistant", "blocks": [], "sidechain": row["side"],
                                     "synthetic": bool(row.get("synthetic"))}
        turns.append(turn)
    for b in blocks:
        if b not in turn["blocks"]:  # some versions repeat earlier blocks on later lines
            turn["blocks"].append(b)


def _add_turns(t: Transcript, turns: list[dict[str, Any]]) -> None:
    """The turns as entries; a tool result gets its side record's file content when it is the only
    result of its turn (the side record cannot say which result it belongs to otherwise)."""
    calls: dict[str, ToolCall] = {}
    for turn in turns:
        if turn["role"] == "system":
            t.entries.append(Message("system", strip_ansi(turn["blocks"]), sidechain=turn["sidechain"],
                                     kind="command" if turn.get("command") else "text"))
            continue
        added = add_content(t, turn["role"], turn["blocks"], sidechain=turn["sidechain"])
        if turn.get("synthetic"):
            for e in added:
                if isinstance(e, Message) and e.kind == "text":
                    e.kind = "synthetic"
        results = [e for e in added if isinstance(e, ToolResult)]
        for e in added:
            if isinstance(e, ToolCall):
                calls[e.id] = e
        for res in results:
            call = calls.get(res.call_id)
            extra = turn.get("extra") if len(results) == 1 else None
            _tool_use_extras(res, extra, call.input if call else {}, bool(call and call.name == "Read"))


def _summed_usage(usage_by_id: dict[str, Usage]) -> Usage | None:
    if not usage_by_id:
        return None
    usage = Usage()
    for u in usage_by_id.values():
        usage.add(u)
    return usage


def parse(src: Source) -> Transcript:
    """One streamed pass: each record is parsed once and only what the timeline needs is kept (the
    message, a few fields of its tool result record), so a large log costs about its size. A JSON
    document of records (`{"loglines": [...]}`, the web export) is read the same way."""
    if src.is_binary:
        raise NotThisFormat("the file is not UTF-8 text")
    if src.is_json:
        value = src.json
        if isinstance(value, dict) and isinstance(value.get("loglines"), list):
            return _from_records(src, value["loglines"], FORMAT, loose=True)
        if not _is_one_record(value):  # one record is a log too
            raise NotThisFormat("a single JSON document, not JSON lines")
    stats = JsonLines()
    t = _from_records(src, (r for _, r in src.iter_json_lines(stats)), FORMAT, stats=stats)
    return t


def parse_json_output(src: Source) -> Transcript:
    """`claude -p --output-format json`: one `result` object (the final answer, usage and cost only),
    or with --verbose a JSON array of the session's messages, as stream-json prints them."""
    value = src.json
    if isinstance(value, list):
        if not any(is_record_like(v) for v in value[:8]):
            raise NotThisFormat("a JSON array, but its first items are not Claude Code messages")
        return _from_records(src, value, "claude-json", loose=True)
    if not (isinstance(value, dict) and value.get("type") == "result"):
        raise NotThisFormat("not a `claude -p --output-format json` result (type: result) or message array")
    t = Transcript(format="claude-json", source=src.path)
    t.usage = _result_event(t, value)
    if t.final_answer is None:
        raise NothingToImport("a `claude -p` result with no answer"
                              + (f" (it ended with {value.get('subtype')})" if value.get("subtype") else ""))
    t.entries.append(Message("assistant", t.final_answer))
    t.warnings.append("a `claude -p --output-format json` result holds the final answer only: no task, no tool "
                      "calls; `--output-format stream-json --verbose` (or the session log) keeps the whole session")
    return finish_transcript(t, verbatim_reads=False)


def _from_records(src: Source, records: Iterable[Any], fmt: str, *, loose: bool = False,
                  stats: JsonLines | None = None) -> Transcript:
    t = Transcript(format=fmt, source=src.path)
    read = _read_records(records, t, loose)
    if not read.objects:
        raise NotThisFormat("not JSON lines")
    if stats is not None and len(stats.bad) >= read.objects:
        raise NotThisFormat(f"line {stats.bad[0][0]} is not JSON")
    if not any(row["chain"] for row in read.rows):
        if read.kinds and read.kinds <= _SIDE_KINDS:
            raise NothingToImport(f"a Claude Code log with only {' and '.join(sorted(read.kinds))} records, no user "
                                  "or assistant message (the session ended before a prompt, or this is "
                                  "its summary file)")
        raise NotThisFormat("no user/assistant records with uuid/parentUuid/sessionId")
    subagent = all(row["side"] for row in read.rows if row["chain"])
    if subagent:  # a subagent's own file (`agent-*.jsonl`, every record a sidechain): its conversation is here
        for row in read.rows:
            row["side"] = False
    active, linked = _active_uuids([row for row in read.rows if row["chain"]], read.parent_of)
    read.parent_of.clear()
    if stats is not None:
        t.warnings.extend(truncation_warning(stats))
    if active is None and linked:
        t.warnings.append("the parentUuid chain does not cover this file; every record was kept in file order")
    turns, usage_by_id = _timeline_turns(t, read.rows, active)
    read.rows.clear()
    _add_turns(t, turns)
    turns.clear()
    t.usage = read.final_usage if read.final_usage is not None else _summed_usage(usage_by_id)
    if subagent:
        read_as_subagent(t, src.path, read.session_id, read.agent_id)
    finish_transcript(t, verbatim_reads=False)
    if t.compaction:
        t.final_answer = summary_of(t.final_answer)
    return t
