"""OpenHands trajectories: the events of one conversation as OpenHands saves them (`--save-trajectory-path`, the
UI's "Export trajectory", an evaluation's `history`): a JSON list of actions (`action`, `args`) and observations
(`observation`, `content`, `extras`, `cause`: the id of the action they answer), each with `source` (user, agent,
environment), `id` and `timestamp`; or `{"trajectory": [...]}`.

The user's `message` is the task and the agent's a message; `finish` is the final answer (its `final_thought`,
else its `thought` or `outputs.content`). A file read, written or edited through the editor is the
`str_replace_editor` call it was (create, str_replace, insert, view), so the files it wrote are rebuilt as the
editor's are; an LLM-based edit is the whole new file its observation holds. A command is an `execute_bash` call,
its exit code from the observation's metadata; IPython, browsing, MCP and delegation are calls by their names.
The system prompt, recalls (microagents, workspace context) and agent state changes are not the incident; an
error state's reason is a warning.
"""

from __future__ import annotations

from typing import Any

from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.json_walk import Broken, walk
from scarbook.transcripts.model import Message, NotThisFormat, ToolCall, ToolResult, Transcript, date_of, shared_names
from scarbook.transcripts.source import Source

FORMAT = "openhands"
_EDITOR = "str_replace_editor"
_SKIPPED = {"system", "recall", "change_agent_state", "condensation", "condensation_request", "null", "pause", "resume",
            "stop"}


def is_event(record: Any) -> bool:
    """An OpenHands event: an action with its args or an observation with its extras, and who it came from."""
    return isinstance(record, dict) and "source" in record and (
        ("action" in record and "args" in record) or ("observation" in record and "extras" in record))


def parse(src: Source) -> Transcript:
    if src.shape.kind not in ("json-object", "json-array"):
        raise NotThisFormat("not a JSON document")
    t = Transcript(format=FORMAT, source=src.path)
    reader = Events(t)
    try:
        value = walk(src.path, {"", "trajectory"}, reader.add)
    except Broken:
        raise NotThisFormat("not a JSON document") from None
    if isinstance(value, dict) and "trajectory" not in value:
        raise NotThisFormat("an object without a trajectory list")
    if not reader.seen:
        raise NotThisFormat("no OpenHands event (action with args, or observation with extras)")
    if not any(isinstance(e, Message) and e.role == "user" for e in t.entries):
        raise NotThisFormat("no message from the user to be the task")
    t.date = reader.last_day
    return finish_transcript(t)


class Events:
    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.seen = 0
        self.last_day: str | None = None
        self.edits: dict[str, int] = {}  # an LLM-based edit's action id -> its call's entry (its file comes after)

    def add(self, path: str, event: Any) -> None:
        if not is_event(event):
            where = f"{path or 'the list'}[{self.seen}]"
            raise NotThisFormat(f"{where} is not an OpenHands event (action with args, or observation with extras)")
        self.seen += 1
        self.last_day = date_of(event.get("timestamp")) or self.last_day
        if "action" in event:
            self._action(event, str(event.get("action")), a if isinstance(a := event.get("args"), dict) else {})
        else:
            self._observation(event, str(event.get("observation")),
                              x if isinstance(x := event.get("extras"), dict) else {})

    def _action(self, event: dict[str, Any], kind: str, args: dict[str, Any]) -> None:
        t, cid = self.t, str(event.get("id", len(self.t.entries)))
        if kind in _SKIPPED:
            return
        if kind == "message":
            role = "user" if event.get("source") == "user" else "assistant"
            t.entries.append(Message(role, str(args.get("content") or event.get("message") or "")))
            return
        thought = args.get("thought")
        if isinstance(thought, str) and thought.strip() and kind not in ("finish", "reject"):
            t.entries.append(Message("assistant", thought, kind="thinking"))
        if kind == "think":
            return
        if kind in ("finish", "reject"):
            outputs = o if isinstance(o := args.get("outputs"), dict) else {}
            said = (args.get("final_thought") or outputs.get("content") or outputs.get("reason") or thought
                    or event.get("message") or "")
            t.entries.append(Message("assistant", str(said)))
            return
        call = _call(cid, kind, args)
        if call is not None:
            t.entries.append(call)
            if kind == "edit" and args.get("impl_source") == "llm_based_edit":
                self.edits[cid] = len(t.entries) - 1

    def _observation(self, event: dict[str, Any], kind: str, extras: dict[str, Any]) -> None:
        t = self.t
        metadata = m if isinstance(m := extras.get("metadata"), dict) else {}
        cwd = metadata.get("working_dir") or extras.get("working_dir")
        if isinstance(cwd, str) and cwd:
            t.cwd = t.cwd or cwd
            if cwd not in t.cwds:
                t.cwds.append(cwd)
        if kind == "agent_state_changed":
            if extras.get("agent_state") == "error":
                t.warnings.append(f"the agent stopped in its error state: {extras.get('reason') or 'no reason given'}")
            return
        if kind in ("recall", "null", "condensation") or "cause" not in event:
            return
        cause = str(event["cause"])
        text = str(event.get("content") or "")
        if cause in self.edits and isinstance(extras.get("new_content"), str):  # the whole file the edit left
            at = self.edits.pop(cause)
            call = t.entries[at]
            if isinstance(call, ToolCall):
                t.entries[at] = ToolCall(call.id, "write", {"path": call.input.get("path"),
                                                            "content": extras["new_content"]})
        code = metadata.get("exit_code")
        failed = (kind in ("error", "user_rejected") or event.get("success") is False
                  or (isinstance(code, int) and code not in (0, -1)))
        t.entries.append(ToolResult(cause, text, failed))


def _call(cid: str, kind: str, args: dict[str, Any]) -> ToolCall | None:
    """An action as the tool call it was."""
    path = args.get("path")
    if kind == "run":
        return ToolCall(cid, "execute_bash", {"command": str(args.get("command") or "")})
    if kind == "run_ipython":
        return ToolCall(cid, "execute_ipython_cell", {"code": str(args.get("code") or "")})
    if kind == "read":
        if args.get("impl_source") == "oh_aci":
            return ToolCall(cid, _EDITOR, {"command": "view", "path": path})
        return ToolCall(cid, "read", {"path": path})
    if kind == "write":
        return ToolCall(cid, "write", {"path": path, "content": args.get("content")})
    if kind == "edit":
        if args.get("impl_source") == "llm_based_edit":  # lines start..end replaced: its observation has the file
            return ToolCall(cid, "edit", {"path": path})
        inp = {k: args[k] for k in ("command", "path", "file_text", "old_str", "new_str", "insert_line")
               if args.get(k) is not None}
        return ToolCall(cid, _EDITOR, inp)
    if kind in ("browse", "browse_interactive"):
        return ToolCall(cid, "browser", {k: v for k, v in args.items() if k in ("url", "browser_actions")})
    if kind == "mcp":
        arguments = args.get("arguments")
        return ToolCall(cid, str(args.get("name") or "mcp"), shared_names(arguments) if isinstance(arguments, dict)
                        else {"arguments": arguments})
    if kind == "delegate":
        return ToolCall(cid, "delegate", {"agent": args.get("agent"), "inputs": args.get("inputs")})
    return ToolCall(cid, kind, {k: v for k, v in args.items() if k not in ("thought", "security_risk")})
