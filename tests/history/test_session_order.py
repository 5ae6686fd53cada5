"""Which session is "latest": the one that started last, not the highest id (issue 37.6)."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from scarbook.history.store import History

pytestmark = pytest.mark.usefixtures("inprocess_demo")


def test_an_eval_after_a_merged_session_is_latest_everywhere(project) -> None:
    """The README's sharding recipe, then an eval: `pipe1` sorted after every generated id, so it stayed
    "latest" for sessions, report, diff, baseline and list though the eval started after it."""
    project.bundled()
    assert project.cli("eval", "write-one-line", "--runs", "2", "--shard", "1/1", "--session-id", "pipe1",
                       "-q").exit_code == 0
    merged = project.cli("merge", str(project.workspaces / "history"), "--session-id", "pipe1")
    assert merged.exit_code in (0, 1), merged.output
    started = json.loads((project.workspaces / "history" / "pipe1" / "session.json").read_text())
    started = datetime.fromisoformat(started["session"]["1"]["started_at"]).timestamp()
    while time.time() < started + 1:  # start times are kept to the second: the eval starts in a later one
        time.sleep(0.05)
    assert project.cli("eval", "write-one-line", "--runs", "2", "--label", "later", "-q").exit_code in (0, 1)
    later = History(project.workspaces).resolve("later").id
    # the merged session started when its shard did: the same second, then by id
    assert [s.id for s in History(project.workspaces).sessions()] == [later, "pipe1.shard-1-of-1", "pipe1"]

    listing = project.cli("sessions").stdout.splitlines()
    assert listing[1].split()[0] == later, listing
    assert f"session {later}" in project.cli("report", "latest").stdout
    assert project.cli("show", "write-one-line").stdout.startswith(f"write-one-line in session {later} [later]")
    diff = project.cli("diff")
    assert diff.stdout.splitlines()[:2] == ["A = pipe1.shard-1-of-1 ", f"B = {later} later"], diff.stdout
    assert project.cli("baseline", "set").exit_code == 0
    assert json.loads((project.root / "scarbook-baseline.json").read_text())["session"] == later


def test_sessions_sort_by_start_then_by_id(tmp_path) -> None:
    from scarbook.models import SessionInfo

    infos = [SessionInfo("zz-chosen", started_at="2026-01-01T10:00:00+00:00"),
             SessionInfo("20260101-110000-001aa", started_at="2026-01-01T11:00:00+00:00"),
             SessionInfo("20260101-110000-002bb", started_at="2026-01-01T11:00:00+00:00"),
             SessionInfo("unreadable", started_at="")]
    assert [i.id for i in sorted(infos, key=SessionInfo.start_order, reverse=True)] == [
        "20260101-110000-002bb", "20260101-110000-001aa", "zz-chosen", "unreadable"]


@pytest.mark.parametrize("command", [["report", ""], ["baseline", "set", " "], ["show", "write-one-line", "--session", ""],
                                     ["diff", "", "latest"], ["eval", "--against", "", "-n", "1"],
                                     ["report", "--against", ""], ["eval", "--rerun", "", "-n", "1"]])
def test_an_empty_session_name_is_refused_not_read_as_an_unlabelled_session(project, command) -> None:
    """"" matched every session without a label: `scarbook baseline set "$SESSION"` with SESSION unset blessed the
    newest unlabelled session (not the latest, which had a label), and report showed it, exit 0."""
    project.bundled()
    assert project.cli("eval", "-q", "-n", "1", "write-one-line").exit_code in (0, 1, 3)
    assert project.cli("eval", "-q", "-n", "1", "write-one-line", "-l", "labelled").exit_code in (0, 1, 3)
    res = project.cli(*command)
    ref = next(a for a in command if not a.strip())
    assert (res.exit_code, res.stderr) == (2, f"scarbook: {ref!r} names no session (was the variable it came from "
                                              "unset?) — give an id, a label, 'latest' or 'previous' (`scarbook "
                                              "sessions` lists them)\n")
    assert not (project.root / "scarbook-baseline.json").exists()
