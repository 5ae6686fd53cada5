"""Replay: answer each run's model calls from a recorded session's, in order, offline and free.

Run (case, k) of the new session replays run (case, k) of the recorded one. Call i must be the
request recorded as call i (the same digest of the normalized request, apis.normalized); else the
run is an error "replay diverged at call i" with the two requests' difference — never a live call.
With fork_at K the first K calls are replayed and the rest go to the model.
A run whose transcript is gone or has a model_call line that does not parse (cut, altered) since it was
recorded is an error naming that file (`damaged`), not a divergence of the agent's; so is one whose model_call
lines are not those the recorder wrote (RunRecord.recording: their count and sha256) — the agent can write its
transcript, in the sandbox too, and would otherwise choose what its replay is answered.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.record import apis

MAX_TRANSCRIPT = 2_000_000_000  # bytes of a recorded transcript read at most
DIFF_LINES = 12


@dataclass
class ReplaySource:
    session_id: str
    runs: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)  # (case, k) -> model_call records
    fork_at: int | None = None
    # (case, k) -> what is wrong with that run's recording, naming its transcript (gone, cut, replaced since)
    damaged: dict[tuple[str, int], str] = field(default_factory=dict)

    def calls_for(self, case_id: str, k: int) -> list[dict[str, Any]]:
        return self.runs.get((case_id, k), [])

    @property
    def fix(self) -> str:
        return f"record session {self.session_id} again (eval --record), or replay another"

    def damage(self, case_id: str, k: int) -> str:
        """What is wrong with run (case, k)'s recording, and what to do ("" when nothing is)."""
        said = self.damaged.get((case_id, k), "")
        return f"{said} — {self.fix}" if said else ""

    @property
    def total(self) -> int:
        return sum(map(len, self.runs.values()))


def read_calls(path: Path | str) -> list[dict[str, Any]]:
    """The `model_call` records of a transcript, in order (a line that does not parse is skipped)."""
    return read_recording(path)[0]


NOT_WRITTEN = ("does not hold the model calls the recorder wrote (their count and sha256, kept with the run, differ: "
               "changed, cut or written into since — the agent can write its transcript)")


def read_recording(path: Path | str, written: str = "") -> tuple[list[dict[str, Any]], str]:
    """The `model_call` records of a transcript, in order, and what is wrong with it ("" when nothing is):
    missing, unreadable, a model_call line that does not parse (skipped). `written` (RunRecord.recording, "N:sha256"
    of the lines the recorder wrote): the first N must be those lines, else none is answered from (NOT_WRITTEN);
    lines after them were written once the run had ended."""
    folder, name = os.path.split(os.fspath(path))
    try:
        data, _ = safefs.read_file(folder, name, MAX_TRANSCRIPT)
    except (safefs.Refused, OSError) as exc:
        gone = isinstance(exc, FileNotFoundError) or getattr(exc, "missing", False)
        return [], "is missing" if gone else f"cannot be read ({exc})"
    calls: list[dict[str, Any]] = []
    lines: list[bytes] = []
    bad = 0
    for line in data.splitlines():
        if b'"model_call"' not in line:
            continue
        r = apis.parse_json(line)
        if isinstance(r, dict) and r.get("type") == "model_call" and isinstance(r.get("request"), dict) \
                and isinstance(r.get("response"), dict):
            calls.append(r)
            lines.append(line)
        else:
            bad += 1
    if written:
        count, _, digest = written.partition(":")
        n = int(count) if count.isascii() and count.isdigit() else -1
        if n < 0 or len(lines) < n or hashlib.sha256(b"".join(x + b"\n" for x in lines[:n])).hexdigest() != digest:
            # none answered from: the lines still whole cannot be told from ones the agent wrote
            return [], _unparsed(bad) or NOT_WRITTEN
        calls = calls[:n]
    return expand_prefixes(calls), _unparsed(bad)


def _unparsed(bad: int) -> str:
    return ("has a model_call line that does not parse (cut short, or altered)" if bad == 1 else
            f"has {bad} model_call lines that do not parse (cut short, or altered)" if bad else "")


