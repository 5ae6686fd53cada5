"""One run's recording: each model call appended to the run's transcript as it finishes, and what
the runner needs afterwards (calls, tokens, warnings, an upstream failure, a replay divergence).

The transcript is the file the agent may append to too ($SCARBOOK_TRANSCRIPT): it is opened here
as scarbook opens every file it writes (safefs.open_append: no link followed, a file with more than
one name refused), appended to with one write per call (so lines never interleave with the agent's),
and created when the agent wrote nothing. Every text a record derives from a call is capped at
FIELD_CAP characters (the call's own record holds the whole body, itself capped at max_body_bytes),
and the real credentials are blanked from every line, whatever an upstream echoed back.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.fs import safefs
from scarbook.record import apis

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie", "set-cookie", "proxy-authorization",
                            "openai-organization", "openai-project", "anthropic-admin-key"})
MAX_WARNINGS = 3
FIELD_CAP = 65_536  # characters of a derived record's text (task, assistant, tool_result)
REDACTED = b"[scarbook: a credential was here]"
# What an agent did to its door (door.py), said once per kind at the end of its run.
TROUBLE = {
    "refused": "recorder: {n} connection{s} refused: {first}",
    "malformed": "recorder: {n} malformed request{s} answered 400 (the first: {first})",
    "accept": "recorder: {n} connection{s} could not be accepted: scarbook ran out of file descriptors ({first})",
    "path": "recorder: {n} request{s} for paths the recorder does not forward refused with 404 (the first: {first})",
    "failed": "recorder: {n} request{s} failed inside the recorder (the first: {first})",
}


def safe_headers(headers: Any) -> dict[str, str]:
    """The headers worth keeping, credentials never among them."""
    return {k.lower(): v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}


@dataclass
class RunSummary:
    """What a run's calls came to: the runner turns it into the run's usage, notes and status."""

    calls: int = 0
    live: int = 0
    usage: dict[str, int] = field(default_factory=dict)  # the live calls' tokens (replayed ones are free)
    models: dict[str, dict[str, int]] = field(default_factory=dict)  # model -> its tokens (for pricing)
    warnings: list[str] = field(default_factory=list)
    # The latest call the model's side failed (down, 5xx, 429), while no call after it succeeded: the run's cause
    # is infra. A failure a later call got past is `recovered` (a note): what the run then did is the agent's.
    upstream_failure: str = ""
    recovered: str = ""
    diverged: str = ""  # "replay diverged at call i: …"
    # The live calls whose tokens the recorder could not count: a stream cut off before its end (where the
    # usage comes), a call still unanswered when the run ended. The budget checks cannot pass on the rest.
    unmeasured: list[str] = field(default_factory=list)
    # "N:sha256" of the N model_call lines the recorder wrote to the run's transcript, in order (RunRecord.recording):
    # a replay answers from them only if the file still holds them (the agent can write that file)
    recording: str = ""
    write_error: str = ""  # the transcript could not be written
    # The transcript records the recorder wrote, in order, kept in memory (each `model_call` without
    # its bodies): what the run's trajectory checks read, since the agent can rewrite the file.
    timeline: list[dict[str, Any]] = field(default_factory=list)

    def failed_upstream(self, why: str) -> None:
        self.upstream_failure = why

    def succeeded(self, n: int) -> None:
        if self.upstream_failure:
            self.recovered = f"{self.upstream_failure}; call {n} then succeeded, so the run's outcome is the agent's"
            self.upstream_failure = ""


@dataclass
class Body:
    """A request or response body as kept: capped at `cap` bytes, its whole size counted."""

    cap: int
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    kept: int = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = self.cap - self.kept
        if room > 0:
            part = chunk[:room]
            self.chunks.append(part)
            self.kept += len(part)

    @property
    def truncated(self) -> bool:
        return self.size > self.kept

    def bytes(self) -> bytes:
        return b"".join(self.chunks)


class RunRecording:
    """The calls of one run (case, k), in order."""

    def __init__(self, case_id: str, k: int, transcript: Path, cap: int, secrets: tuple[str, ...] = ()) -> None:
        self.case_id, self.k, self.transcript, self.cap = case_id, k, Path(transcript), cap
        self.secret_texts = tuple(s for s in secrets if len(s) >= 8)  # never passed on in a header
        self.secrets = tuple(s.encode() for s in self.secret_texts)  # blanked from every line written
        self.trouble: dict[str, list[Any]] = {}  # kind -> [count, the first one's detail]
        self.summary = RunSummary()
        self.results_seen: set[str] = set()
        self.calls_seen: set[str] = set()
        self.keyless_said = False  # a call went upstream without credentials (said once)
        self.task_said = False  # the first call with a body was seen: the run's `task` comes from it
        self.last_list: tuple[int, str, list[Any]] = (0, "", [])  # the previous call's conversation (compact)
        # the calls sent on and not yet recorded, each with how to record it as it stands (proxy._forward)
        self.open_calls: dict[int, Callable[[], None]] = {}
        self.written = hashlib.sha256()  # of the model_call lines appended, in order (RunSummary.recording)
        self.written_calls = 0

    def compact(self, body: Any, req: dict[str, Any]) -> Any:
        """The request body as recorded: a conversation's messages (`messages`, or a Responses `input`
        list) that start as the previous call's did are kept once — the body holds the new ones and
        `req["prefix"] = {call, key, count}` says how many of that call's come first (an agent's
        every request repeats the whole conversation: kept whole, a run's recording grows with the
        square of its length). replay.expand_prefixes puts them back."""
        key = "messages" if isinstance(body, dict) and isinstance(body.get("messages"), list) else \
            "input" if isinstance(body, dict) and isinstance(body.get("input"), list) else None
        if key is None:
            return body
        items = body[key]
        prev_call, prev_key, prev = self.last_list
        self.last_list = (self.summary.calls, key, items)
        count = 0
        if prev_key == key:
            limit = min(len(prev), len(items))
            while count < limit and items[count] == prev[count]:
                count += 1
        if count == 0:
            return body
        req["prefix"] = {"call": prev_call, "key": key, "count": count}
        return {**body, key: items[count:]}

    def next_call(self) -> int:
        self.summary.calls += 1
        return self.summary.calls

    def unmeasured_left(self) -> None:
        """The run ended: a call still going (its answer not yet recorded whole, though the recorder waited for it:
        Recorder.settle) is recorded as it stands — a call, with what the agent was sent of it (a tool call it may
        have run) — and is one whose tokens were not counted."""
        for n, as_it_stands in sorted(self.open_calls.items()):
            self.summary.unmeasured.append(f"call {n} was still going when the agent ended")
            as_it_stands()
        self.open_calls.clear()

    def note_trouble(self, kind: str, detail: str) -> None:
        seen = self.trouble.setdefault(kind, [0, detail])
        seen[0] += 1

    def trouble_lines(self) -> list[str]:
        return [TROUBLE[kind].format(n=f"{n:,}", s="" if n == 1 else "s", first=first)
                for kind, (n, first) in self.trouble.items()]

    def warn(self, text: str) -> None:
        w = self.summary.warnings
        if len(w) < MAX_WARNINGS:
            w.append(text)
        elif len(w) == MAX_WARNINGS:
            w.append("recorder: more warnings not shown")

    def add(self, call: dict[str, Any], api: str, req_body: Any, reply: apis.Reply | None, *,
            counted: bool = True) -> None:
        """Append the call and the records derived from it (docs/transcript-format.md). `counted=False`: a call
        recorded before its end (cut off, or still going when the run ended): its usage so far is no count of it."""
        n = call["n"]
        self.open_calls.pop(n, None)
        lines = [call]
        if not self.task_said and req_body is not None:  # the first call with a body (a refused one has none)
            self.task_said = True
            task = apis.first_user_text(api, req_body)
            if task:
                lines.append({"type": "task", "call": n, "text": clip(task, n)})
        for cid, output, is_error in apis.tool_results(api, req_body):
            if cid in self.calls_seen and cid not in self.results_seen:
                self.results_seen.add(cid)
                lines.append({"type": "tool_result", "call": n, "id": cid, "output": clip(output, n),
                              "is_error": is_error})
        if reply is not None:
            for text in reply.texts:
                lines.append({"type": "assistant", "call": n, "text": clip(text, n)})
            for cid, name, inp in reply.tool_calls:
                self.calls_seen.add(cid)
                lines.append({"type": "tool_call", "call": n, "id": cid, "name": name, "input": inp})
            if reply.usage and counted:
                model = reply.model or call.get("model") or ""
                lines.append({"type": "usage", "call": n, "model": model, **reply.usage})
                if not call.get("replayed"):  # a replayed call cost nothing this time
                    self._count(model, reply.usage)
        encoded = [self._blank(json.dumps(line, ensure_ascii=False).encode("utf-8")) for line in lines]
        self.written.update(encoded[0] + b"\n")
        self.written_calls += 1
        self.summary.recording = f"{self.written_calls}:{self.written.hexdigest()}"
        self.summary.timeline += [{"type": "model_call", "n": n}, *(json.loads(e) for e in encoded[1:])]
        self._append(b"".join(e + b"\n" for e in encoded))

    def _count(self, model: str, usage: dict[str, int]) -> None:
        for target in (self.summary.usage, self.summary.models.setdefault(model, {})):
            for key, value in usage.items():
                target[key] = target.get(key, 0) + value

    def _blank(self, data: bytes) -> bytes:
        for secret in self.secrets:
            if secret in data:
                data = data.replace(secret, REDACTED)
        return data

    def written_since(self, start: int, limit: int) -> bytes:
        """At most `limit` bytes of the run's transcript from byte `start` on: what a relay on a Ray node
        copies into the run's transcript there (relay.py)."""
        folder, name = os.path.split(self.transcript)
        try:
            fd, _ = safefs.open_file(folder, name)
        except (safefs.Refused, OSError):
            return b""
        try:
            os.lseek(fd, start, os.SEEK_SET)
            return os.read(fd, limit)
        except OSError:
            return b""
        finally:
            os.close(fd)

    def _append(self, data: bytes) -> None:
        folder, name = os.path.split(self.transcript)
        try:
            out = safefs.open_append(folder, name)
            try:
                os.write(out, data)
            finally:
                os.close(out)
        except (OSError, safefs.Refused) as exc:
            if not self.summary.write_error:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                self.summary.write_error = (f"recorder: could not append to {self.transcript}: {why}; the run's model "
                                            "calls are not in its transcript")


def clip(text: str, call: int) -> str:
    """`text` as a derived record keeps it: at most FIELD_CAP characters, and a cut one says so."""
    if len(text) <= FIELD_CAP:
        return text
    return text[:FIELD_CAP] + f"… [scarbook: cut at {FIELD_CAP:,} of {len(text):,} characters in all; " \
                              f"the whole text is in model_call {call}]"
