"""Which session a name picks (history/session_ref.py): an id prefix of several sessions is refused, as git refuses
an ambiguous short hash, by every command that takes a SESSION — it picked the newest of them, saying nothing."""

from __future__ import annotations

import pytest

from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo

SESSIONS = [  # (id, label, started), oldest first
    ("20261201-090000-001aa", "prompt-v1", "2026-12-01T09:00:00+00:00"),
    ("20261201-090500-002bb", "", "2026-12-01T09:05:00+00:00"),
    ("20261201-091000-003cc", "prompt-v2", "2026-12-01T09:10:00+00:00"),
    ("20261202-080000-004dd", "", "2026-12-02T08:00:00+00:00"),
]

THREE = ("session id prefix '20261201' is ambiguous: it matches 3 sessions — 20261201-091000-003cc [prompt-v2] "
         "started 2026-12-01 09:10:00; 20261201-090500-002bb started 2026-12-01 09:05:00; 20261201-090000-001aa "
         "[prompt-v1] started 2026-12-01 09:00:00 — give more of the id (`scarbook sessions` lists them)")
FOUR = ("session id prefix '2026120' is ambiguous: it matches 4 sessions — 20261202-080000-004dd started 2026-12-02 "
        "08:00:00; 20261201-091000-003cc [prompt-v2] started 2026-12-01 09:10:00; 20261201-090500-002bb started "
        "2026-12-01 09:05:00; and 1 more — give more of the id (`scarbook sessions` lists them)")


@pytest.fixture
def recorded(project):
    """The bundled cases, and four finished sessions of one run each, recorded through History."""
    project.bundled()
    history = History(project.workspaces)
    for sid, label, started in SESSIONS:
        info = SessionInfo(sid, label=label, started_at=started, case_ids=["write-one-line"], runs_per_case=1)
        history.start_session(info)
        history.record_run(RunRecord(sid, "write-one-line", 1, "pass", ""))
        info.state = "finished"
        history.finish_session(info)
    return project


COMMANDS = [
    ["report", "{p}"], ["report", "--against", "{p}"], ["show", "write-one-line", "--session", "{p}"],
    ["diff", "{p}", "latest"], ["diff", "previous", "{p}"], ["rejudge", "{p}"], ["resume", "{p}"],
    ["baseline", "set", "{p}"], ["export", "{p}", "--format", "inspect", "-o", "{root}"], ["eval", "--rerun", "{p}", "-n", "1"],
    ["eval", "--against", "{p}", "-n", "1", "write-one-line"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
@pytest.mark.parametrize(("prefix", "message"), [("20261201", THREE), ("2026120", FOUR)], ids=["3", "4"])
def test_a_prefix_of_several_sessions_is_refused_by_every_command_that_takes_one(recorded, command, prefix, message):
    res = recorded.cli(*[arg.format(p=prefix, root=recorded.root) for arg in command])
    assert (res.exit_code, res.stdout, res.stderr) == (2, "", f"scarbook: {message}\n")
    assert not (recorded.root / "scarbook-baseline.json").exists()
    assert [s.id for s in History(recorded.workspaces).sessions()] == [sid for sid, _, _ in reversed(SESSIONS)]


@pytest.mark.parametrize(("ref", "picked"), [
    ("20261202", "20261202-080000-004dd"),  # a prefix of one session's id
    ("20261201-0905", "20261201-090500-002bb"),  # more of the id
    ("20261201-090000-001aa", "20261201-090000-001aa"),  # the whole id
    ("prompt-v2", "20261201-091000-003cc"),  # a label
    ("latest", "20261202-080000-004dd"), ("previous", "20261201-091000-003cc")])
def test_a_prefix_of_one_session_an_id_a_label_or_a_place_still_picks_it(recorded, ref, picked):
    res = recorded.cli("report", ref)
    assert res.exit_code in (0, 1, 3), res.output
    assert f"session {picked}" in res.stdout


def test_a_label_that_is_a_prefix_of_several_ids_picks_its_session(recorded):
    """A label is matched before a prefix: a session labelled '20261201' is picked by it, not refused."""
    history = History(recorded.workspaces)
    info = SessionInfo("zz-chosen", label="20261201", started_at="2026-11-30T09:00:00+00:00",
                       case_ids=["write-one-line"], runs_per_case=1)
    history.start_session(info)
    history.record_run(RunRecord(info.id, "write-one-line", 1, "pass", ""))
    info.state = "finished"
    history.finish_session(info)
    assert History(recorded.workspaces).resolve("20261201").id == "zz-chosen"


def test_replay_names_the_ambiguous_prefix_too(recorded):
    res = recorded.cli("eval", "-q", "--replay", "20261201", "write-one-line")
    assert (res.exit_code, res.stderr) == (2, f"scarbook: --replay 20261201: {THREE}\n")
