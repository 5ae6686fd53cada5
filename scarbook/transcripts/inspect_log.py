"""Inspect AI eval logs (`.json`, or `.eval` zip archives: see inspect_zip): one sample's transcript.

A log holds many samples (each sample id once per epoch); one is imported, `--sample ID[:EPOCH]`
picks which (ID alone is its first epoch). Without it, a log of one sample gives that one; a log of
several gives the first that did not pass (an error, or a score that is not correct), else the
first, with a warning naming the others (`scarbook import LOG --list` lists them all).

Messages: system, user and assistant text become messages (reasoning parts thinking), an assistant's
`tool_calls` tool calls, `role: tool` messages their results (an `error` marks a failed call). Inspect's
`text_editor` calls (create, str_replace, insert) give the files written, as for any transcript.
Content condensed into `attachment://<hash>` references is looked up in the sample's attachments.
The final answer is the sample's `output.completion`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.models import Usage
from scarbook.text import plural
from scarbook.transcripts.files import finish_transcript
from scarbook.transcripts.inspect_json import NotInspectJson, read_json_log, starts_like_inspect_json
from scarbook.transcripts.inspect_zip import EvalZip, looks_like_eval_zip
from scarbook.transcripts.model import (
    Message,
    NothingToImport,
    NotThisFormat,
    ToolCall,
    ToolResult,
    Transcript,
    date_of,
)
from scarbook.transcripts.source import Source
from scarbook.transcripts.text import preview

FORMAT = "inspect"
_PASSED = ("C", True, 1, 1.0)  # Inspect's CORRECT, and the numeric and boolean spellings of a full score
NO_SAMPLES = ("the Inspect log holds no samples (the eval ran with log_samples off, or stopped before any "
              "sample finished)")


def is_inspect_log(value: Any) -> bool:
    """A JSON Inspect eval log: version, and an `eval` spec naming its task and model."""
    return (isinstance(value, dict) and "version" in value and isinstance(value.get("eval"), dict)
            and "task" in value["eval"] and "model" in value["eval"])


@dataclass
class SampleRef:
    id: str
    epoch: int
    summary: dict[str, Any]  # id, epoch, input, scores, error (a summary, or the sample itself)

    @property
    def key(self) -> str:
        return f"{self.id}:{self.epoch}"

    @property
    def failed(self) -> bool:
        if self.summary.get("error"):
            return True
        scores = self.summary.get("scores")
        values = [s.get("value") for s in scores.values() if isinstance(s, dict)] if isinstance(scores, dict) else []
        return any(not isinstance(v, (dict, list)) and v not in _PASSED for v in values)

    def describe(self) -> str:
        scores = self.summary.get("scores")
        shown = [f"{name} {s.get('value')}" for name, s in scores.items() if isinstance(s, dict)][:3] \
            if isinstance(scores, dict) else []
        state = "error" if self.summary.get("error") else ", ".join(shown) or "not scored"
        return f"{state}; {preview(_input_text(self.summary.get('input')), 60)}"


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # a list of chat messages
        return " ".join(_content_text(m.get("content")) for m in value if isinstance(m, dict) and m.get("role") == "user")
    return ""


def _content_text(content: Any, kind: str = "text") -> str:
    """The text of a message's content (a string, or a list of parts) of one kind: text or reasoning."""
    if isinstance(content, str):
        return content if kind == "text" else ""
    if not isinstance(content, list):
        return ""
    out = []
    for part in content:
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if kind == "reasoning":
            if ptype == "reasoning" and not part.get("redacted"):
                out.append(str(part.get("summary") or part.get("reasoning") or ""))
        elif ptype == "text":
            out.append(str(part.get("text", "")))
        elif ptype in ("image", "audio", "video", "document"):
            out.append(f"[{ptype}]")
    return "\n".join(t for t in out if t)


