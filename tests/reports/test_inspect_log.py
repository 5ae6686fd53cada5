"""`scarbook export SESSION --format inspect`: the log is read back by the real inspect_ai package's
own reader (the test extra), so what `inspect view` opens is what scarbook recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scarbook.models import Case, CheckResult, RunRecord, RunStatus, SessionInfo, Usage
from scarbook.reports.inspect_log import default_log_name, write_inspect_log
from scarbook.transcripts import load_transcript
from tests.helpers.paths import FIXTURES

CLAUDE_LOG = FIXTURES / "transcripts" / "claude_code_session.jsonl"

# inspect_ai takes ~2 s to import: once, for the tests that read a log with it, on one worker
pytestmark = [pytest.mark.xdist_group("inspect_ai"), pytest.mark.usefixtures("inprocess_demo")]


@pytest.fixture(scope="module")
def read_eval_log():
    from inspect_ai.log import read_eval_log

    return read_eval_log


def _run(case: str, k: int, status: RunStatus, checks: list[CheckResult], reason: str = "") -> RunRecord:
    return RunRecord("s1", case, k, status, reason or f"{status} reason", checks=checks, output_excerpt=f"out {case} {k}",
                     duration_s=1.5, started_at=f"2026-12-04T10:00:0{k}+00:00" if case == "a" else "not a time",
                     agent_usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.01))


def test_runs_are_samples_checks_are_scores_and_statuses_map_onto_inspect(tmp_path, read_eval_log):
    info = SessionInfo(id="s1", label="prompt-v2", started_at="2026-12-04T10:00:00+00:00", state="finished",
                       runs_per_case=2, case_ids=["a", "b"], agent="demo", judge_model="m", git_revision="abc123")
    ok, bad = CheckResult("file_exists", "pass", "tmp.txt exists"), CheckResult("contains", "fail", "no '# x' in tmp.txt", 1)
    runs = [_run("a", 1, RunStatus.PASS, [ok, CheckResult("contains", "pass", "found", 1)]),
            _run("a", 2, RunStatus.FAIL, [ok, bad, CheckResult("contains", "pass", "found '# y'", 2)]),
            _run("b", 1, RunStatus.ERROR, [CheckResult("command", "error", "check timed out after 5s")],
                 reason="agent exited with code 3"),
            _run("b", 2, RunStatus.UNJUDGED, [ok, CheckResult("llm_judge", "skipped", "skipped (--skip-judge)", 1)])]
    cases = {"a": Case("a", "Write one line to tmp.txt"), "b": Case("b", "Fix the config")}
    runs[1].transcript_path = str(shutil.copy(CLAUDE_LOG, tmp_path / "transcript.jsonl"))  # a Claude Code run
    runs[2].transcript_path = str(tmp_path / "gone.jsonl")
    path = tmp_path / default_log_name(info)
    assert write_inspect_log(path, info, runs, cases) == 4
    assert path.stat().st_mode & 0o777 == 0o644

    log = read_eval_log(str(path))
    assert (log.status, log.eval.task, log.eval.task_display_name, log.eval.model) == ("success", "scarbook", "prompt-v2", "demo")
    assert log.eval.config.epochs == 2 and log.eval.dataset.sample_ids == ["a", "b"]
    assert log.eval.metadata["scarbook_session"] == "s1" and log.eval.revision.commit == "abc123"
    by = {(s.id, s.epoch): s for s in log.samples}
    assert sorted(by) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    a1, a2, b1, b2 = by["a", 1], by["a", 2], by["b", 1], by["b", 2]
    assert a1.input == "Write one line to tmp.txt" and a1.output.completion == "out a 1"
    assert [m.role for m in a1.messages] == ["user", "assistant"]
    assert {k: v.value for k, v in a1.scores.items()} == {"verdict": "C", "file_exists": "C", "contains": "C"}
    # a second check of one type is named as Inspect names a second scorer of one name
    assert {k: v.value for k, v in a2.scores.items()} == {"verdict": "I", "file_exists": "C", "contains": "I",
                                                          "contains1": "C"}
    assert a2.scores["contains"].explanation == "no '# x' in tmp.txt"
    # an error run is a sample error, with no verdict; a check that broke has no score
    assert b1.error.message == "agent exited with code 3" and b1.scores == {}
    assert b1.metadata["status"] == "error" and b1.metadata["checks"][0]["detail"] == "check timed out after 5s"
    assert b1.metadata["transcript_note"].startswith("the run's transcript is not in the log: ")
    # a run's transcript is its messages: tool calls on the assistant's message, results as tool messages
    msgs = a2.messages
    assert [m.role for m in msgs[:4]] == ["user", "assistant", "tool", "assistant"]
    assert [c.function for c in msgs[1].tool_calls] == ["Read"] and msgs[2].tool_call_id == "toolu_01"
    failed = [m for m in msgs if m.role == "tool" and m.error is not None]
    assert [(m.function, m.error.message) for m in failed] == [("Edit", "<tool_use_error>File does not exist.</tool_use_error>")]
    assert "List TODO comments in src/" not in [m.text for m in msgs]  # the subagent's side conversation
    assert msgs[-1].text == "Done — tmp.txt now holds the first line of README.md."
    # unjudged: no verdict (no verdict, no rate); the skipped judge check has no score either
    assert b2.error is None and {k: v.value for k, v in b2.scores.items()} == {"file_exists": "C"}
    assert b2.metadata["status"] == "unjudged"
    assert a1.model_usage["demo"].input_tokens == 10 and a1.total_time == 1.5
    assert a1.started_at == "2026-12-04T10:00:01+00:00" and b1.started_at is None  # a bad time is left out
    scores = {s.name: s for s in log.results.scores}
    assert scores["verdict"].metrics["accuracy"].value == 0.5  # 1 pass / (1 pass + 1 fail)
    assert (scores["verdict"].scored_samples, scores["verdict"].unscored_samples) == (2, 2)
    assert scores["contains"].metrics["accuracy"].value == 0.5
    assert log.results.total_samples == 4 and log.results.completed_samples == 3
    [reduction] = log.reductions
    assert [(r.sample_id, r.value) for r in reduction.samples] == [("a", 0.5)]
    # imported back, the run's files come out of its tool calls again
    t = load_transcript(path, sample="a:2")
    assert [(f.path, f.content) for f in t.files_written] == [("tmp.txt", "# tiny-agent\nA tiny agent!\n")]


def test_export_cli_writes_a_log_inspect_reads_and_its_viewer_lists(project, tmp_path, read_eval_log):
    project.case("one", """\
        id: one
        task: write ok to out.txt
        checks:
          - {type: file_exists, path: out.txt}
        """)
    assert project.cli("eval", "--runs", "3", "--label", "v1").exit_code == 1  # the seeded demo fails it: runs to export either way
    out = tmp_path / "logs"
    out.mkdir()
    r = project.cli("export", "v1", "--format", "inspect", "-o", str(out))
    assert r.exit_code == 0, r.output
    [path] = out.iterdir()
    sid = project.load().history.resolve("v1").id
    assert r.stdout.splitlines() == [f"inspect log: session {sid}, 3 samples -> {path}",
                                     f"open it: inspect view --log-dir {out.resolve()}"]
    log = read_eval_log(str(path))
    assert log.eval.config.epochs == 3 and log.eval.task_display_name == "v1"
    assert sorted((s.id, s.epoch) for s in log.samples) == [("one", 1), ("one", 2), ("one", 3)]
    assert {s.scores["file_exists"].value for s in log.samples} <= {"C", "I"}
    from inspect_ai.log import list_eval_logs

    assert [info.name for info in list_eval_logs(str(out))] == [path.resolve().as_uri()]
    # and scarbook imports its own export like any Inspect log: a run becomes a case again
    r = project.cli("import", str(path), "--sample", "one:2", "--list")
    assert r.exit_code == 0 and "format: inspect" in r.stdout and "task: write ok to out.txt" in r.stdout

    # a file name the viewer would not list: written, with a warning saying so
    r = project.cli("export", "--format", "inspect", "-o", str(tmp_path / "log.json"))
    assert r.exit_code == 0
    assert json.loads((tmp_path / "log.json").read_text())["eval"]["task"] == "scarbook"
    assert r.stderr == (f"warning: inspect view lists a .json log only when its name starts with the time, as "
                        f"{path.name} does: rename it, or give -o a folder\n")
    # a path that cannot be written, and a session that does not exist: one line each, exit 2
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    r = project.cli("export", "--format", "inspect", "-o", str(blocker / "log.json"))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"scarbook: cannot write {blocker / 'log.json'}: Not a directory — choose a writable path\n"
    r = project.cli("export", "nosuch", "--format", "inspect")
    assert r.stderr == ("scarbook: no session matches 'nosuch' (by id, label, 'latest' or 'previous') — see "
                        "`scarbook sessions`\n")


def test_export_into_a_missing_folder_is_refused_and_writes_nothing(project, tmp_path):
    """Issue 37.9: `-o DIR/` with no DIR wrote a file named DIR; `-o /missing/dir/x.json` made the folders."""
    project.case("one", """\
        id: one
        task: write ok to out.txt
        checks:
          - {type: file_exists, path: out.txt}
        """)
    project.cli("eval", "--runs", "1")
    r = project.cli("export", "--format", "inspect", "-o", f"{tmp_path / 'logs'}/")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"scarbook: no folder {tmp_path / 'logs'} — create it (mkdir -p {tmp_path / 'logs'}), "
                        "or give -o an existing folder\n")
    r = project.cli("export", "--format", "inspect", "-o", str(tmp_path / "missing" / "dir" / "x.json"))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"scarbook: no folder {tmp_path / 'missing' / 'dir'} to write x.json in — create it "
                        f"(mkdir -p {tmp_path / 'missing' / 'dir'}), or give -o a path in an existing folder\n")
    assert not (tmp_path / "logs").exists() and not (tmp_path / "missing").exists()
    (tmp_path / "notes").write_text("mine")  # a file named as the folder meant: never written over
    r = project.cli("export", "--format", "inspect", "-o", f"{tmp_path / 'notes'}/")
    assert (r.exit_code, r.stderr) == (2, f"scarbook: {tmp_path / 'notes'} is a file, not a folder — give -o a folder, "
                                          "or a file name without the trailing /\n")
    assert (tmp_path / "notes").read_text() == "mine"
    (tmp_path / "logs").mkdir()  # the fix the message names works
    r = project.cli("export", "--format", "inspect", "-o", f"{tmp_path / 'logs'}/")
    assert r.exit_code == 0, r.output
    assert len(list((tmp_path / "logs").iterdir())) == 1
