"""`scarbook eval` end to end with an llm_judge case, the judge being the loopback Messages API."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, raw_reply, status_reply, tool_reply  # noqa: F401

AGENT = """\
from pathlib import Path
Path("tmp.txt").write_text("# tiny-agent\\n")
print("done: tmp.txt holds the first line of README.md")
"""

CASE = """\
id: judge-me
title: Claimed one line
task: Extract the first line of README.md and write it to tmp.txt
checks:
  - {type: file_exists, path: tmp.txt}
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - tmp.txt contains exactly one line
      - that line is the README's title
"""


@pytest.fixture
def project(tmp_path, judge_server, monkeypatch):
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "scarbook.yaml").write_text(
        textwrap.dedent(
            f"""\
            agent:
              type: command
              argv: [{json.dumps(sys.executable)}, {json.dumps(str(tmp_path / "agent.py"))}]
            runs: 3
            concurrency: 1
            threshold: 0.8
            gate: {{mode: point}}  # 2/3 is red under the rate >= threshold rule these tests read
            judge:
              model: claude-sonnet-4-6
              base_url: {judge_server.url}
              max_retries: 1
              timeout_s: {JUDGE_TIMEOUT_S}
            """
        )
    )
    (tmp_path / "cases" / "judge-me").mkdir(parents=True)
    (tmp_path / "cases" / "judge-me" / "case.yaml").write_text(CASE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    return tmp_path


def scarbook(project, *args):
    return CliRunner().invoke(main, ["-C", str(project), *args], catch_exceptions=False)


def test_eval_grades_every_run_and_stores_verdicts_tokens_and_dollars(project, judge_server):
    judge_server.push(
        tool_reply([("PASS", "one line"), ("PASS", "title")]),
        tool_reply([("PASS", "one line"), ("FAIL", "not the title")]),
        tool_reply([("PASS", "one line"), ("PASS", "title")]),
    )
    out = project / "report.json"
    result = scarbook(project, "eval", "-q", "--json", str(out))

    assert result.exit_code == 1, result.output  # 2/3 is below the 0.8 threshold
    assert len(judge_server.requests) == 3
    for text in judge_server.user_texts():
        assert "# tiny-agent" in text and "tmp.txt contains exactly one line" in text
        assert "done: tmp.txt holds" not in text  # the judge sees the file, not the agent's output
    report = json.loads(out.read_text())
    runs = sorted(report["runs"], key=lambda r: r["k"])
    assert [r["status"] for r in runs] == ["pass", "fail", "pass"]
    judged = [c for c in runs[1]["checks"] if c["type"] == "llm_judge"][0]
    assert judged["detail"] == "1/2 rubric items PASS; FAIL item 2: not the title"
    assert judged["judge"]["items"][1]["reason"] == "not the title"
    assert judged["judge"]["model"] == "claude-sonnet-4-6"
    assert runs[1]["judge_calls"] == 1
    assert runs[1]["judge_usage"]["input_tokens"] == 1000
    assert runs[1]["judge_usage"]["cost_usd"] == pytest.approx((1000 * 3 + 100 * 15) / 1_000_000)
    assert report["usage"]["judge_calls"] == 3
    assert report["usage"]["judge"]["cost_usd"] == pytest.approx(3 * (1000 * 3 + 100 * 15) / 1_000_000)
    assert "judge: 3 calls, 3300 tokens, $0.0135" in result.output


def test_dry_run_spends_nothing(project, judge_server):
    judge_server.default = tool_reply([("PASS", "a"), ("PASS", "b")])
    result = scarbook(project, "eval", "--dry-run", "-n", "4")
    assert result.exit_code == 0, result.output
    assert "judge: at most 4 calls" in result.output
    assert judge_server.requests == []


def test_missing_key_is_said_before_any_run(project, judge_server, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    judge_server.default = tool_reply([("PASS", "a"), ("PASS", "b")])
    result = scarbook(project, "eval", "-q")
    assert result.exit_code == 2
    assert "scarbook: the llm_judge checks need an API key, but ANTHROPIC_API_KEY is not set: " \
        "set ANTHROPIC_API_KEY or run with --skip-judge" in result.output
    assert judge_server.requests == []
    assert not (project / "workspaces" / "history").exists() or not any((project / "workspaces" / "history").iterdir())


def test_rejected_key_aborts_the_session_with_one_message(project, judge_server):
    judge_server.default = status_reply(401, "invalid x-api-key")
    result = scarbook(project, "eval", "-q")
    assert result.exit_code == 3, result.output
    assert result.output.count("rejected the API key in ANTHROPIC_API_KEY (HTTP 401)") == 1
    assert len(judge_server.requests) == 1  # the first 401 stopped the session


def test_overloaded_judge_makes_runs_error_not_fail(project, judge_server):
    judge_server.default = status_reply(529, "Overloaded")
    out = project / "report.json"
    result = scarbook(project, "eval", "-q", "-n", "2", "--json", str(out))
    assert result.exit_code == 3, result.output
    runs = json.loads(out.read_text())["runs"]
    assert [r["status"] for r in runs] == ["error", "error"]
    assert len(judge_server.requests) == 4  # 2 runs x (1 try + 1 retry)


@pytest.mark.parametrize(("reply", "seen"), [
    (raw_reply(b"<html><body>Welcome to nginx!</body></html>", content_type="text/html"),
     "text/html: '<html><body>Welcome to nginx!</body></html>'"),
    (raw_reply(b"not json"), "application/json: 'not json'"),
    (raw_reply(b""), "application/json: an empty body"),
])
def test_a_judge_url_that_answers_200_with_no_api_reply_names_the_setting(project, judge_server, reply, seen):
    """A base_url at a web page (or a proxy's login page) answered 200 with HTML or not JSON: the run errored
    as 'scarbook could not finish this run: JSONDecodeError …' (or AttributeError), with a traceback file."""
    judge_server.default = reply
    out = project / "report.json"
    result = scarbook(project, "eval", "-q", "-n", "1", "--json", str(out))
    assert result.exit_code == 3, result.output
    [run] = json.loads(out.read_text())["runs"]
    assert run["status"] == "error"
    assert run["reason"] == (f"check 2 (llm_judge): the judge at {judge_server.url} answered HTTP 200 with no "
                             f"Messages API reply ({seen}) — check judge.base_url in scarbook.yaml: the API's root, "
                             "e.g. https://api.anthropic.com")
    assert len(judge_server.requests) == 1  # asked once: asking again gets the same page


def test_skip_judge_sends_nothing_and_marks_the_session_partial(project, judge_server):
    out = project / "report.json"
    result = scarbook(project, "eval", "-q", "--skip-judge", "--json", str(out))
    assert judge_server.requests == []
    report = json.loads(out.read_text())
    assert report["session"]["partial"] is True
    checks = report["runs"][0]["checks"]
    assert [c["status"] for c in checks] == ["pass", "skipped"]
    # The rule checks pass but the judge never graded: no verdict, never a green gate (issue 12).
    assert [r["status"] for r in report["runs"]] == ["unjudged"] * 3
    assert result.exit_code == 3, result.output
    assert "partial: judge checks were skipped (--skip-judge); 3 unjudged runs have no verdict and are not " \
           "in any rate" in result.output


def test_budget_breaker_stops_new_runs(project, judge_server):
    judge_server.default = tool_reply([("PASS", "a"), ("PASS", "b")])
    out = project / "report.json"
    # One judged run costs $0.0045; the budget is crossed after the first run.
    result = scarbook(project, "eval", "-q", "-n", "5", "--max-cost", "0.001", "--json", str(out))
    report = json.loads(out.read_text())
    assert report["session"]["state"] == "stopped: budget"
    assert len(report["runs"]) < 5
    assert len(judge_server.requests) == len(report["runs"])
    assert result.exit_code == 3, result.output


NEGATIVE_USAGE_AGENT = """\
import json, os
from pathlib import Path
Path("tmp.txt").write_text("# tiny-agent\\n")
with open(os.environ["SCARBOOK_USAGE"], "a") as fh:
    fh.write(json.dumps({"input_tokens": -10**9, "output_tokens": 5, "cost_usd": -1.0}) + "\\n")
    fh.write('{"input_tokens": 7, "cost_usd": NaN, "output_tokens": Infinity}\\n')
"""


def _isolation_or_skip(isolation: str) -> None:
    if isolation == "sandbox":
        from scarbook.agents.sandbox import require_sandbox
        from scarbook.errors import ScarbookError

        try:
            require_sandbox(Path.cwd())
        except ScarbookError as exc:
            pytest.skip(f"bubblewrap cannot start here: {exc.message}")


@pytest.mark.parametrize("isolation", ["none", "sandbox"])  # $SCARBOOK_USAGE is writable in the sandbox too
def test_negative_agent_usage_cannot_buy_more_judge_calls_than_max_cost(project, judge_server, isolation):
    # issue 25 (3): the agent reported -$1 per run, which cancelled the judge's $0.0045 and every run
    # was judged, far over the cap. Its numbers are validated now and the judge's spend counts apart.
    _isolation_or_skip(isolation)
    (project / "agent.py").write_text(NEGATIVE_USAGE_AGENT)
    judge_server.default = tool_reply([("PASS", "a"), ("PASS", "b")])
    out = project / "report.json"
    result = scarbook(project, "eval", "-n", "4", "--max-cost", "0.002", "--json", str(out), "--isolation", isolation)
    report = json.loads(out.read_text())
    assert report["session"]["state"] == "stopped: budget"
    assert len(report["runs"]) == 1, result.output
    assert report["session"]["note"] == ("stopped by --max-cost $0.0020: spent $0.0045 — judge $0.0045 (measured by "
                                         "scarbook), agent $0.0000 (reported by the agent)")
    assert report["session"]["note"] in result.output
    assert result.exit_code == 3, result.output
    run = report["runs"][0]
    assert run["agent_usage"]["input_tokens"] == 7 and run["agent_usage"]["output_tokens"] == 5
    assert run["notes"] == ["$SCARBOOK_USAGE line 1: input_tokens -1000000000 is negative; ignored",
                            "$SCARBOOK_USAGE line 1: cost_usd -1.0 is negative; ignored",
                            "$SCARBOOK_USAGE line 2: output_tokens inf is not finite; ignored",
                            "$SCARBOOK_USAGE: 1 more values ignored"]
    shown = scarbook(project, "show", "judge-me").output
    assert "  note: $SCARBOOK_USAGE line 1: cost_usd -1.0 is negative; ignored" in shown


def test_show_lists_each_judge_item_with_verdict_reason_and_usage(project, judge_server):
    judge_server.push(tool_reply([("PASS", "one line"), ("FAIL", "not the title")]))
    assert scarbook(project, "eval", "-q", "-n", "1").exit_code == 1
    shown = scarbook(project, "show", "judge-me")
    assert shown.exit_code == 0, shown.output
    assert "item 1: PASS — tmp.txt contains exactly one line: one line" in shown.output
    assert "item 2: FAIL — that line is the README's title: not the title" in shown.output
    assert "judge usage: 1000 in / 100 out tokens, $0.0045" in shown.output


def test_calibrate_grades_hidden_verdicts_and_computes_kappa(project, judge_server):
    judge_server.push(
        tool_reply([("PASS", "ok"), ("PASS", "ok")]),
        tool_reply([("PASS", "ok"), ("FAIL", "no")]),
        tool_reply([("PASS", "ok"), ("PASS", "ok")]),
    )
    scarbook(project, "eval", "-q", "-n", "3")
    # Three runs wrote the same tmp.txt: labels are keyed by (case, item, artifact digest), so a
    # human grades each distinct item once.
    result = CliRunner().invoke(main, ["-C", str(project), "calibrate", "--sample", "6"],
                                input="p\nf\n", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.count("--- artifact ---") == 2
    assert "# tiny-agent" in result.output  # the artifact the judge graded is shown to the human
    before_report = result.output.split("\njudge claude-sonnet-4-6")[0]  # the report starts there
    assert "ok" not in before_report.replace("tiny-agent", "")  # the judge's reasons stay hidden
    store_path = project / "workspaces" / "history" / "calibration.json"
    labels = list(json.loads(store_path.read_text())["truths"].values())
    assert sorted(lab["human_verdict"] for lab in labels) == ["FAIL", "PASS"]
    assert "kappa" in result.output


def test_rescore_with_a_key_the_judge_rejects_says_it_needs_the_key_not_skip_judge(project, judge_server):
    """`calibrate --rescore` only judges (it has no --skip-judge): a rejected key (401) says so; the labels stay."""
    judge_server.push(*[tool_reply([("PASS", "ok"), ("FAIL", "no")])] * 3)
    scarbook(project, "eval", "-q", "-n", "3")
    graded = CliRunner().invoke(main, ["-C", str(project), "calibrate", "--sample", "6"], input="p\nf\n",
                                catch_exceptions=False)
    assert graded.exit_code == 0, graded.output
    store = (project / "workspaces" / "history" / "calibration.json").read_bytes()
    judge_server.push(*[status_reply(401, "invalid x-api-key")] * 4)
    result = CliRunner().invoke(main, ["-C", str(project), "calibrate", "--rescore"])
    assert result.exit_code != 0
    assert (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the rescore "
            "stopped: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in scarbook.yaml) — --rescore "
            "grades the labelled artifacts with the judge: it needs the key") in result.output
    assert "--skip-judge" not in result.output and "Traceback" not in result.output
    assert (project / "workspaces" / "history" / "calibration.json").read_bytes() == store


def test_eval_with_a_calibrated_judge_shows_raw_and_corrected_side_by_side(project, judge_server, monkeypatch):
    """issue 23: an earlier session's 40 runs were labelled by a person who failed about a third of what
    the judge passed; a real `eval` then prints, writes and gates on the rate corrected for that."""
    import random

    from scarbook.history.store import History
    from scarbook.judge.calibrate import judged_items
    from scarbook.judge.label_store import CalibrationStore
    from scarbook.judge.prompt import prompt_digest
    from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo

    rubric = ["tmp.txt contains exactly one line", "that line is the README's title"]
    rng = random.Random(2)
    history = History(project / "workspaces")
    info = SessionInfo(id="20261101-000001-000a", started_at="2026-11-01T09:00:00+00:00", case_ids=["judge-me"],
                       runs_per_case=40, judge_model="claude-sonnet-4-6")
    history.start_session(info)
    for k in range(1, 41):
        verdicts = ["PASS", "PASS" if k % 4 else "FAIL"]
        judge = {"items": [{"item": i + 1, "text": t, "verdict": v, "reason": ""} for i, (t, v) in enumerate(zip(rubric, verdicts, strict=True))],
                 "model": "claude-sonnet-4-6", "prompt_digest": prompt_digest(), "artifact_excerpt": f"# title {k}\n",
                 "base_url": judge_server.url}  # the judge in use: its labels count for it
        status = "pass" if "FAIL" not in verdicts else "fail"
        history.record_run(RunRecord(info.id, "judge-me", k, status, "", checks=[
            CheckResult("file_exists", "pass", "", 0), CheckResult("llm_judge", status, "", 1, judge=JudgeDetail.from_dict(judge))]))
    info.state = "finished"
    history.finish_session(info)
    store = CalibrationStore(project / "workspaces" / "history" / "calibration.json")
    for item in judged_items(history.iter_all_runs()):
        store.save_label(item, "FAIL" if item.judge_verdict == "FAIL" or rng.random() < 0.3 else "PASS",
                         labeled_at="2026-11-02")
    store.close()
    judge_server.default = tool_reply([("PASS", "one line"), ("PASS", "title")])
    judge_server.push(tool_reply([("PASS", "one line"), ("FAIL", "not the title")]))  # 4 of 5 pass: 80%
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = scarbook(project, "eval", "-n", "5", "--json", str(project / "r.json"), "--junit", str(project / "j.xml"))
    head = next(line for line in result.output.splitlines() if line.startswith("case "))
    assert "≈rate" in head, result.output
    assert "judge: ≈ rates corrected for the judge's measured error (80 labels, last 2026-11-02" in result.output
    case = json.loads((project / "r.json").read_text())["cases"][0]
    assert case["rate"] == 0.8 and case["corrected"]["rate"] < 0.7 and case["corrected"]["labels"] == 80
    assert case["meets_threshold"] is False and result.exit_code == 1  # 80% raw meets 80%; the gate decides on ≈
    assert '<property name="corrected_rate" value=' in (project / "j.xml").read_text()
    assert "≈rate (judge-corrected, 90% CI)" in summary.read_text()


def test_each_run_records_where_the_judge_was_reached_without_secrets_and_its_max_tokens(project, judge_server):
    """Before: a run's judge record held no base_url nor max_tokens, so `scarbook diff` could not tell two sessions
    graded with another max_tokens (or at another vendor) apart: 'the same judge graded both'. The base_url is kept
    without its user:password."""
    config = project / "scarbook.yaml"
    host = judge_server.url.split("//", 1)[1]
    config.write_text(config.read_text().replace(f"base_url: {judge_server.url}",
                                                 f"base_url: http://judge-user:s3cret@{host}/"))
    judge_server.default = tool_reply([("PASS", "one line"), ("PASS", "title")])
    assert scarbook(project, "eval", "-q", "--no-judge-cache").exit_code == 0
    config.write_text(config.read_text().replace("  max_retries: 1\n", "  max_retries: 1\n  max_tokens: 2048\n"))
    assert scarbook(project, "eval", "-q", "--no-judge-cache").exit_code == 0
    assert {r["body"]["max_tokens"] for r in judge_server.requests} == {1024, 2048}
    runs = sorted((project / "workspaces" / "history").glob("*/runs-*.jsonl"))
    assert len(runs) == 2
    for path, max_tokens in zip(runs, (1024, 2048), strict=True):
        assert "s3cret" not in path.read_text() and "judge-user" not in path.read_text()
        for line in path.read_text().splitlines():
            judge = json.loads(line)["checks"][1]["judge"]
            assert (judge["base_url"], judge["max_tokens"]) == (f"http://{host}", max_tokens)
    diff = scarbook(project, "diff")
    assert diff.exit_code == 0, diff.output
    assert ("judge: A and B were graded by different judges (max_tokens 1024 -> 2048): their difference mixes the "
            "agent's change with the judges'; the raw verdicts stand") in diff.output.splitlines(), diff.output