def _resolve_attachments(value: Any, attachments: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if value.startswith("attachment://"):
            return attachments.get(value[len("attachment://"):], value)
        return value
    if isinstance(value, list):
        return [_resolve_attachments(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve_attachments(v, attachments) for k, v in value.items()}
    return value


def _refs_from_json(log: dict[str, Any]) -> list[SampleRef]:
    samples = log.get("samples")
    return [SampleRef(str(s.get("id")), int(s.get("epoch") or 1), s)
            for s in samples or [] if isinstance(s, dict)]


def _dataset_order(header: dict[str, Any]) -> dict[str, int]:
    """Sample id -> its place in the eval's dataset (`eval.dataset.sample_ids`), which Inspect lists in
    the dataset's order while the samples are logged as they finish."""
    spec = header.get("eval")
    dataset = spec.get("dataset") if isinstance(spec, dict) else None
    ids = dataset.get("sample_ids") if isinstance(dataset, dict) else None
    order: dict[str, int] = {}
    for sid in ids if isinstance(ids, list) else []:
        order.setdefault(str(sid), len(order))
    return order


def _pick(t: Transcript, refs: list[SampleRef], header: dict[str, Any], wanted: str | None, where: str) -> SampleRef:
    """The sample to import (see the module's docstring); `t.traces` lists them all when there are several."""
    if not refs:
        raise NothingToImport(NO_SAMPLES)
    order = _dataset_order(header)
    for r in refs:  # samples the dataset does not list: after it, in the log's order
        order.setdefault(r.id, len(order))
    refs = sorted(refs, key=lambda r: (order[r.id], r.epoch))  # as the dataset lists them, then by epoch
    if len(refs) > 1:
        t.traces = [(r.key, r.describe()) for r in refs]
    if wanted is not None:
        exact = [r for r in refs if r.key == wanted]
        by_id = [r for r in refs if r.id == wanted]
        if exact or by_id:
            return (exact or by_id)[0]
        shown = ", ".join(r.key for r in refs[:10]) + (f", … ({len(refs)} in all)" if len(refs) > 10 else "")
        raise ScarbookError(f"{where}: no sample {wanted!r} in this Inspect log; it holds {shown} "
                            "(--sample ID or ID:EPOCH; --list shows them)")
    if len(refs) == 1:
        return refs[0]
    failed = [r for r in refs if r.failed]
    chosen = failed[0] if failed else refs[0]
    t.warnings.append(f"the file holds {len(refs)} samples; showing {chosen.key} "
                      f"({'the first that did not pass' if failed else 'the first; none failed'}); "
                      "pick another with --sample ID[:EPOCH] (see --list)")
    return chosen


def _usage(model_usage: Any) -> Usage | None:
    if not isinstance(model_usage, dict) or not model_usage:
        return None
    total = Usage()
    for u in model_usage.values():
        if isinstance(u, dict):
            total.add(Usage(input_tokens=int(u.get("input_tokens") or 0), output_tokens=int(u.get("output_tokens") or 0),
                            cache_read_tokens=int(u.get("input_tokens_cache_read") or 0),
                            cache_write_tokens=int(u.get("input_tokens_cache_write") or 0),
                            cost_usd=float(u.get("total_cost") or 0.0)))
    return total


def _message(t: Transcript, m: dict[str, Any]) -> None:
    role, content = m.get("role"), m.get("content")
    if role in ("system", "user"):
        t.entries.append(Message(role, _content_text(content)))
    elif role == "assistant":
        thinking = _content_text(content, "reasoning")
        if thinking:
            t.entries.append(Message("assistant", thinking, kind="thinking"))
        text = _content_text(content)
        if text:
            t.entries.append(Message("assistant", text))
        for call in m.get("tool_calls") or []:
            if isinstance(call, dict):
                args = call.get("arguments")
                t.entries.append(ToolCall(str(call.get("id", "")), str(call.get("function", "")),
                                          args if isinstance(args, dict) else {"arguments": args}))
    elif role == "tool":
        err = m.get("error")
        text = _content_text(content)
        if isinstance(err, dict) and err.get("message") and not text:
            text = str(err["message"])
        t.entries.append(ToolResult(str(m.get("tool_call_id") or ""), text, is_error=bool(err)))


def sample_transcript(sample: dict[str, Any], header: dict[str, Any], t: Transcript) -> Transcript:
    found = sample.get("attachments")
    attachments: dict[str, Any] = found if isinstance(found, dict) else {}
    messages = _resolve_attachments(sample.get("messages") or [], attachments)
    if not any(isinstance(m, dict) and m.get("role") for m in messages):
        raise NothingToImport(f"sample {sample.get('id')}:{sample.get('epoch')} of the Inspect log has no messages")
    for m in messages:
        if isinstance(m, dict):
            _message(t, m)
    output = _resolve_attachments(sample.get("output"), attachments)
    completion = output.get("completion") if isinstance(output, dict) else None
    if isinstance(completion, str) and completion.strip():
        t.final_answer = completion
    spec: dict[str, Any] = header["eval"] if isinstance(header.get("eval"), dict) else {}
    t.model = (output.get("model") if isinstance(output, dict) else None) or spec.get("model")
    t.usage = _usage(sample.get("model_usage"))
    t.date = date_of(sample.get("started_at")) or date_of(spec.get("created"))
    error = sample.get("error")
    if isinstance(error, dict) and error.get("message"):
        t.warnings.append(f"the sample ended in an error: {preview(str(error['message']), 200)}")
    return finish_transcript(t)


def parse(src: Source) -> Transcript:
    t = Transcript(format=FORMAT, source=src.path)
    where = str(src.path)
    if looks_like_eval_zip(src.head, src.path):
        z = EvalZip(src.path)
        try:
            members = z.sample_names()
            summaries = {(str(s.get("id")), int(s.get("epoch") or 1)): s for s in z.summaries()}
            refs = [SampleRef(sid, epoch, summaries.get((sid, epoch), {"id": sid, "epoch": epoch}))
                    for sid, epoch in members]
            header = z.header()
            ref = _pick(t, refs, header, src.trace, where)
            sample = z.member(members[(ref.id, ref.epoch)])
        finally:
            z.close()
        if not isinstance(sample, dict):
            raise ScarbookError(f"{where}: sample {ref.key} of this Inspect .eval log is not a JSON object")
    elif starts_like_inspect_json(src.head):
        try:
            log = read_json_log(src.path, lambda value: preview(_input_text(value), 60))
        except NotInspectJson as exc:
            raise NotThisFormat(f"not an Inspect eval log: {exc}") from None
        if log.cut:
            if not log.samples:
                raise NothingToImport(f"{log.cut}, before any whole sample")
            t.warnings.append(f"{log.cut}: the {plural(len(log.samples), 'sample')} before it can be imported")
        header = log.header
        offsets = {}
        refs = []
        for offset, reduced in log.samples:
            ref = SampleRef(str(reduced.get("id")), int(reduced.get("epoch") or 1), reduced)
            offsets[ref.key] = offset
            refs.append(ref)
        ref = _pick(t, refs, header, src.trace, where)
        sample = log.sample(offsets[ref.key])
        del log
    elif src.is_json and is_inspect_log(src.json):
        header = src.json
        ref = _pick(t, _refs_from_json(header), header, src.trace, where)
        sample = ref.summary
    else:
        raise NotThisFormat("not an Inspect eval log (a .eval archive, or JSON with version and eval.task)")
    t.trace = ref.key if t.traces else None
    t = sample_transcript(sample, header, t)
    kept = {k: v for k, v in header.items() if k not in ("samples", "reductions")}
    t.excerpt = (".json", json.dumps({**kept, "samples": [sample]}, ensure_ascii=False, indent=1).encode("utf-8"))
    return t

