"""A session as an Inspect AI eval log (`scarbook export SESSION --format inspect`).

Written with scarbook's own code in Inspect's JSON log format (log version 2, the `.json` files
`inspect eval --log-format json` writes), so `inspect view` and `inspect_ai.log.read_eval_log` open
it; scarbook never needs inspect_ai to write it. The mapping (docs/inspect.md says the same):

- the session is the eval: task `scarbook`, its label (or id) as the display name, the agent as the
  model, `epochs` the session's runs per case, the session's facts in the eval's metadata;
- each run is a sample: sample id = case id, epoch = the run's k; input = the case's task; its
  messages are the run's transcript when the agent left one (messages, thinking, tool calls and their
  results, as `scarbook import` reads it), else the task and the agent's output; the output is the
  agent's output;
- scores: `verdict` is the run's status (pass `C`, fail `I`); each check is a score named by its
  type (a second check of the same type is `type1`, as Inspect names scorers), `C` when it passed
  and `I` when it failed, its detail the explanation. A check that was skipped (a judge check under --skip-judge) or broke
  has no score, an error check carries its detail in the sample's metadata;
- an `error` run is a sample error (its reason as the message) with no verdict; an `unjudged` run
  has no `verdict` score either (no verdict, no rate); both are listed in the sample's metadata
  with their status, reason and cause;
- results: per score, `accuracy` over the samples that have it (for `verdict`: the session's pooled
  pass rate over the runs with a verdict), and per case the rate as the `verdict` reduction.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from scarbook import __version__
from scarbook.fs.files import write_named_file
from scarbook.models import Case, CheckStatus, RunRecord, RunStatus, SessionInfo, SessionState, Usage
from scarbook.text import clean_text
from scarbook.transcripts import Message, ToolCall, ToolResult, Transcript
from scarbook.transcripts.run_file import TranscriptUnreadable, read_run_transcript

LOG_VERSION = 2
TRANSCRIPT_CAP = 8 << 20  # bytes of a run's transcript put in the log; a larger one is named, not copied
VERDICT = "verdict"  # the score that is the run's status
CORRECT, INCORRECT = "C", "I"  # Inspect's values for a correct / incorrect answer
_LISTED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")  # Inspect's log_file_pattern
_VERDICT_VALUE = {RunStatus.PASS: CORRECT, RunStatus.FAIL: INCORRECT}
_CHECK_VALUE = {CheckStatus.PASS: CORRECT, CheckStatus.FAIL: INCORRECT}
_LOG_STATUS = {SessionState.FINISHED: "success", SessionState.RUNNING: "started",
               SessionState.CANCELLED: "cancelled", SessionState.STOPPED_BUDGET: "cancelled"}


def _iso(stamp: str | None) -> str | None:
    """`stamp` when it is an ISO time Inspect's reader accepts, else None (one bad time in an old or
    foreign history record would make Inspect refuse the whole log)."""
    try:
        return dt.datetime.fromisoformat(stamp).isoformat() if stamp else None
    except ValueError:
        return None


def _model(info: SessionInfo) -> str:
    return info.agent or "agent"


def _usage(u: Usage) -> dict[str, Any]:
    return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens,
            "input_tokens_cache_read": u.cache_read_tokens, "input_tokens_cache_write": u.cache_write_tokens,
            "total_cost": u.cost_usd}


def check_score_names(run: RunRecord) -> list[str]:
    """Each check's score name: its type, then `type1`, `type2` for further checks of that type (as
    Inspect names a task's scorers of one name)."""
    seen: dict[str, int] = {}
    names = []
    for c in run.checks:
        n = seen[c.type] = seen.get(c.type, -1) + 1
        names.append(f"{c.type}{n}" if n else c.type)
    return names


def _scores(run: RunRecord) -> dict[str, dict[str, Any]]:
    scores: dict[str, dict[str, Any]] = {}
    if run.status in _VERDICT_VALUE:
        scores[VERDICT] = {"value": _VERDICT_VALUE[run.status], "explanation": clean_text(run.reason),
                           "metadata": {"status": str(run.status)}}
    for name, c in zip(check_score_names(run), run.checks, strict=True):
        if c.status in _CHECK_VALUE:
            score: dict[str, Any] = {"value": _CHECK_VALUE[c.status], "explanation": clean_text(c.detail),
                                     "metadata": {"type": c.type, "index": c.index, "status": c.status}}
            if c.judge is not None:
                score["metadata"]["judge"] = c.judge.to_dict()
            scores[name] = score
    return scores


