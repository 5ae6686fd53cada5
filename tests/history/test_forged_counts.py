"""Issue 33.14: history an unconfined agent rewrote is caught on every read, not only by merge.

Session A runs case c four times; every run fails its check: BELOW, 0/4. A later session's agent, run
unconfined (a real process), rewrites A's runs file: a fail marked `pass` with its failed check left
in place, or three of the four lines deleted. Before, every read counted the forged pass, and the
deletion turned BELOW 0/4 into an undecided 0/1 — a pass under `undecided: pass` — with A still
"finished". Now a record whose status does not follow from its checks is left out and named (merge's
own check, on every history read), and a session whose records fall short of what it recorded (each
case's count, written when it ends) is damaged: that case has no verdict in it (exit 3 wherever it gates: `eval --against`, `baseline set`)."""

from __future__ import annotations

import json
import sys

FORGER = r'''
import json, os, pathlib, sys
root = pathlib.Path(sys.argv[1])
how = (root / "FORGE").read_text().strip()
for path in (root / "workspaces" / "history").glob("*/runs-c.jsonl"):
    lines = path.read_text().splitlines(keepends=True)
    if how == "pass":
        doc = json.loads(lines[0])
        doc["status"], doc["reason"] = "pass", "all checks passed"
        lines[0] = json.dumps(doc) + "\n"
    elif how == "delete":
        lines = lines[:1]
    path.write_text("".join(lines))
print("done")
'''


def _project(project) -> str:
    agent = project.root / "forger.py"
    agent.write_text(FORGER)
    argv = json.dumps([sys.executable, str(agent), str(project.root)])
    project.config(f"agent: {{type: command, argv: {argv}}}\nconcurrency: 1\nisolation: none\n", gate=None)
    project.case("c", "id: c\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    project.case("forge", "id: forge\ntask: t\nchecks: [{type: output_contains, text: done}]\n")
    (project.root / "FORGE").write_text("none")
    first = project.cli("eval", "c", "--runs", "4", "-q")
    assert first.exit_code == 1, first.output  # BELOW: 0/4
    return project.load().history.sessions()[0].id


def _forge(project, how: str) -> None:
    (project.root / "FORGE").write_text(how)
    assert project.cli("eval", "forge", "--runs", "1", "-q").exit_code == 0


def _forged_report(project, how: str) -> tuple[str, dict, str, dict]:
    """Session A, forged `how` by a later agent, then reported: A's runs file, the report, what was said
    on stderr, and case c's row in the report."""
    sid = _project(project)
    _forge(project, how)
    out = project.root / "r.json"
    result = project.cli("report", sid, "--json", str(out))
    report = json.loads(out.read_text())
    case = next(c for c in report["cases"] if c["case_id"] == "c")
    return str(project.workspaces / "history" / sid / "runs-c.jsonl"), report, result.stderr, case


def test_a_pass_whose_check_failed_is_left_out_and_named_on_every_read(project) -> None:
    runs_file, report, said, case = _forged_report(project, "pass")
    assert (f"history file {runs_file} line 1 is not counted: it is marked pass, but check 1 (file_exists) is fail "
            "— the runner never writes that (forged or damaged)") in said, said
    assert [r["status"] for r in report["runs"] if r["case_id"] == "c"].count("pass") == 0
    assert case["decision"] == "no verdict", case  # 3 counted runs of the 4 it recorded
    listed = project.cli("list")
    row = next(line for line in listed.stdout.splitlines() if line.startswith("c "))
    assert "damaged" in row and "0/3/0" in row, row


def test_deleted_run_lines_leave_the_case_without_a_verdict(project) -> None:
    runs_file, report, said, case = _forged_report(project, "delete")
    sid = runs_file.split("/")[-2]
    assert (f"history file {runs_file} holds 1 run of case c, but session {sid} recorded 4 when it ended — 3 "
            "were deleted or left out (forged or damaged): the session is damaged and case c has no verdict in it"
            ) in said, said
    assert (case["decision"], case["rate"]) == ("no verdict", None), case  # not undecided 0/1 (a pass by default)
    assert sorted(r["status"] for r in report["runs"] if r["case_id"] == "c") == ["fail", "unjudged", "unjudged",
                                                                                  "unjudged"]


def test_the_shortfall_is_counted_in_words_that_agree(tmp_path) -> None:
    """'1 were deleted' (another audit): one line gone is said as one, several as several."""
    from scarbook.history.store import History
    from scarbook.models import RunRecord, SessionInfo

    history = History(tmp_path / "workspaces")
    info = SessionInfo(id="s1", started_at="2026-01-01T09:00:00+00:00", runs_per_case=3, case_ids=["c"])
    history.start_session(info)
    for k in (1, 2, 3):
        history.record_run(RunRecord("s1", "c", k, "pass", "all checks passed", started_at=info.started_at))
    history.finish_session(info)
    path = history.dir / "s1" / "runs-c.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    for kept, held, gone in ((2, "holds 2 runs", "1 was"), (1, "holds 1 run", "2 were")):
        path.write_text("".join(lines[:kept]))
        said = [str(p) for p in history.runs("s1").problems]
        assert said == [f"history file {path} {held} of case c, but session s1 recorded 3 when it ended — {gone} "
                        "deleted or left out (forged or damaged): the session is damaged and case c has no verdict "
                        "in it"], said
