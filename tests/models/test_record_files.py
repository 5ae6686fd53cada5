"""History files and JSON reports written by real sessions (tests/fixtures/records, made by its
make_fixtures.py: the demo agent, a case judged through the loopback Messages API with the real SDK,
the verdict cache, a Message Batch, every cause, infra retries, shards, a rerun, the sandbox, Ray) read
back into the typed records and written out again: byte for byte what was on disk.

History goes through the real store: read with `History`, then recorded into a fresh history with
`start_session` / `record_run` / `finish_session` (the writers a session uses): byte for byte, but for the one
change reading makes (an older version's fail the machine caused is an error). A JSON report's
session and runs are read back into `SessionInfo` / `RunRecord` and the report written again with the
report's own encoder.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.models import (
    Attempt,
    Cause,
    CauseKind,
    CheckResult,
    CheckStatus,
    JudgedArtifact,
    JudgeDetail,
    JudgeItem,
    RunRecord,
    RunStatus,
    SessionInfo,
    Vote,
)
from scarbook.models.session_parts import (
    MIXED,
    BatchRecord,
    Confinement,
    GateRecord,
    RerunLink,
    RunPlace,
    ShardHeader,
)
from scarbook.models.words import ExecutorType, GateMode, Isolation, Undecided
from scarbook.reports.table import report_run_from_dict, run_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "records"
SESSIONS = sorted(p for p in FIXTURES.glob("*/history/*") if p.is_dir())
REPORTS = sorted(FIXTURES.glob("*/reports/*.json"))


def _session_doc(folder: Path) -> dict:
    return json.loads((folder / "session.json").read_text())["session"]["1"]


@pytest.mark.parametrize("folder", SESSIONS, ids=lambda p: f"{p.parents[1].name}/{p.name}")
def test_history_reads_into_records_and_writes_back_byte_equal(folder: Path, tmp_path, monkeypatch):
    source = History(tmp_path / "old")
    shutil.copytree(folder, source.dir / folder.name)
    info = source.read_session(folder.name)
    runs = source.runs(folder.name)
    assert not runs.problems
    files = sorted(folder.glob("runs-*.jsonl"))
    assert len(runs) == sum(len(f.read_bytes().splitlines()) for f in files) > 0
    for run in runs:
        assert isinstance(run, RunRecord) and all(isinstance(c, CheckResult) for c in run.checks)
        assert isinstance(run.status, RunStatus) and all(isinstance(c.status, CheckStatus) for c in run.checks)
        assert all(isinstance(x.cause, Cause | None) for x in [run, *run.checks, *run.attempts])
        assert all(isinstance(a, Attempt) and isinstance(a.status, RunStatus) for a in run.attempts)
        assert all(isinstance(c.judge, JudgeDetail) for c in run.checks if c.type == "llm_judge" and c.judge)
        assert all(isinstance(i, JudgeItem) for c in run.checks if c.judge for i in c.judge.items)
    doc = _session_doc(folder)
    for name, kind in (("isolation", Confinement), ("executor", RunPlace), ("rerun_of", RerunLink), ("gate", GateRecord),
                       ("shard", ShardHeader), ("batch", BatchRecord)):
        part = getattr(info, name)
        assert isinstance(part, kind) if doc[name] else part is None, name  # the session's parts are records
    if info.isolation is not None:
        assert isinstance(info.isolation.ran, Isolation) or info.isolation.ran == MIXED
    if info.executor is not None:
        assert isinstance(info.executor.type, ExecutorType) or info.executor.type == MIXED
    if info.gate is not None:
        assert isinstance(info.gate.mode, GateMode) and isinstance(info.gate.undecided, Undecided) and info.gate.looks

    monkeypatch.setattr(os, "getpid", lambda: _session_doc(folder)["pid"])  # the pid session.json keeps
    again = History(tmp_path / "new")
    again.start_session(info)
    for path in files:  # each runs file in its own line order (the order the runs ended in)
        order = [json.loads(line)["k"] for line in path.read_bytes().splitlines()]
        case_id = path.name.removeprefix("runs-").removesuffix(".jsonl")
        by_k = {r.k: r for r in runs if r.case_id == case_id}
        for k in order:
            again.record_run(by_k[k])
    if info.finished_at is None:  # a session still judging (its Message Batch not collected)
        again.update_session(info)
    else:
        again.finish_session(info)
    for path in [folder / "session.json", *files]:
        assert (again.dir / folder.name / path.name).read_bytes() == _as_read(path.read_bytes()), path.name


def _as_read(data: bytes) -> bytes:
    """A history file's bytes as a history reads them: each line of an older version's that records a run the
    machine failed (its cause's kind infra) as a fail holds an error (history/records.counted_status)."""
    lines = data.splitlines(keepends=True)
    for i, line in enumerate(lines):
        doc = json.loads(line) if line.startswith(b'{"session_id"') else {}
        if doc.get("status") == "fail" and (doc.get("cause") or {}).get("kind") == "infra":
            lines[i] = line.replace(b'"status":"fail"', b'"status":"error"', 1)  # the run's own: its first key of that name
    return b"".join(lines)


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: f"{p.parents[1].name}/{p.name}")
def test_json_report_reads_into_records_and_writes_back_byte_equal(path: Path):
    report = json.loads(path.read_text())
    session = SessionInfo.from_dict(report["session"])
    runs = [report_run_from_dict(r) for r in report["runs"]]
    assert all(isinstance(r, RunRecord) for r in runs) and runs
    written = json.dumps(report | {"session": session.to_dict(), "runs": [run_json(r) for r in runs]}, indent=2)
    assert written == path.read_text()