def transcript_messages(t: Transcript, task: str, model: str) -> list[dict[str, Any]]:
    """A transcript's timeline as Inspect chat messages: a tool call joins the assistant message before
    it, its result is a `tool` message (an error result carries a ToolCallError); a subagent's side
    conversation is left out. The task leads when the transcript does not start with a user message."""
    msgs: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for e in t.entries:
        if getattr(e, "sidechain", False):
            continue
        if isinstance(e, Message):
            if e.role not in ("system", "user", "assistant"):
                continue
            content: Any = [{"type": "reasoning", "reasoning": clean_text(e.text)}] if e.kind == "thinking" \
                else clean_text(e.text)
            msg: dict[str, Any] = {"role": e.role, "content": content}
            if e.role == "assistant":
                msg["model"] = model
            msgs.append(msg)
        elif isinstance(e, ToolCall):
            names[e.id] = e.name
            if not msgs or msgs[-1]["role"] != "assistant":
                msgs.append({"role": "assistant", "content": "", "model": model})
            msgs[-1].setdefault("tool_calls", []).append(
                {"id": e.id, "function": e.name, "arguments": e.input if isinstance(e.input, dict) else {}, "type": "function"})
        elif isinstance(e, ToolResult):
            result: dict[str, Any] = {"role": "tool", "content": clean_text(e.text), "tool_call_id": e.call_id,
                                      "function": names.get(e.call_id)}
            if e.is_error:
                result["error"] = {"type": "unknown", "message": clean_text(e.text)}
            msgs.append(result)
    if not msgs or msgs[0]["role"] not in ("system", "user"):
        msgs.insert(0, {"role": "user", "content": task, "source": "input"})
    return msgs


def _messages(run: RunRecord, task: str, output: str, model: str) -> tuple[list[dict[str, Any]], str]:
    """The sample's messages, and a note when the run's transcript could not be used."""
    plain = [{"role": "user", "content": task, "source": "input"},
             {"role": "assistant", "content": output, "source": "generate", "model": model}]
    if not run.transcript_path:
        return plain, ""
    try:
        t = read_run_transcript(run.transcript_path, TRANSCRIPT_CAP)
    except TranscriptUnreadable as exc:
        return plain, f"the run's transcript is not in the log: {exc}"
    return transcript_messages(t, task, model), ""


def _sample(run: RunRecord, case: Case | None, info: SessionInfo) -> dict[str, Any]:
    task = case.task if case is not None else run.case_id
    output = clean_text(run.output_excerpt)
    assistant = {"role": "assistant", "content": output, "source": "generate", "model": _model(info)}
    messages, note = _messages(run, task, output, _model(info))
    sample: dict[str, Any] = {
        "id": run.case_id, "epoch": run.k, "input": task, "target": "",
        "messages": messages,
        "output": {"model": _model(info), "completion": output,
                   "choices": [{"message": assistant, "stop_reason": "stop"}]},
        "scores": _scores(run),
        "metadata": {"status": str(run.status), "reason": clean_text(run.reason), "exit_code": run.exit_code,
                     "checks": [{"type": c.type, "status": c.status, "detail": clean_text(c.detail)} for c in run.checks],
                     "output_truncated": run.output_truncated, "workspace": run.workspace,
                     "diff": run.diff.to_dict(), "judge_calls": run.judge_calls, "node": run.node,
                     "cause": run.cause.to_dict() if run.cause else None, "attempts": len(run.attempts) or 1,
                     "transcript": run.transcript_path},
        "model_usage": {_model(info): _usage(run.agent_usage)},
        "total_time": run.duration_s, "working_time": run.duration_s,
        "uuid": f"{run.session_id}-{run.case_id}-{run.k}",
    }
    if _iso(run.started_at):
        sample["started_at"] = _iso(run.started_at)
    if note:
        sample["metadata"]["transcript_note"] = note
    if run.status == RunStatus.ERROR:
        sample["error"] = {"message": clean_text(run.reason), "traceback": "", "traceback_ansi": ""}
    return sample


def _accuracy(values: list[str]) -> float:
    return sum(v == CORRECT for v in values) / len(values) if values else 0.0


def _results(samples: list[dict[str, Any]]) -> dict[str, Any]:
    by_score: dict[str, list[str]] = {}
    for s in samples:
        for name, score in s["scores"].items():
            by_score.setdefault(name, []).append(score["value"])
    names = ([VERDICT] if VERDICT in by_score else []) + sorted(n for n in by_score if n != VERDICT)
    scores = [{"name": name, "scorer": name, "scored_samples": len(by_score[name]),
               "unscored_samples": len(samples) - len(by_score[name]), "params": {},
               "metrics": {"accuracy": {"name": "accuracy", "value": _accuracy(by_score[name]), "params": {}}}}
              for name in names]
    return {"total_samples": len(samples), "completed_samples": sum("error" not in s for s in samples),
            "scores": scores}