def expand_prefixes(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each recorded request whole again: a `prefix` ({call, key, count}: the first `count` items of
    that call's conversation come first) is put back in front of the body's own (recording.compact)."""
    whole: dict[int, list[Any]] = {}
    for call in calls:
        req = call["request"]
        body, prefix = req.get("body"), req.get("prefix")
        if isinstance(prefix, dict) and isinstance(body, dict):
            key, earlier = str(prefix.get("key")), whole.get(int(prefix.get("call") or 0), [])
            if isinstance(body.get(key), list):
                req["body"] = {**body, key: earlier[: int(prefix.get("count") or 0)] + body[key]}
                del req["prefix"]
        body = req.get("body")
        if isinstance(body, dict):
            for key in ("messages", "input"):
                if isinstance(body.get(key), list):
                    whole[int(call.get("n") or 0)] = body[key]
                    break
    return calls


def load_replay(session_id: str, transcripts: dict[tuple[str, int], str | None], fork_at: int | None,
                written: dict[tuple[str, int], str] | None = None) -> ReplaySource:
    """The recorded calls of each run of `session_id` (its runs' transcripts; `written`: each run's
    RunRecord.recording, what the recorder wrote there); refused when it has none."""
    source = ReplaySource(session_id, fork_at=fork_at)
    for key, path in transcripts.items():
        if path:
            calls, problem = read_recording(path, (written or {}).get(key, ""))
            if calls:
                source.runs[key] = calls
            if problem:  # (a transcript with no model_call at all: a run that made no call)
                source.damaged[key] = f"the recording of run {key[1]} of {key[0]} ({path}) {problem}"
    if not source.runs and source.damaged:
        first, more = next(iter(source.damaged.values())), len(source.damaged) - 1
        raise ScarbookError(f"--replay {session_id}: the recordings of its runs cannot be read: {first}"
                            + (f" (and {more} more)" if more else "") + f" — {source.fix}")
    if not source.runs:
        raise ScarbookError(f"--replay {session_id}: that session has no recorded model calls (its runs' transcripts "
                            "hold no model_call records) — replay a session that ran with record: (or eval --record)")
    return source


def recorded_request(call: dict[str, Any], *, pretty: bool = True) -> str:
    """A recorded call's request, normalized as apis.normalized (pretty: for a difference)."""
    req = call["request"]
    body = req.get("body") if "body" in req else req.get("raw")
    return apis.normalized(str(req.get("method", "POST")), str(call.get("api", "other")), str(req.get("path", "")),
                           body, pretty=pretty)


def difference(recorded: str, now: str) -> str:
    """The lines of the two normalized requests that differ (recorded `-`, now `+`), a few at most."""
    lines = [line for line in difflib.unified_diff(recorded.splitlines(), now.splitlines(), lineterm="", n=0)
             if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    shown = [(line[:200] + "…") if len(line) > 200 else line for line in lines[:DIFF_LINES]]
    more = f" (+{len(lines) - DIFF_LINES} more lines)" if len(lines) > DIFF_LINES else ""
    return "; ".join(" ".join(s.split()) for s in shown) + more


def replay_body(call: dict[str, Any]) -> tuple[int, str, bytes] | str:
    """(status, content type, body bytes) of a recorded response, or why it cannot be replayed."""
    resp = call["response"]
    if resp.get("truncated"):
        return (f"its recorded response was cut at the recording cap ({resp.get('bytes')} bytes; "
                "raise record.max_body_bytes and record again)")
    headers = resp.get("headers") if isinstance(resp.get("headers"), dict) else {}
    status = int(resp.get("status") or 200)
    if "sse" in resp:
        return status, headers.get("content-type", "text/event-stream"), str(resp["sse"]).encode("utf-8")
    if "body" in resp:
        return status, headers.get("content-type", "application/json"), json.dumps(resp["body"]).encode("utf-8")
    return status, headers.get("content-type", "application/octet-stream"), str(resp.get("raw", "")).encode("utf-8")
