"""OpenHands' evaluation output: `output.jsonl`, one instance a line as its evaluation harness writes it
(evaluation/utils/shared.py's EvalOutput): `instance_id`, `instruction`, `test_result` (a SWE-bench grading adds
`report.resolved`), `metadata` (`llm_config.model`), `history` (the instance's events, as a trajectory holds them;
older runs wrote [action, observation] pairs), `metrics`, `error`.

A run's file holds every instance: one is imported, the first not resolved unless `--trace ID` picks another
(`--list` lists them: the id, the task's first words, resolved or not). The file is read a line at a time and
only the instance kept is held; its history is read by the trajectory reader (scarbook.transcripts.openhands). A
line that is not JSON, or not an instance, is an error naming the file and the line; a last line cut short (the
harness was still writing) is a warning. A file of one instance is one JSON document, its history streamed.
"""

from __future__ import annotations

import json
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import Broken, walk
from scarbook.transcripts.model import Message, NotThisFormat, Transcript
from scarbook.transcripts.openhands import Events
from scarbook.transcripts.source import JsonLines, Source, truncation_warning
from scarbook.transcripts.swe_agent import issue_of
from scarbook.transcripts.text import between, preview

FORMAT = "openhands-eval"
RESOLVED, NOT_RESOLVED, NOT_GRADED = "resolved", "not resolved", "not graded"
_TODO = "each line of output.jsonl is one instance: repair or remove that line"


def is_instance(record: Any) -> bool:
    """One line of an evaluation's output: an instance's id and its history or test result."""
    return isinstance(record, dict) and "instance_id" in record and ("history" in record or "test_result" in record)


def outcome(record: dict[str, Any]) -> str:
    """resolved / not resolved (the grading's word), not graded (inference alone), or the harness's error."""
    if isinstance(record.get("error"), str) and record["error"].strip():
        return f"error: {preview(record['error'], 40)}"
    result = r if isinstance(r := record.get("test_result"), dict) else {}
    report = r if isinstance(r := result.get("report"), dict) else {}
    for said in (report.get("resolved"), result.get("resolved"), result.get("success")):
        if isinstance(said, bool):
            return RESOLVED if said else NOT_RESOLVED
    return NOT_GRADED


def summary(record: dict[str, Any]) -> str:
    """What `--list` says of an instance: its task's first words, and whether it was resolved."""
    instruction = record.get("instruction")
    words = _task_of(instruction) if isinstance(instruction, str) else ""
    return f"{preview(words, 50) if words.strip() else '(no instruction)'}, {outcome(record)}"


def _task_of(instruction: str) -> str:
    """The task an instruction gives: SWE-bench's issue (the repository's folder in <uploaded_files> and a sentence on
    it come first), else the instruction without that folder."""
    words = issue_of(instruction)
    folder_end = words.find("</uploaded_files>") if words.lstrip().startswith("<uploaded_files>") else -1
    return words[folder_end + len("</uploaded_files>"):].strip() if folder_end >= 0 else words


