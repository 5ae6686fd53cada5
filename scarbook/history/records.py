"""Which history records the runner wrote: every record read back is checked before it counts.

History sits within the agent's reach (unless the run is sandboxed), and disks and people damage
files. A runs line counts only if it has the shape the runner writes (the right fields with the right
types, a known status) and fits the session's plan as session.json states it (its session, its case,
a k from 1 to runs_per_case, each k once). Anything else is left out of every number and reported:
file, line, why, and how to silence it.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from scarbook.models import (
    CAUSE_KINDS,
    RUN_STATUSES,
    CauseKind,
    CheckStatus,
    RunRecord,
    SessionInfo,
    Usage,
)
from scarbook.models.run import CHANGE_KINDS
from scarbook.models.words import RunStatus
from scarbook.text import clean_record_text, clean_text, plural

R = TypeVar("R")

if TYPE_CHECKING:
    pass

_CHECK_STATUSES: tuple[CheckStatus, ...] = tuple(CheckStatus)


_NONE = type(None)


def _finite(v: Any) -> bool:
    return type(v) is int or math.isfinite(v)


def _all_str(v: Any) -> bool:
    return all(type(x) is str for x in (v.values() if type(v) is dict else v))


# A field's check: (the exact types it may have, their name in a message, a further test or None).
# Exact types, not isinstance: true/false is not an integer here; a check costs one set lookup.
_STR = ({str}, "a string", None)
_INT = ({int}, "an integer", None)
_NUM = ({int, float}, "a number", _finite)
_BOOL = ({bool}, "true or false", None)
_OPT_STR = ({str, _NONE}, "a string or null", None)
_OPT_INT = ({int, _NONE}, "an integer or null", None)
_DICT = ({dict}, "an object", None)
_OPT_DICT = ({dict, _NONE}, "an object or null", None)
_LIST = ({list}, "a list", None)
_STR_LIST = ({list}, "a list of strings", _all_str)
_STR_MAP = ({dict}, "a map of case id to text", _all_str)
_ARTIFACT_MAP = ({dict}, "a map of check index to {sha256 | not_kept | refused: text}",
                 lambda v: all(type(a) is dict and _all_str(a) for a in v.values()))

RUN_FIELDS = {"session_id": _STR, "case_id": _STR, "k": _INT, "status": _STR, "reason": _STR,
              "checks": _LIST, "output_excerpt": _STR, "output_truncated": _BOOL, "exit_code": _OPT_INT,
              "duration_s": _NUM, "started_at": _STR, "workspace": _STR, "workspace_kept": _BOOL,
              "diff": _DICT, "agent_usage": _DICT, "judge_usage": _DICT, "judge_calls": _INT,
              "judge_calls_saved": _INT, "transcript_path": _OPT_STR, "stderr_path": _OPT_STR,
              "notes": _STR_LIST, "cause": _OPT_DICT, "attempts": _LIST,
              "judge_artifacts": _ARTIFACT_MAP, "agent": _STR, "recording": _STR}
RUN_REQUIRED = ("session_id", "case_id", "k", "status", "reason")
CHECK_FIELDS = {"type": _STR, "status": _STR, "detail": _STR, "index": _INT, "judge": _OPT_DICT,
                "duration_s": _NUM, "cause": _OPT_DICT, "call": _OPT_DICT}
CAUSE_FIELDS = {"kind": _STR, "rule": _STR, "evidence": _STR}
DIFF_FIELDS = {"created": _STR_LIST, "modified": _STR_LIST, "deleted": _STR_LIST,
               "left_out": ({dict}, "a map of created/modified/deleted to a count of names",
                            lambda v: all(k in CHANGE_KINDS and type(n) is int and n >= 0 for k, n in v.items()))}
USAGE_FIELDS = {name: _NUM for name in Usage.__dataclass_fields__}
def _executor_ok(v: dict) -> bool:
    """{} (an older record), or {"type": "local"} / {"type": "ray", "address": str or null}."""
    return not v or (isinstance(v.get("type"), str) and isinstance(v.get("address"), (str, type(None))))


def _isolation_ok(v: dict) -> bool:
    """{} (an older record, a rejudge), or {"ran": "sandbox" | "none" | "mixed", ...}."""
    return not v or isinstance(v.get("ran"), str)


def _agents_ok(v: list) -> bool:
    """[] (a session of one agent), or each agent of an `eval --agents` session: {name: str, ...}, no name twice."""
    names = [a.get("name") for a in v if type(a) is dict]
    return len(names) == len(v) and all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)


SESSION_FIELDS = {"id": _STR, "label": _STR, "started_at": _STR, "finished_at": _OPT_STR, "state": _STR,
                  "runs_per_case": _INT, "case_ids": ({list}, "a list of case ids", _all_str),
                  "fingerprint": _STR, "agent": _STR, "judge_model": _STR, "git_revision": _OPT_STR,
                  "case_digests": _STR_MAP, "partial": _BOOL, "decisions": _STR_MAP, "note": _STR,
                  "gate": _DICT, "rerun_of": _DICT, "batch": _DICT, "executor": ({dict}, "an object with a string type", _executor_ok),
                  "isolation": ({dict}, "an object with a string `ran`", _isolation_ok),
                  "recorded": ({dict}, "a map of case id to a count of runs",
                               lambda v: all(type(n) is int and n >= 0 for n in v.values())),
                  "agents": ({list}, "a list of agents, each an object with a string name", _agents_ok)}


def _type_problem(doc: dict, fields: dict, where: str = "") -> str | None:
    for name, value in doc.items():  # fields the runner does not write (a newer version's) pass
        spec = fields.get(name)
        if spec is not None and (type(value) not in spec[0] or (spec[2] is not None and not spec[2](value))):
            return f"{where}{name} is {_kind(value)}, not {spec[1]}"
    return None


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(v), type(v).__name__)


def session_problem(doc: Any) -> str | None:
    """Why a session.json record cannot be used, or None."""
    if not isinstance(doc, dict):
        return f"its session record is {_kind(doc)}, not an object"
    if not isinstance(doc.get("id"), str):
        return "its session record has no id"
    return _type_problem(doc, SESSION_FIELDS, "field ")


def session_from_doc(doc: dict) -> SessionInfo:
    """A SessionInfo from a record that passed session_problem; its label and note are made safe to
    print (history is within an unconfined agent's reach), before any command cuts them to a width."""
    info = SessionInfo.from_dict(doc)
    info.label, info.note = clean_text(info.label), clean_text(info.note)
    return info


def run_shape_problem(doc: Any) -> str | None:
    """Why a runs line is not a record the runner writes (judged by its shape alone), or None."""
    if not isinstance(doc, dict):
        return f"it is {_kind(doc)}, not a run record"
    missing = [f for f in RUN_REQUIRED if f not in doc]
    if missing:
        return f"it lacks {', '.join(missing)}"
    why = _type_problem(doc, RUN_FIELDS, "field ")
    if why:
        return why
    if doc["status"] not in RUN_STATUSES:
        return f"status {doc['status']!r} is not one of {', '.join(RUN_STATUSES)}"
    for i, check in enumerate(doc.get("checks", [])):
        if not isinstance(check, dict) or not {"type", "status", "detail"} <= check.keys():
            return f"check {i + 1} is not a check result"
        why = _type_problem(check, CHECK_FIELDS, f"check {i + 1} ")
        if why:
            return why
        if check["status"] not in _CHECK_STATUSES:
            return f"check {i + 1} status {check['status']!r} is not one of {', '.join(_CHECK_STATUSES)}"
    for name, fields in (("diff", DIFF_FIELDS), ("agent_usage", USAGE_FIELDS), ("judge_usage", USAGE_FIELDS)):
        why = _type_problem(doc.get(name, {}), fields, f"{name}.")
        if why:
            return why
    causes = [("cause", doc.get("cause"))] + [(f"check {i + 1} cause", c.get("cause"))
                                              for i, c in enumerate(doc.get("checks", []))]
    for i, attempt in enumerate(doc.get("attempts", [])):
        if not isinstance(attempt, dict) or type(attempt.get("status")) is not str:
            return f"attempt {i + 1} is not an attempt record"
        if attempt["status"] not in RUN_STATUSES:
            return f"attempt {i + 1} status {attempt['status']!r} is not one of {', '.join(RUN_STATUSES)}"
        causes.append((f"attempt {i + 1} cause", attempt.get("cause")))
    for where, cause in causes:
        why = _cause_problem(cause, where)
        if why:
            return why
    return None


def status_problem(doc: dict) -> str | None:
    """Why a well-shaped record's status does not follow from its checks, or None: a pass or an unjudged
    run is only ever written with no check failed (a pass: every check passed; unjudged: a judge check
    skipped); a fail or an error counts against its case whatever its checks say, so it is not questioned.
    (`scarbook merge` adds that the case's every check is there, which it can count from the case.)"""
    status, checks = doc["status"], doc.get("checks", [])
    if status not in (RunStatus.PASS, RunStatus.UNJUDGED):
        return None
    for i, c in enumerate(checks):
        if c["status"] in (CheckStatus.FAIL, CheckStatus.ERROR) or (status == RunStatus.PASS and c["status"] != CheckStatus.PASS):
            return f"it is marked {status}, but check {c.get('index', i) + 1} ({c['type']}) is {c['status']}"
    if status == RunStatus.UNJUDGED and checks and all(c["status"] == CheckStatus.PASS for c in checks):
        return "it is marked unjudged, but every check passed"
    return None


def _cause_problem(cause: Any, where: str) -> str | None:
    """Why a cause ({kind, rule, evidence}) is not one the runner writes; None when absent or fine."""
    if cause is None:
        return None
    if type(cause) is not dict or not CAUSE_FIELDS.keys() <= cause.keys():
        return f"{where} is not a cause (kind, rule, evidence)"
    why = _type_problem(cause, CAUSE_FIELDS, f"{where} ")
    if why:
        return why
    if cause["kind"] not in CAUSE_KINDS:
        return f"{where} kind {cause['kind']!r} is not one of {', '.join(CAUSE_KINDS)}"
    return None


def run_from_doc(doc: dict) -> RunRecord:
    """A RunRecord from a line that passed run_shape_problem, its status as counted (`counted_status`); its text
    is made safe to print."""
    record = clean_record_text(RunRecord.from_dict(doc))
    record.status = counted_status(doc)
    return record


def counted_status(doc: dict) -> RunStatus:
    """A well-shaped record's status as this version counts it. A fail the machine caused (its cause's kind is
    infra) was written by versions before such a run became an error: no verdict was reached (DESIGN's run
    statuses; run/attempts.py makes a run whose last attempt is still infra an error). It is read as one, so an
    old session's rate leaves it out of the denominator as a new one's does; the file keeps what was written."""
    status = RunStatus(doc["status"])
    cause = doc.get("cause")
    if status == RunStatus.FAIL and cause is not None and cause["kind"] == CauseKind.INFRA:
        return RunStatus.ERROR
    return status


def plan_problem(doc: dict, info: SessionInfo, case_id: str) -> str | None:
    """Why a well-shaped record does not fit the session's plan, or None."""
    if doc["session_id"] != info.id:
        return f"it names session {doc['session_id']!r}, not {info.id}"
    if doc["case_id"] != case_id:
        return f"it names case {doc['case_id']!r}, not {case_id!r} whose runs this file holds"
    k = doc["k"]
    if info.runs_per_case > 0 and not 1 <= k <= info.runs_per_case:
        return f"run k={k} is outside this session's plan (k from 1 to {info.runs_per_case})"
    if k < 1:
        return f"run k={k} is not a run number"
    agent, names = doc.get("agent", ""), info.agent_names
    if names and agent not in names:
        return (f"it names agent {agent!r}, which this session did not run ({', '.join(names)})" if agent else
                f"it names no agent, and this session ran several ({', '.join(names)})")
    if agent and not names:
        return f"it names agent {agent!r}, and this session ran one agent"
    return None


def excluded_message(path: Path, lines: list[int], why: str) -> str:
    where = f"line {lines[0]} is" if len(lines) == 1 else f"lines {', '.join(map(str, lines))} are"
    sed = ";".join(f"{n}d" for n in lines)
    return (f"history file {path} {where} not counted: {why} — the runner never writes that (forged or "
            f"damaged); delete it to silence this: sed -i '{sed}' {path}")


_SEVERAL = re.compile(r" lines ((?:\d+, )*\d+) are not counted")
_ONE = re.compile(r" line \d+ is not counted|ends in a half-written run \(line \d+")


def lines_left_out(problem: object) -> int:
    """How many lines of a runs file a reading problem left out (excluded_message's, or a cut last line);
    0 for a problem that names none (a whole file that could not be read)."""
    text = str(problem)
    if m := _SEVERAL.search(text):
        return len(m.group(1).split(", "))
    return 1 if _ONE.search(text) else 0


def primary_agent(info: SessionInfo) -> str:
    """A session of several agents (`eval --agents`): its baseline's name, whose runs stand for the session
    wherever one rate per case is read (the library, trends, `diff`, `baseline set`); "" for one agent."""
    names = info.agent_names
    return names[0] if len(names) > 1 else ""


def primary_runs(info: SessionInfo, runs: Iterable[R]) -> list[R]:
    """The runs that stand for the session: all of them, or the baseline's in a session of several agents."""
    agent = primary_agent(info)
    return [r for r in runs if getattr(r, "agent", "") == agent] if agent else list(runs)


class RunOutcome(NamedTuple):
    """What a count needs of a run that counts (a trend reads thousands: no full RunRecord)."""

    case_id: str
    k: int
    status: str
    agent: str = ""  # a session of several agents: whose run it is


def outcome_from_doc(doc: dict) -> RunOutcome:
    return RunOutcome(doc["case_id"], doc["k"], counted_status(doc), doc.get("agent", ""))


def sort_runs(path: Path, docs: dict[int, Any], info: SessionInfo, case_id: str,
              bad_lines: dict[int, str], make: Callable[[dict], Any] = run_from_doc) -> tuple[list, list[str]]:
    """The runs of one runs file that count (each made by `make`: a RunRecord, or a RunOutcome), and
    a message for each line (or group) left out.

    `docs` maps line number to the parsed line; `bad_lines` the lines that did not even parse."""
    problems = {n: why for n, why in bad_lines.items()}
    fitting: dict[int, list[int]] = defaultdict(list)
    for n, doc in docs.items():
        why = run_shape_problem(doc) or plan_problem(doc, info, case_id) or status_problem(doc)
        if why:
            problems[n] = why
        else:
            fitting[doc["k"]].append(n)
    messages = [(n, excluded_message(path, [n], why)) for n, why in problems.items()]
    runs = []
    for k, lines in fitting.items():
        if len(lines) > 1:  # which copy is the runner's cannot be told: none of them counts
            messages.append((lines[0], excluded_message(
                path, lines, f"run k={k} is recorded {len(lines)} times and the runner records each run once")))
        else:
            try:
                runs.append(make(docs[lines[0]]))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a part the shape check does not look into
                messages.append((lines[0], excluded_message(path, lines, f"it is not a run record this version can read ({exc})")))
    return runs, [m for _, m in sorted(messages)]


def fill_short(path: Path, info: SessionInfo, case_id: str, runs: list, make: Callable[[dict], Any]) -> str | None:
    """When `runs` (what counts of a case's runs file) are fewer than the session recorded when it ended
    (lines deleted, or left out as forged or damaged), the missing ones are added as unjudged (so the case
    has no verdict in the session) and the message saying so is returned; else None."""
    short = info.recorded.get(case_id, 0) - len(runs)
    if short <= 0:
        return None
    runs += [make(missing_doc(info, case_id, k)) for k in _free_ks(short, [r.k for r in runs])]
    return short_message(path, info, case_id, info.recorded[case_id] - short)


def short_message(path: Path, info: SessionInfo, case_id: str, found: int) -> str:
    recorded, gone = info.recorded[case_id], info.recorded[case_id] - found
    return (f"history file {path} holds {plural(found, 'run')} of case {case_id}, but session "
            f"{info.id} recorded {recorded} when it ended — {gone} {'was' if gone == 1 else 'were'} deleted or left "
            f"out (forged or damaged): the session is damaged and case {case_id} has no verdict in it")


def missing_doc(info: SessionInfo, case_id: str, k: int) -> dict[str, Any]:
    """A run the session recorded whose line is gone: unjudged (no verdict, so its case has none)."""
    return {"session_id": info.id, "case_id": case_id, "k": k, "status": "unjudged", "checks": [],
            "reason": "missing from history: the session recorded this run, its line is gone (deleted or "
                      "left out as forged or damaged) — the case has no verdict in this session"}


def _free_ks(count: int, taken: list[int]) -> list[int]:
    used, out, k = set(taken), list[int](), 0
    while len(out) < count:
        k += 1
        if k not in used:
            out.append(k)
    return out
