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
from typing import Any

from scarbook.models import Usage
from scarbook.transcripts.anthropic_api import add_content, add_usage
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, finish_transcript
from scarbook.transcripts.source import Source, json_line_objects, truncation_warning
from scarbook.transcripts.text import strip_ansi

FORMAT = "claude-code"
_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.S)
_NUMBERED = re.compile(r"^ *(\d+)(?:\t|\u2192)(.*)$")


def _is_record(r: dict[str, Any]) -> bool:
    return r.get("type") in ("user", "assistant") and isinstance(r.get("message"), dict) and (
        "uuid" in r or "parentUuid" in r or "sessionId" in r)


def _active_uuids(records: list[dict[str, Any]]) -> set[str] | None:
    """uuids on the chain from the last main record back to its root, or None if the chain
    breaks (a parent outside this file) and branches cannot be told apart."""
    by_uuid = {r["uuid"]: r for r in records if "uuid" in r}
    leaf = next((r for r in reversed(records) if _is_record(r) and not r.get("isSidechain")), None)
    if leaf is None:
        return None
    active: set[str] = set()
    node: dict[str, Any] | None = leaf
    while node is not None and node.get("uuid") not in active:
        active.add(node.get("uuid"))
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        if parent is None:
            return active
        node = by_uuid.get(parent)
    return None


def _read_content(text: str, call_input: dict[str, Any]) -> str | None:
    """The whole file from a Read result's `cat -n` text, or None when it shows only a part."""
    if call_input.get("offset") or call_input.get("limit"):
        return None
    reminders = "".join(_REMINDER.findall(text))
    body = _REMINDER.sub("\n", text).strip("\n")
    if not body:
        return "" if "empty" in reminders else None
    lines = []
    for k, line in enumerate(body.split("\n"), start=1):
        m = _NUMBERED.match(line)
        if not m or int(m.group(1)) != k:
            return None
        lines.append(m.group(2))
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


def parse(src: Source) -> Transcript:
    if src.text is not None and src.is_json:
        raise NotThisFormat("a single JSON document, not JSON lines")
    records = json_line_objects(src)
    if not any(_is_record(r) for r in records):
        raise NotThisFormat("no user/assistant records with uuid/parentUuid/sessionId")
    t = Transcript(format=FORMAT, source=src.path, warnings=truncation_warning(src))
    active = _active_uuids(records)
    if active is None:
        t.warnings.append("the parentUuid chain leaves this file; every record was kept in file order")
    turns: list[dict[str, Any]] = []  # {role, blocks, sidechain, extra}
    by_message_id: dict[str, dict[str, Any]] = {}
    usage_by_id: dict[str, dict[str, Any]] = {}
    abandoned = 0
    for r in records:
        kind, side = r.get("type"), bool(r.get("isSidechain"))
        if kind == "system" and r.get("content"):
            turns.append({"role": "system", "blocks": str(r["content"]), "sidechain": side})
            continue
        if not _is_record(r) or r.get("isMeta"):
            continue  # summary, file-history-snapshot, caveats: not part of the conversation
        if active is not None and not side and r.get("uuid") not in active:
            abandoned += 1
            continue
        t.cwd = t.cwd or (r.get("cwd") if not side else None)
        msg = r["message"]
        content = msg.get("content")
        if kind == "assistant":
            mid = msg.get("id") or r.get("uuid")
            if msg.get("usage"):
                usage_by_id[mid] = msg["usage"]
            if msg.get("model") and msg["model"] != "<synthetic>":
                t.model = msg["model"]
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            turn = by_message_id.get(mid)
            if turn is None:
                turn = by_message_id[mid] = {"role": "assistant", "blocks": [], "sidechain": side}
                turns.append(turn)
            for b in blocks:
                if b not in turn["blocks"]:  # some versions repeat earlier blocks on later lines
                    turn["blocks"].append(b)
            continue
        if isinstance(content, str) and (content.startswith(("<command-", "<local-command-")) or r.get("isCompactSummary")):
            turns.append({"role": "system", "blocks": content, "sidechain": side})
            continue
        turns.append({"role": "user", "blocks": content, "sidechain": side, "extra": r.get("toolUseResult")})
    if abandoned:
        t.warnings.append(f"{abandoned} records on an abandoned branch (an edited or rewound prompt) were skipped")
    calls: dict[str, Any] = {}
    for turn in turns:
        if turn["role"] == "system":
            t.entries.append(Message("system", strip_ansi(turn["blocks"]), sidechain=turn["sidechain"]))
            continue
        added = add_content(t, turn["role"], turn["blocks"], sidechain=turn["sidechain"])
        results = [e for e in added if isinstance(e, ToolResult)]
        for e in added:
            if isinstance(e, ToolCall):
                calls[e.id] = e
        for res in results:
            call = calls.get(res.call_id)
            extra = turn.get("extra") if len(results) == 1 else None
            _tool_use_extras(res, extra, call.input if call else {}, bool(call and call.name == "Read"))
    usage = Usage()
    for u in usage_by_id.values():
        add_usage(usage, u)
    t.usage = usage if usage_by_id else None
    return finish_transcript(t, verbatim_reads=False)