def test_the_fixtures_hold_every_shape_they_are_for():
    """So the two tests above can fail: the fixtures hold the shapes the typed records must keep."""
    lines = [json.loads(line) for p in FIXTURES.glob("*/history/*/runs-*.jsonl") for line in p.read_text().splitlines()]
    judges = [c["judge"] for r in lines for c in r["checks"] if c.get("judge")]
    keys = {k for j in judges for k in j}
    assert {"items", "cache", "batch", "ref", "error", "reasks", "artifact_excerpt"} <= keys
    assert any(j.get("batch") == "pending" for j in judges)  # a check still waiting for its Message Batch
    assert any(len(r["attempts"]) > 1 for r in lines)  # infra retries
    assert {r["cause"]["kind"] for r in lines if r["cause"]} == {"agent", "infra", "judge", "case"}
    assert any(c.get("cause") for r in lines for c in r["checks"])  # a check that broke
    assert any(r["node"] for r in lines)  # a run on Ray
    sessions = [_session_doc(p) for p in SESSIONS]
    for field in ("decisions", "shard", "rerun_of", "batch", "executor", "isolation"):
        assert any(s[field] for s in sessions), field
    assert {s["state"] for s in sessions} == {"finished", "judging"}


OLD_JUDGE = {"verdict": "fail", "items": [{"item": 1, "text": "one line", "verdict": "FAIL", "reason": "two lines",
                                           "votes": ["FAIL"], "reasons": ["two lines"]}],
             "model": "claude-sonnet-4-5", "samples": 1,
             "usage": {"input_tokens": 900, "output_tokens": 80, "cache_read_tokens": 0, "cache_write_tokens": 0,
                       "cost_usd": 0.0039},
             "calls": 1, "retries": 0, "reasks": 0, "artifact": {"source": "tmp.txt", "bytes": 12, "truncated": False},
             "error": None}


