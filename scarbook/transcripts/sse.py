"""Server-sent event streams of model APIs, read one way for every reader of them: a cassette's recorded
reply (`transcripts/cassette.py`) and the recorder's live one (`record/apis.py`).

`sse_events` gives each event's `data:` payload, parsed (a payload that is not JSON kept as text; the
`[DONE]` marker dropped); `fold_chat_chunks` folds OpenAI Chat Completions chunks back into the one
`chat.completion` they stream: the first choice's text and tool calls (their arguments joined from
their pieces), the model and the usage the last chunk reports.
"""

from __future__ import annotations

import json
from typing import Any


def sse_events(text: str) -> list[Any]:
    """The `data:` payloads of an SSE stream, parsed (a payload that is not JSON is kept as text)."""
    events: list[Any] = []
    data: list[str] = []
    for line in text.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            payload = "\n".join(data)
            data = []
            if payload == "[DONE]":
                continue
            try:
                events.append(json.loads(payload))
            except (ValueError, RecursionError):
                events.append(payload)
    return events


def fold_chat_chunks(events: list[Any]) -> dict[str, Any] | None:
    """Chat Completions chunks as the one response they stream, or None when there are none."""
    chunks = [e for e in events if isinstance(e, dict) and isinstance(e.get("choices"), list)]
    if not chunks:
        return None
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    usage: Any = None
    for c in chunks:
        usage = c.get("usage") or usage
        for choice in c["choices"]:  # n > 1 interleaves its choices, a chunk each: choice 0 is the answer
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict) or choice.get("index", 0) not in (0, None):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for tc in delta.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                index = tc.get("index")
                slot = calls.setdefault(index if isinstance(index, int) else 0, {"id": "", "name": "", "arguments": ""})
                slot["id"] = str(tc.get("id") or slot["id"])
                fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else {}
                slot["name"] = str(fn.get("name") or slot["name"])
                slot["arguments"] += str(fn.get("arguments") or "")
    message = {"role": "assistant", "content": "".join(text) or None,
               "tool_calls": [{"id": s["id"], "type": "function", "function": {"name": s["name"],
                                                                              "arguments": s["arguments"]}}
                              for _, s in sorted(calls.items())]}
    return {"object": "chat.completion", "model": chunks[0].get("model"), "choices": [{"message": message}],
            "usage": usage}
