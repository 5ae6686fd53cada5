"""issue 27 (4): `scarbook rejudge SESSION [CASE...]` — a session's kept artifacts graded again under
today's rubric and judge, with no agent runs, as a new session linked to its source.

The judge is the real anthropic SDK against tests/helpers/judge_server.py; its request log counts the calls.
The agent of the rejudge is one that would leave a marker and fail if it ever ran."""

from __future__ import annotations

import json
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.history.store import History
from scarbook.judge.artifact_store import FOLDER
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, status_reply, tool_reply  # noqa: F401

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

# In-process (type: python). Writes tmp.txt, except in runs whose number is in $REJUDGE_SKIP_RUNS: those
# fail the rule check.
AGENT = """\
import os
from pathlib import Path

def act(task, cwd):
    if Path(cwd).name in os.environ.get("REJUDGE_SKIP_RUNS", "").split(","):  # the workspace is <case>/<k>
        return "nothing written"
    Path(cwd, "tmp.txt").write_text("# tiny-agent\\n")
    return "done"
"""

EXPLODE = """\
import sys
from pathlib import Path
Path(sys.argv[1]).write_text("the agent ran")
sys.exit(1)
"""


def write_config(root: Path, url: str, agent: str, extra: str = "") -> None:
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        {agent}
        runs: 3
        concurrency: 4
        threshold: 0.5
        gate: {{mode: point}}
        judge:
          model: claude-sonnet-4-6
          base_url: {url}
          max_retries: 0
          timeout_s: {JUDGE_TIMEOUT_S}
        """) + extra)


def exploding_agent(root: Path) -> str:
    """A command agent that leaves `ran.txt` and fails if it is ever started."""
    (root / "explode.py").write_text(EXPLODE)
    argv = [sys.executable, str(root / "explode.py"), str(root / "ran.txt")]
    return f"agent: {{type: command, argv: {json.dumps(argv)}}}"


@pytest.fixture
def project(tmp_path, judge_server, monkeypatch):
    module = f"rejudge_agent_{uuid.uuid4().hex[:8]}"  # its own module name: sys.modules outlives a test
    (tmp_path / f"{module}.py").write_text(AGENT)
    write_config(tmp_path, judge_server.url, f"agent: {{type: python, function: '{module}:act'}}")
    (tmp_path / "cases" / "judge-me").mkdir(parents=True)
    (tmp_path / "cases" / "judge-me" / "case.yaml").write_text(CASE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    monkeypatch.delenv("REJUDGE_SKIP_RUNS", raising=False)
    judge_server.default = tool_reply([("PASS", "one line"), ("PASS", "title")])
    return tmp_path


def scarbook(project, *args):
    return CliRunner().invoke(main, ["-C", str(project), *args], catch_exceptions=False)


def run_json(project, *args):
    out = project / f"report-{uuid.uuid4().hex[:6]}.json"
    result = scarbook(project, *args, "--json", str(out))
    return result, (json.loads(out.read_text()) if out.exists() else None)


def artifact_files(project) -> list[Path]:
    return sorted((project / "workspaces" / FOLDER).glob("*/*.json"))


def change_rubric(project) -> None:
    case = project / "cases" / "judge-me" / "case.yaml"
    case.write_text(case.read_text().replace("exactly one line", "one line and no trailing newline"))


def judged(run):
    return next(c for c in run["checks"] if c["type"] == "llm_judge")


def test_a_changed_rubric_is_graded_again_with_no_agent_run_and_diff_shows_it(project, judge_server):
    first, source = run_json(project, "eval", "-q", "-l", "prompt-v1")
    assert first.exit_code == 0, first.output
    assert len(judge_server.requests) == 3
    assert len(artifact_files(project)) == 1  # three identical artifacts, stored once
    sha = source["runs"][0]["judge_artifacts"]["1"]["sha256"]
    assert artifact_files(project)[0].name == f"{sha}.json"

    change_rubric(project)
    write_config(project, judge_server.url, exploding_agent(project))
    judge_server.default = tool_reply([("FAIL", "it ends with a newline"), ("PASS", "title")])
    result, report = run_json(project, "rejudge", "prompt-v1", "-q")
    assert result.exit_code == 1, result.output  # 0/3 against a threshold of 0.5
    assert not (project / "ran.txt").exists()  # the agent never started
    assert len(judge_server.requests) == 6  # three judge calls: a changed rubric misses the cache
    assert "one line and no trailing newline" in json.dumps(judge_server.bodies()[-1])
    sid = source["session"]["id"]
    new = report["session"]
    assert new["id"] != sid and new["label"] == "rejudge of prompt-v1"
    assert new["rerun_of"] == {"session": sid, "rejudge": True, "judge_model": "", "cases": {"judge-me": 3},
                               "regraded": 3, "carried": 0, "not_rejudgeable": []}
    assert [(r["k"], r["status"]) for r in report["runs"]] == [(1, "fail"), (2, "fail"), (3, "fail")]
    for run in report["runs"]:
        assert run["checks"][0]["status"] == "pass"  # the rule check: carried from the source run
        assert judged(run)["judge"]["items"][0]["verdict"] == "FAIL"
        assert run["agent_usage"]["input_tokens"] == 0 and run["judge_calls"] == 1
    assert report["usage"]["judge_calls"] == 3
    assert (f"rejudge of session {sid}: 3 runs graded again from kept artifacts, 0 carried (rule checks failed), "
            "no agent runs; the source session's rates are unchanged") in result.stdout
    assert len(artifact_files(project)) == 1

    diff = scarbook(project, "diff", "prompt-v1", "latest")
    assert diff.exit_code == 0, diff.output  # the rubric changed in between: a rejudge pair is still compared
    assert "grades the other's kept artifacts again (scarbook rejudge)" in diff.stdout
    assert "(changed checks: judge-me)" in diff.stdout
    assert "the config differs" not in diff.stdout  # the agent's config changed since, not its work
    assert "regressed" in diff.stdout or "no detectable change" in diff.stdout
    plain = scarbook(project, "diff", "prompt-v1", "latest", "--fail-on-regression")
    assert plain.exit_code == 0, plain.output  # 3 runs a side: no case can reach significance (Tarone), so nothing regressed


def test_the_rejudge_of_a_120_character_label_gets_a_label_eval_would_take(project, judge_server):
    """"rejudge of " + a 120-character label made a 131-character label, which `eval --label` refuses (at most 120):
    now its middle is cut to "…", keeping both ends, so the label stays a name to pick the session by."""
    label = "release-candidate-" + "x" * (120 - len("release-candidate-") - len("-prompt-v2")) + "-prompt-v2"
    assert len(label) == 120
    assert run_json(project, "eval", "-q", "-n", "1", "-l", label)[0].exit_code == 0
    result, report = run_json(project, "rejudge", label, "-q")
    assert result.exit_code == 0, result.output
    derived = report["session"]["label"]
    assert derived == "rejudge of release-candidate-" + "x" * 54 + "…" + "x" * 26 + "-prompt-v2"
    assert len(derived) == 120
    assert derived in scarbook(project, "report", derived).stdout  # picked by it
    again, second = run_json(project, "rejudge", derived, "-q")  # a rejudge of the rejudge: within 120 too
    assert again.exit_code == 0, again.output
    assert second["session"]["label"] == "rejudge of rejudge of release-candidate-" + "x" * 43 + "…" + "x" * 26 + "-prompt-v2"


def test_an_unchanged_rubric_is_answered_from_the_cache_and_a_new_model_is_not(project, judge_server):
    assert run_json(project, "eval", "-q")[0].exit_code == 0
    write_config(project, judge_server.url, exploding_agent(project))
    result, report = run_json(project, "rejudge", "latest", "-q")
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 3  # not one more: every verdict from the cache
    assert "judge calls: 3, from cache: 3" in result.stdout
    assert report["usage"]["judge_from_cache"] == 3
    result, report = run_json(project, "rejudge", "latest", "-q", "--judge-model", "claude-haiku-4-5")
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 6
    assert {b["model"] for b in judge_server.bodies()[3:]} == {"claude-haiku-4-5"}
    assert report["session"]["judge_model"] == "claude-haiku-4-5"
    assert "with judge claude-haiku-4-5" in result.stdout
    diff = scarbook(project, "diff")  # previous (the first rejudge) against latest (its rejudge by haiku)
    assert diff.exit_code == 0, diff.output
    assert "(judge 'claude-sonnet-4-6' -> 'claude-haiku-4-5')" in diff.stdout
    assert not (project / "ran.txt").exists()


def test_rule_check_failures_are_carried_and_unkept_artifacts_listed(project, judge_server, monkeypatch):
    monkeypatch.setenv("REJUDGE_SKIP_RUNS", "2")
    result, source = run_json(project, "eval", "-q", "-n", "4")
    assert [r["status"] for r in source["runs"]] == ["pass", "fail", "pass", "pass"], result.output
    assert len(judge_server.requests) == 3  # run 2 failed its rule check: never judged
    sid = source["session"]["id"]
    # run 3's artifact is lost (a pruned store); run 4's record predates kept artifacts
    runs_file = next((project / "workspaces" / "history" / sid).glob("*.jsonl"))
    lines = [json.loads(line) for line in runs_file.read_text().splitlines()]
    for line in lines:
        if line["k"] == 4:
            line["judge_artifacts"] = {}
    runs_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    change_rubric(project)
    sha = next(line for line in lines if line["k"] == 1)["judge_artifacts"]["1"]["sha256"]
    kept = artifact_files(project)[0]
    kept.rename(project / "elsewhere.json")
    rejudged = scarbook(project, "rejudge", sid)
    assert rejudged.exit_code == 2
    gone = f"its artifact {sha[:12]} is no longer in {project / 'workspaces' / FOLDER}"
    assert rejudged.stderr == (
        f"scarbook: no judged run of session {sid} can be graded again (3 runs not re-judgeable):\n"
        f"  judge-me #1: {gone}\n  judge-me #3: {gone}\n"
        "  judge-me #4: its artifact was not kept (the session predates kept artifacts, or "
        "judge.keep_artifacts was false)\n")
    (project / "elsewhere.json").rename(kept)
    write_config(project, judge_server.url, exploding_agent(project))
    result, report = run_json(project, "rejudge", sid)
    assert result.exit_code == 3, result.output  # run 4 cannot be graded again: its case has no verdict (issue 33.15)
    assert len(judge_server.requests) == 5  # runs 1 and 3
    assert [(r["k"], r["status"]) for r in report["runs"]] == [(1, "pass"), (2, "fail"), (3, "pass"), (4, "unjudged")]
    assert report["runs"][1]["judge_calls"] == 0 and report["runs"][1]["cause"] == source["runs"][1]["cause"]
    assert report["runs"][3]["judge_calls"] == 0 and report["runs"][3]["cause"] is None
    assert ("1 run not re-judgeable (1 kept without a verdict, so its case has none):\n  judge-me #4: its artifact "
            "was not kept (the session predates kept artifacts, or judge.keep_artifacts was false)\n") in result.stderr
    assert "2 runs graded again from kept artifacts, 1 carried (rule checks failed), no agent runs; 1 run not " \
           "re-judgeable" in result.stdout
    assert report["session"]["rerun_of"]["not_rejudgeable"] == [
        {"case": "judge-me", "k": 4, "why": "its artifact was not kept (the session predates kept artifacts, or "
                                            "judge.keep_artifacts was false)"}]
    assert not (project / "ran.txt").exists()


def test_keep_artifacts_false_keeps_none(project, judge_server):
    write_config(project, judge_server.url, (project / "scarbook.yaml").read_text().splitlines()[0],
                 "  keep_artifacts: false\n")
    result, source = run_json(project, "eval", "-q", "-n", "1")
    assert result.exit_code == 0, result.output
    assert artifact_files(project) == []
    assert source["runs"][0]["judge_artifacts"] == {"1": {"not_kept": "judge.keep_artifacts was false"}}
    rejudged = scarbook(project, "rejudge", "latest")
    assert rejudged.exit_code == 2
    assert rejudged.stderr == (
        f"scarbook: no judged run of session {source['session']['id']} can be graded again (1 run not "
        "re-judgeable):\n  judge-me #1: its artifact was not kept (judge.keep_artifacts was false)\n")


def test_bad_input_is_said_and_nothing_is_recorded(project, judge_server):
    first, source = run_json(project, "eval", "-q", "-n", "1", "-l", "v1")
    assert first.exit_code == 0, first.output
    sid = source["session"]["id"]
    skipped, unjudged = run_json(project, "eval", "-q", "-n", "1", "-l", "skipped", "--skip-judge")
    assert skipped.exit_code == 3
    sessions = sorted(p.name for p in (project / "workspaces" / "history").iterdir())
    for args, message in [
        (("nope",), "no session matches 'nope' (by id, label, 'latest' or 'previous') — see `scarbook sessions`"),
        (("v1", "other"), f"case 'other' is not in session {sid} (its cases: judge-me)"),
        (("skipped", "judge-me"), f"session {unjudged['session']['id']} has no judged runs of judge-me: nothing to "
                                  "grade again (its judge checks were skipped or never reached) — run scarbook eval"),
        (("skipped",), f"session {unjudged['session']['id']} has no judged runs: nothing to grade again (its judge checks were skipped or never "
                       "reached) — run scarbook eval"),
    ]:
        result = scarbook(project, "rejudge", *args)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"scarbook: {message}\n"
    assert sorted(p.name for p in (project / "workspaces" / "history").iterdir()) == sessions
    assert len(judge_server.requests) == 1


def test_rejudge_of_a_100_run_session_takes_judge_time_only(project, judge_server):
    """Done-when: a 100-run session graded again spends no agent time — the agent (which would leave a
    marker) never starts, every judge call is counted by the server, each run's time is its judge's."""
    start = time.monotonic()
    first, source = run_json(project, "eval", "-q", "-n", "100", "-j", "8")
    print(f"eval of 100 runs: {time.monotonic() - start:.2f}s wall")
    assert first.exit_code == 0, first.output
    assert len(judge_server.requests) == 100
    assert len(artifact_files(project)) == 1  # 100 identical artifacts, one file
    change_rubric(project)
    write_config(project, judge_server.url, exploding_agent(project))
    start = time.monotonic()
    result, report = run_json(project, "rejudge", "latest", "-q", "-j", "8")
    took = time.monotonic() - start
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 200 and len(report["runs"]) == 100
    assert not (project / "ran.txt").exists()
    assert all(r["agent_usage"]["cost_usd"] == 0 and r["judge_calls"] == 1 for r in report["runs"])
    judge_s = sum(judged(r)["duration_s"] for r in report["runs"])
    print(f"rejudge of 100 runs: {took:.2f}s wall, {judge_s:.2f}s of judge calls summed over runs")


def test_an_invalid_case_is_named_not_called_missing(project, judge_server):
    first, source = run_json(project, "eval", "-q", "-n", "1")
    assert first.exit_code == 0, first.output
    case = project / "cases" / "judge-me" / "case.yaml"
    case.write_text("- not a case\n")
    result = scarbook(project, "rejudge", "latest")
    assert result.exit_code == 2
    assert result.stderr == (
        f"scarbook: case 'judge-me' of session {source['session']['id']} cannot be read now, so it has no rubric to "
        f"grade with: {case}:1: a case file must be a mapping of keys (id, task, checks, ...) — start the file with "
        "'id: <case-id>' — fix it, or name the session's other cases\n")


def test_a_rejudge_without_the_judges_key_says_to_set_it_and_offers_no_option_it_lacks(project, monkeypatch):
    """Before: 'set ANTHROPIC_API_KEY or run with --skip-judge' — rejudge has no --skip-judge (it only judges)."""
    assert scarbook(project, "eval", "-q").exit_code == 0
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = scarbook(project, "rejudge", "latest")
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "scarbook: the llm_judge checks need an API key, but ANTHROPIC_API_KEY is not set: set ANTHROPIC_API_KEY "
        "— a rejudge only judges: it has nothing to run without the judge")
    assert len(History(project / "workspaces").sessions()) == 1


def test_an_aborted_rejudge_says_how_many_runs_it_graded_not_how_many_it_meant_to(project, judge_server):
    """Before: the judge refused the key at the first run, the session aborted with 1 run recorded, and the
    report still said '3 runs graded again from kept artifacts' (seen failing before)."""
    from tests.helpers.judge_server import status_reply

    assert scarbook(project, "eval", "-q", "-l", "src").exit_code == 0
    judge_server.default = status_reply(401)
    result, report = run_json(project, "rejudge", "src", "-q", "-j", "1", "--judge-model", "claude-opus-4-1")
    assert result.exit_code == 3, result.output
    recorded = len(report["runs"])
    assert report["session"]["state"] == "aborted" and 1 <= recorded < 3
    sid = report["session"]["rerun_of"]["session"]
    assert (f"rejudge of session {sid} with judge claude-opus-4-1: 3 runs to grade again from kept artifacts, 0 "
            f"carried (rule checks failed), no agent runs; the session was aborted with {recorded} of them recorded; "
            "the source session's rates are unchanged") in result.output


def test_a_rejudge_whose_key_the_judge_rejects_offers_no_option_it_lacks(project, judge_server):
    """A 401 from the judge: 'check ANTHROPIC_API_KEY (…) or run with --skip-judge' on every line that said it (the
    aborted runs, the abort) — rejudge has no --skip-judge."""
    assert scarbook(project, "eval", "-q").exit_code == 0
    change_rubric(project)  # not answered from the verdict cache: the judge is asked
    judge_server.default = status_reply(401, "invalid x-api-key")
    result = scarbook(project, "rejudge", "latest", "-q")
    assert result.exit_code == 3, result.output
    why = (f"the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the session "
           "stopped before grading more runs: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in "
           "scarbook.yaml) — a rejudge only judges: it has nothing to run without the judge")
    assert f"scarbook: session aborted: {why}\n" in result.stderr
    assert "--skip-judge" not in result.output
    rejudged = History(project / "workspaces").sessions()[0]
    assert {r.reason for r in History(project / "workspaces").runs(rejudged.id)} == {why}
