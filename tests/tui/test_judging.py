"""Issue 27.3 in the TUI: the latest session of a case is judging (eval --judge-batch, its batch not
collected): the library shows no rate, marks it judging and says how to finish it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scarbook.history.store import History
from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo
from scarbook.models.session_parts import BatchRecord
from scarbook.project import Project
from scarbook.tui.app import make_app
from tests.conftest import run_cli
from tests.helpers.tui_fixtures import SIZE, fast_demo, library_loaded, move_library_cursor, plain, project_root  # noqa: F401

pytestmark = pytest.mark.usefixtures("inprocess_demo")
SID = "20261201-100000-000aa"
WAITING = CheckResult("llm_judge", "skipped", "judge skipped (waiting for the batch judge)", 0,
                      judge=JudgeDetail.from_dict({"batch": "pending", "ref": "0" * 16}))


async def test_a_judging_session_has_no_rate_in_the_library(project_root):
    now = datetime.now(UTC).isoformat(timespec="seconds")
    history = History(project_root / "workspaces")
    info = SessionInfo(id=SID, label="nightly", started_at=now, runs_per_case=3, case_ids=["write-one-line"],
                       fingerprint=Project.discover(project_root).config.fingerprint(), agent="demo")
    history.start_session(info)
    statuses = ["unjudged", "fail", "unjudged"]  # a rule-check fail is a verdict; the other two wait
    for k, status in enumerate(statuses, 1):
        history.record_run(RunRecord(session_id=SID, case_id="write-one-line", k=k, status=status, reason=status,
                                     started_at=now, checks=[WAITING] if status == "unjudged" else []))
    info.state, info.batch = "judging", BatchRecord.read({"id": "msgbatch_01", "ids": ["msgbatch_01"], "requests": 2})
    history.finish_session(info)

    listed = run_cli(project_root, "list").stdout.splitlines()
    row = next(line.split() for line in listed if line.startswith("write-one-line"))
    assert row[1] == "–" and "judging" in row
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        lib = await library_loaded(pilot)
        table = lib.query_one("#cases")
        assert str(table.get_cell("write-one-line", "rate")).strip() == "–"
        assert "judging" in str(table.get_cell("write-one-line", "notes"))
        await move_library_cursor(pilot, "write-one-line")
        assert (f"latest session {SID} is judging: no verdicts until its judge batch is collected "
                f"(`scarbook resume {SID}`)") in plain(lib.query_one("#detail"))