def parse(src: Source) -> Transcript:
    if src.shape.kind == "json-object":
        return _one_instance(src)
    if src.shape.kind != "json-lines":
        raise NotThisFormat("not JSON lines")
    listed: list[tuple[str, str]] = []
    kept: tuple[int, dict[str, Any]] | None = None  # (line, record) of the instance imported
    stats = JsonLines()
    for no, record in src.iter_json_lines(stats):
        if stats.bad:
            bad_no, why = stats.bad[0]
            raise ScarbookError(f"{src.path}: line {bad_no} is not JSON ({why}); {_TODO}")
        if not is_instance(record):
            if not listed:
                raise NotThisFormat(f"line {no} is not an OpenHands evaluation record (instance_id with history "
                                    "or test_result)")
            raise ScarbookError(f"{src.path}: line {no} is not an OpenHands evaluation record (no instance_id with "
                                f"history or test_result); {_TODO}")
        iid = str(record["instance_id"])
        listed.append((iid, summary(record)))
        if iid == src.trace or src.trace is None and (
                kept is None or outcome(kept[1]) != NOT_RESOLVED and outcome(record) == NOT_RESOLVED):
            kept = (no, record)  # the default: the first not resolved, else the first
    if stats.bad:  # the only line was not JSON
        raise NotThisFormat(f"line {stats.bad[0][0]} is not JSON")
    if not listed:
        raise NotThisFormat("no OpenHands evaluation record")
    if kept is None:
        raise ScarbookError(f"{src.path}: no instance {src.trace!r} in this evaluation output; it holds "
                            + ", ".join(iid for iid, _ in listed[:10]) + (" …" if len(listed) > 10 else ""))
    no, record = kept
    t = _instance(src, record, f"line {no}")
    t.warnings[:0] = truncation_warning(stats)
    if len(listed) > 1:
        t.traces, t.trace = listed, str(record["instance_id"])
        if src.trace is None:
            why = "the first not resolved" if outcome(record) == NOT_RESOLVED else "the first: none is unresolved"
            t.warnings.append(f"the file holds {len(listed)} instances; showing {t.trace} ({why}); pick another "
                              "with --trace ID (see --list)")
    t.excerpt = (".jsonl", json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
    return finish_transcript(t)


def _instance(src: Source, record: dict[str, Any], where: str) -> Transcript:
    """The transcript of one instance's record (its history read as a trajectory is)."""
    t = Transcript(format=FORMAT, source=src.path)
    events = Events(t)
    history = record.get("history")
    try:
        for item in history if isinstance(history, list) else []:
            _add(events, item)
    except NotThisFormat as exc:
        raise ScarbookError(f"{src.path}: {where} (instance {record['instance_id']}): {exc}; {_TODO}") from None
    _finish_instance(t, events, record)
    return t


def _one_instance(src: Source) -> Transcript:
    """A file of one instance: one JSON document, its history handed over an event at a time."""
    t = Transcript(format=FORMAT, source=src.path)
    events = Events(t)
    try:
        record = walk(src.path, {"history"}, lambda _path, item: _add(events, item))
    except Broken:
        raise NotThisFormat("not a JSON document") from None
    if not is_instance(record):
        raise NotThisFormat("not an OpenHands evaluation record (instance_id with history or test_result)")
    _finish_instance(t, events, record)
    return finish_transcript(t)


def _add(events: Events, item: Any) -> None:
    """One item of a history: an event, or an old run's [action, observation] pair (an action that got none is
    paired with a null observation, which may have no source)."""
    for event in item if isinstance(item, list) else [item]:
        if not (isinstance(item, list) and isinstance(event, dict) and event.get("observation") == "null"):
            events.add("history", event)


def _finish_instance(t: Transcript, events: Events, record: dict[str, Any]) -> None:
    t.date = events.last_day
    metadata = m if isinstance(m := record.get("metadata"), dict) else {}
    llm = c if isinstance(c := metadata.get("llm_config"), dict) else {}
    t.model = str(llm["model"]) if llm.get("model") else None
    instruction = record.get("instruction")
    folder = between(instruction, "<uploaded_files>", "</uploaded_files>") if isinstance(instruction, str) else None
    if t.cwd is None and folder and folder.startswith("/") and "\n" not in folder:
        t.cwd = folder  # the repository the instance was given: where its paths start
    asked = next((e for e in t.entries if isinstance(e, Message) and e.role == "user"), None)
    if asked is not None:
        asked.text = _task_of(asked.text)  # the issue, as the SWE-agent readers take it
    else:
        if isinstance(instruction, str) and instruction.strip():  # no history (the harness failed): the task alone
            t.entries.insert(0, Message("user", _task_of(instruction)))
        else:
            raise NotThisFormat(f"instance {record['instance_id']} has neither an instruction nor a message from the "
                                "user in its history")
    if isinstance(record.get("error"), str) and record["error"].strip():
        t.warnings.append(f"the evaluation harness stopped this instance: {preview(record['error'], 200)}")
