"""`scarbook report` on a session rejudged under a new judge, whose calibration was stale when it ran and has been
made since (the user's path: `scarbook` in real subprocesses, a command agent, the real anthropic SDK against the
loopback Messages API, calibration.json a real TinyDB file).

It printed two lines that read as a contradiction: "rates not corrected — stale: … — label items it graded with
`scarbook calibrate`" (the calibration the session ran with, its advice already followed) and then "this report
corrects and decides with the calibration the session ran with (no labels, not used); history's has changed since".
Now one statement says what the session ran with, what history holds now, and what to run."""

from __future__ import annotations

import json
from datetime import date

from scarbook.judge.prompt import prompt_digest
from tests.cli.test_calibrate_judge_change import (  # noqa: F401
    export_and_label,
    judge_server,
    project,
    scarbook,
    use_judge,
)


def test_a_rejudged_sessions_stale_calibration_and_todays_are_one_statement(project):
    assert scarbook(project, "eval", "-q", "-n", "8").returncode in (0, 1)
    sheet, _ = export_and_label(project, "a.jsonl", 8)
    assert scarbook(project, "calibrate", "--import", str(sheet)).returncode == 0
    use_judge(project, "claude-b")
    assert scarbook(project, "rejudge", "-q", "latest").returncode in (0, 1)  # ran with claude-a's labels: stale
    paired = scarbook(project, "calibrate", "--sample", "8", input="")  # the labels paired with claude-b's verdicts
    assert paired.returncode == 0, paired.stderr

    out = project / "report.json"
    done = scarbook(project, "report", "latest", "--json", str(out))
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(out.read_text())
    sid, digest = report["session"]["id"], prompt_digest()[:8]
    line = (f"judge: the session ran with its rates not corrected (stale: the labels were made on judge claude-a "
            f"(prompt {digest}), the judge is now claude-b (prompt {digest})), and this report decides as it ran; "
            f"history's calibration has changed since (8 labels, last {date.today().isoformat()}: 8 added) — a new "
            f"session decides with it: `scarbook rejudge {sid}` grades its kept artifacts again (no agent runs)")
    judge_lines = [x for x in done.stdout.splitlines() if x.startswith("judge: ") and "calls" not in x]
    assert judge_lines == [line]
    assert report["judge_calibration_changed"] == line
