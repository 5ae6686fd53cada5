"""A run the machine failed (its cause's kind is infra) that an older scarbook recorded as a fail is read as an
error, as this version records such a run: no verdict was reached, so it stays out of the rate's denominator and
is counted beside it. Before, the old session's report put those runs in the rate as the agent's fails (killed
0/2: 0%, BELOW) while the same report said they reached no verdict. Read that way, never rewritten: the files keep
what was written.

The history is one a real session wrote in the old shape (tests/fixtures/records/causes, made at ec1b9a8): cases
`killed` (SIGKILL, infra after its retry) and `overloaded` (the API's 529, infra after its retry) hold 2 such runs
each; the other cases' fails are the agent's or the case's and stay fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from scarbook.history.counts_cache import CACHE_NAME, case_stamps, file_stamp, session_counts
from scarbook.history.store import History
from scarbook.stats.compare import Counts

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "records" / "causes" / "history" / "20261205-021532-64449"
SID = OLD.name


def _old_history(project) -> Path:
    folder = project.workspaces / "history" / SID
    shutil.copytree(OLD, folder)
    return folder


def test_an_old_infra_fail_reads_as_an_error_and_the_file_is_not_rewritten(project) -> None:
    folder = _old_history(project)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    history = History(project.workspaces)
    info = history.read_session(SID)
    runs = history.runs(SID)
    assert not runs.problems
    assert sorted((r.case_id, r.k, r.status, r.cause and r.cause.kind) for r in runs) == [
        ("broken-check", 1, "fail", "case"), ("broken-check", 2, "fail", "case"),
        ("flaky", 1, "pass", None), ("flaky", 2, "pass", None),
        ("killed", 1, "error", "infra"), ("killed", 2, "error", "infra"),  # fail before
        ("overloaded", 1, "error", "infra"), ("overloaded", 2, "error", "infra"),  # fail before
        ("slow", 1, "fail", "agent"), ("slow", 2, "fail", "agent"),
        ("wrong", 1, "fail", "agent"), ("wrong", 2, "fail", "agent"),
    ]
    assert [(o.k, o.status) for o in history.outcomes(SID, "killed", info)] == [(1, "error"), (2, "error")]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_the_report_of_an_old_session_leaves_its_infra_fails_out_of_the_rate(project) -> None:
    _old_history(project)
    report = project.cli("report", SID)
    rows = {line.split()[0]: line for line in report.stdout.splitlines() if line.startswith(("killed ", "overloaded "))}
    assert rows == {
        "killed": "killed                      0    0    2   –         –         –      –    none   no verdict !!",
        "overloaded": "overloaded                  0    0    2   –         –         –      –    none   no verdict !!",
    }  # "killed  0  2  0  0%  0– 66%  0%  0%  red  BELOW  ✗✗" before
    assert f"session {SID} [causes]: finished; 12 runs — 2 pass, 6 fail, 4 error" in report.stdout  # 10 fail, 0 error
    listing = project.cli("sessions").stdout.splitlines()
    assert listing[1].split()[:8] == [SID, "causes", "finished", "12", "2", "6", "4", "0"]  # 2 10 0 0 before


def test_a_counts_cache_an_older_version_wrote_is_not_used(project) -> None:
    """Trends read each ended session's counts from .counts.json: one written before counted these runs as fails."""
    folder = _old_history(project)
    history = History(project.workspaces)
    info = history.read_session(SID)
    old_cache = {"format": "1 scarbook " + __import__("scarbook").__version__, "folder": str(folder),
                 "session": file_stamp(str(folder / "session.json")),
                 "cases": {cid: {"stamps": case_stamps(str(folder), cid), "counts": [0, 2, 0, 0], "problems": []}
                           for cid in info.case_ids}}
    (folder / CACHE_NAME).write_text(json.dumps(old_cache))
    counts = session_counts(history, info)
    assert (counts["killed"].counts, counts["overloaded"].counts) == (Counts(0, 0, 2, 0), Counts(0, 0, 2, 0))
    assert session_counts(History(project.workspaces), info)["killed"].counts == Counts(0, 0, 2, 0)  # its own cache