def _reductions(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's rate (the mean of its verdicts) as the `verdict` reduction the viewer shows per sample."""
    by_case: dict[str, list[str]] = {}
    for s in samples:
        if VERDICT in s["scores"]:
            by_case.setdefault(s["id"], []).append(s["scores"][VERDICT]["value"])
    if not by_case:
        return []
    return [{"scorer": VERDICT, "reducer": "mean",
             "samples": [{"value": _accuracy(v), "sample_id": cid} for cid, v in by_case.items()]}]


def build_inspect_log(info: SessionInfo, runs: Iterable[RunRecord], cases: Mapping[str, Case]) -> dict[str, Any]:
    """The session as an Inspect eval log (a JSON-ready dict)."""
    runs = sorted(runs, key=lambda r: (r.case_id, r.k))
    samples = [_sample(r, cases.get(r.case_id), info) for r in runs]
    case_ids = list(dict.fromkeys([*info.case_ids, *(r.case_id for r in runs)]))
    total = Usage()
    for r in runs:
        total.add(r.agent_usage)
    state = SessionState.parse(info.state)
    log: dict[str, Any] = {
        "version": LOG_VERSION,
        "status": _LOG_STATUS.get(state, "error") if isinstance(state, SessionState) else "error",
        "eval": {
            "eval_id": info.id, "run_id": info.id, "created": _iso(info.started_at) or _iso(info.finished_at) or "1970-01-01T00:00:00+00:00", "task": "scarbook",
            "task_id": info.id, "task_version": 0, "task_display_name": info.label or info.id,
            "dataset": {"name": "scarbook cases", "samples": len(case_ids), "sample_ids": case_ids, "shuffled": False},
            "model": _model(info), "config": {"epochs": info.runs_per_case or max((r.k for r in runs), default=1)},
            "revision": {"type": "git", "origin": "", "commit": info.git_revision} if info.git_revision else None,
            "packages": {"scarbook": __version__},
            "metadata": {"scarbook_session": info.id, "label": info.label, "state": str(info.state),
                         "agent": info.agent, "judge_model": info.judge_model, "partial": info.partial,
                         "git_revision": info.git_revision, "executor": info.executor.to_dict() if info.executor else {}, "note": info.note},
            "scorers": [],
        },
        "plan": {"name": "plan", "steps": [{"solver": _model(info), "params": {}}], "config": {}},
        "results": _results(samples),
        "stats": {"started_at": _iso(info.started_at) or "", "completed_at": _iso(info.finished_at) or "",
                  "model_usage": {_model(info): _usage(total)}},
        "samples": samples,
        "reductions": _reductions(samples),
    }
    if log["eval"]["revision"] is None:
        del log["eval"]["revision"]
    if log["status"] == "error":
        log["error"] = {"message": f"session {info.id} is {str(info.state)!r}", "traceback": "", "traceback_ansi": ""}
    log["eval"]["scorers"] = [{"name": s["name"], "options": {}, "metrics": [{"name": "accuracy", "options": {}}],
                               "metadata": {}} for s in log["results"]["scores"]]
    return log


def write_inspect_log(path: Path, info: SessionInfo, runs: Iterable[RunRecord], cases: Mapping[str, Case]) -> int:
    """Write the log to `path` (0644, atomically); returns the number of samples written."""
    log = build_inspect_log(info, runs, cases)
    write_named_file(path, json.dumps(log, indent=2, ensure_ascii=False))
    return len(log["samples"])


def default_log_name(info: SessionInfo) -> str:
    """Inspect's own naming, `<start time>_<task>_<id>.json`: `inspect view` lists a `.json` log only
    when its name starts with the time."""
    try:
        when = dt.datetime.fromisoformat((info.started_at or "").replace("Z", "+00:00"))
    except ValueError:
        when = dt.datetime.fromtimestamp(0, dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    stamp = when.isoformat(timespec="seconds").replace(":", "-").replace("+", "-")  # as Inspect spells it
    return f"{stamp}_scarbook_{info.id.replace('-', '').replace('_', '')}.json"


def viewer_lists(name: str) -> bool:
    """True when `inspect view` lists a `.json` log of this name (it starts with an ISO time)."""
    return bool(_LISTED.match(name)) and name.endswith(".json")