def test_a_run_line_of_an_early_version_still_reads(tmp_path):
    """A runs line as the first versions wrote it (the five required fields, a check without index or
    cause, an attempt without paths, a judge record without temperature, excerpt or prompt digest): it
    reads into the typed records, the rest at their defaults, and the judge record writes back as it was."""
    history = History(tmp_path)
    folder = history.dir / "s1"
    folder.mkdir(parents=True)
    (folder / "session.json").write_text(json.dumps({"session": {"1": {
        "id": "s1", "label": "old", "started_at": "2026-11-01T10:00:00+00:00", "finished_at": "2026-11-01T10:01:00+00:00",
        "state": "finished", "runs_per_case": 1, "case_ids": ["c"]}}}))
    (folder / "runs-c.jsonl").write_text(json.dumps({
        "session_id": "s1", "case_id": "c", "k": 1, "status": "fail", "reason": "check 1 (contains): no",
        "checks": [{"type": "contains", "status": "fail", "detail": "no"},
                   {"type": "llm_judge", "status": "fail", "detail": "0/1 rubric items PASS", "judge": OLD_JUDGE}],
        "cause": {"kind": "infra", "rule": "api-overloaded", "evidence": "stderr: 529"},
        "attempts": [{"attempt": 1, "status": "error"}, {"attempt": 2, "status": "fail", "cause": None}]}) + "\n")
    [run] = history.runs("s1")
    assert run.cause == Cause(CauseKind.INFRA, "api-overloaded", "stderr: 529")
    assert run.attempts == [Attempt(1, RunStatus.ERROR), Attempt(2, RunStatus.FAIL)]
    assert run.checks[0].status == CheckStatus.FAIL and run.checks[0].index == 0 and run.checks[0].cause is None
    assert history.read_session("s1").executor is None and run.node == {}
    judge = run.checks[1].judge
    assert judge is not None and judge.verdict == CheckStatus.FAIL and judge.items[0].votes == (Vote.FAIL,)
    assert judge.temperature is None and judge.prompt_digest is None and not judge.has("temperature")
    assert judge.artifact == JudgedArtifact("tmp.txt", 12, False) and judge.usage.cost_usd == 0.0039
    assert json.dumps(run.checks[1].to_dict()["judge"]) == json.dumps(OLD_JUDGE)


def test_a_line_whose_judge_record_cannot_be_read_is_left_out_and_named(tmp_path):
    """The shape check looks at a line's fields, not inside its judge record: a judge record that cannot
    be read (a count that is not a number) leaves that line out, named, and the other runs count; the
    session recorded it, so it comes back as unjudged and the shortfall is named too (issue 33.14)."""
    source = History(tmp_path)
    folder = FIXTURES / "judged" / "history" / "20261205-021458-1450c"
    shutil.copytree(folder, source.dir / folder.name)
    runs_file = source.dir / folder.name / "runs-judge-me.jsonl"
    lines = runs_file.read_text().splitlines()
    doc = json.loads(lines[1])
    doc["checks"][1]["judge"]["calls"] = "many"
    runs_file.write_text("\n".join([lines[0], json.dumps(doc), *lines[2:]]) + "\n")
    runs = source.runs(folder.name)
    counted = [r for r in runs if r.status != RunStatus.UNJUDGED or "missing from history" not in (r.reason or "")]
    assert sorted(r.k for r in counted) == sorted(json.loads(line)["k"] for line in lines if line != lines[1])
    [missing] = [r for r in runs if r not in counted]  # the session recorded it: back as unjudged (issue 33.14)
    assert missing.k == doc["k"] and not missing.checks
    problem, short = runs.problems
    assert str(problem) == (
        f"history file {runs_file} line 2 is not counted: it is not a run record this version can read (invalid literal "
        f"for int() with base 10: 'many') — the runner never writes that (forged or damaged); delete it to silence "
        f"this: sed -i '2d' {runs_file}")
    assert f"holds {len(lines) - 1} runs of case judge-me, but session {folder.name} recorded {len(lines)}" in str(short)


def test_a_batch_record_built_a_step_at_a_time_writes_what_dict_update_wrote():
    """run/batch_session.py records its Message Batch a step at a time (what it submits, the ids it waits
    for, when each create was sent, when it was submitted): the typed record writes each step key for key
    and in the order the dict it replaces did, and reads back to the same."""
    doc: dict = {"digest": "ab12", "runs": {"r1": ["judge-me", 1, 2]}}
    batch = BatchRecord("ab12", {"r1": ["judge-me", 1, 2]}, keys=("digest", "runs"))
    doc.update(id=None, ids=[None, None], requests=3)
    batch = batch.updated(id=None, ids=(None, None), requests=3)
    doc.setdefault("sending", {})["0"] = "2026-12-05T06:00:00+00:00"
    batch = batch.updated(sending={**(batch.sending or {}), "0": "2026-12-05T06:00:00+00:00"})
    doc.update(id="msgbatch_1", ids=["msgbatch_1", None], submitted_at="2026-12-05T06:00:01+00:00")
    batch = batch.updated(id="msgbatch_1", ids=("msgbatch_1", None), submitted_at="2026-12-05T06:00:01+00:00")
    assert json.dumps(batch.to_dict()) == json.dumps(doc)
    again = BatchRecord.read(json.loads(json.dumps(doc)))
    assert json.dumps(again.to_dict()) == json.dumps(doc) and again.batch_ids == ["msgbatch_1", None]
