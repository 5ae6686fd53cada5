"""issue 27 (1): the verdict cache — a second eval of unchanged artifacts sends no judge call.

The judge is the real anthropic SDK against tests/helpers/judge_server.py; its request log is the proof."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.judge.artifact import Artifact
from scarbook.judge.cache import FOLDER, SampleKey, VerdictCache
from scarbook.models import Check
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, JudgeServer, judge_server, make_judge, tool_reply  # noqa: F401

AGENT = """\
from pathlib import Path
Path("tmp.txt").write_text("# tiny-agent\\n")
print("done")
"""

CASE = """\
id: judge-me
title: Claimed one line
task: Extract the first line of README.md and write it to tmp.txt
checks:
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - tmp.txt contains exactly one line
      - that line is the README's title
"""

ONE_CALL_USD = (1000 * 3 + 100 * 15) / 1_000_000  # the server's default usage at claude-sonnet-4-6 prices


def write_config(root: Path, url: str, extra: str = "") -> None:
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent:
          type: command
          argv: [{json.dumps(sys.executable)}, {json.dumps(str(root / "agent.py"))}]
        runs: 3
        concurrency: 1
        threshold: 0.5
        gate: {{mode: point}}
        judge:
          model: claude-sonnet-4-6
          base_url: {url}
          max_retries: 0
          timeout_s: {JUDGE_TIMEOUT_S}
        """) + extra)


@pytest.fixture
def project(tmp_path, judge_server, monkeypatch):
    (tmp_path / "agent.py").write_text(AGENT)
    write_config(tmp_path, judge_server.url)
    (tmp_path / "cases" / "judge-me").mkdir(parents=True)
    (tmp_path / "cases" / "judge-me" / "case.yaml").write_text(CASE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    judge_server.default = tool_reply([("PASS", "one line"), ("PASS", "title")])
    return tmp_path


def scarbook(project, *args):
    return CliRunner().invoke(main, ["-C", str(project), *args], catch_exceptions=False)


def eval_json(project, *args):
    out = project / "report.json"
    result = scarbook(project, "eval", "-q", "--json", str(out), *args)
    return result, json.loads(out.read_text())


def judged(run):
    return next(c for c in run["checks"] if c["type"] == "llm_judge")["judge"]


def cache_files(project) -> list[Path]:
    return sorted((project / "workspaces" / FOLDER).glob("*/*.json"))


def test_second_eval_of_unchanged_artifacts_sends_no_judge_call(project, judge_server):
    first, _ = eval_json(project)
    assert first.exit_code == 0, first.output
    assert len(judge_server.requests) == 3  # the runs of one session are graded independently
    assert "from cache" not in first.output
    assert len(cache_files(project)) == 1  # three identical artifacts, one key
    graded_at = json.loads(cache_files(project)[0].read_text())["graded_at"]

    second, report2 = eval_json(project)
    assert second.exit_code == 0, second.output
    assert len(judge_server.requests) == 3  # the server's log: not one request more
    assert f"judge calls: 3, from cache: 3, saved ${3 * ONE_CALL_USD:.4f}" in second.output
    assert report2["usage"]["judge_calls"] == 0 and report2["usage"]["judge_from_cache"] == 3
    assert report2["usage"]["judge_cache_saved_usd"] == pytest.approx(3 * ONE_CALL_USD)
    assert report2["usage"]["judge"]["cost_usd"] == 0
    for run in report2["runs"]:
        assert run["status"] == "pass" and run["judge_calls"] == 0
        assert run["judge_usage"]["input_tokens"] == 0 and run["judge_usage"]["cost_usd"] == 0
        record = judged(run)
        assert record["cache"] == {"hits": 1, "saved_usd": pytest.approx(ONE_CALL_USD), "saved_tokens": 1100,
                                   "graded_at": graded_at}
        assert [i["reason"] for i in record["items"]] == ["one line", "title"]
    shown = scarbook(project, "show", "judge-me").output
    assert f"  judge verdict from the cache: 1 sample graded {graded_at}, saved ${ONE_CALL_USD:.4f}" in shown


def test_a_changed_artifact_or_rubric_is_graded_again(project, judge_server):
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    assert len(judge_server.requests) == 1
    (project / "agent.py").write_text(AGENT.replace("# tiny-agent", "# tiny-agent v2"))
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    assert len(judge_server.requests) == 2
    case = project / "cases" / "judge-me" / "case.yaml"
    case.write_text(case.read_text().replace("exactly one line", "one line only"))
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    assert len(judge_server.requests) == 3
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    assert len(judge_server.requests) == 3  # and unchanged again: from the cache


def test_another_endpoint_is_asked_not_served_the_first_endpoints_verdict(project, judge_server):
    """The key held the model but not where it was reached: a verdict another vendor's endpoint gave for the same
    model name was served as this one's (the second server was never asked; the run passed on the first's PASS)."""
    other = JudgeServer().start()
    try:
        other.default = tool_reply([("FAIL", "two lines"), ("PASS", "title")])
        first, report1 = eval_json(project, "-n", "1")
        assert first.exit_code == 0, first.output
        assert report1["runs"][0]["status"] == "pass" and len(judge_server.requests) == 1
        write_config(project, other.url)
        second, report2 = eval_json(project, "-n", "1")
        assert len(other.requests) == 1 and len(judge_server.requests) == 1
        assert "from cache" not in second.output
        (run,) = report2["runs"]
        assert run["status"] == "fail" and judged(run)["base_url"] == other.url
        assert [i["reason"] for i in judged(run)["items"]] == ["two lines", "title"]
        assert len(cache_files(project)) == 2  # one entry per endpoint
        write_config(project, judge_server.url)  # back to the first: its own entry serves
        third, report3 = eval_json(project, "-n", "1")
        assert (len(judge_server.requests), len(other.requests)) == (1, 1)
        assert report3["runs"][0]["status"] == "pass" and judged(report3["runs"][0])["cache"]["hits"] == 1
    finally:
        other.stop()


def test_another_max_tokens_is_graded_again(project, judge_server):
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    write_config(project, judge_server.url, "  max_tokens: 2048\n")
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    assert len(judge_server.requests) == 2 and judge_server.bodies()[1]["max_tokens"] == 2048


def test_no_judge_cache_flag_and_config_send_every_call(project, judge_server):
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    result, report = eval_json(project, "-n", "1", "--no-judge-cache")
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 2 and report["usage"]["judge_from_cache"] == 0
    write_config(project, judge_server.url, "  cache: false\n")
    result, report = eval_json(project, "-n", "1")
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 3 and "cache" not in judged(report["runs"][0])


def test_a_damaged_entry_is_named_ignored_and_rewritten(project, judge_server):
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    (entry,) = cache_files(project)
    whole = entry.read_text()
    entry.write_text(whole[: len(whole) // 2])  # a torn file: never trusted in part
    result, report = eval_json(project, "-n", "1")
    assert result.exit_code == 0, result.output
    assert len(judge_server.requests) == 2
    assert f"warning: judge cache entry {entry} is damaged (not JSON: " in result.output
    assert "ignored, the judge grades it again" in result.output
    assert "cache" not in judged(report["runs"][0])
    json.loads(entry.read_text())  # rewritten whole by the fresh verdict
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    assert len(judge_server.requests) == 2


def test_an_entry_whose_verdicts_do_not_fit_is_ignored(project, judge_server):
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    (entry,) = cache_files(project)
    data = json.loads(entry.read_text())
    data["items"] = data["items"][:1]  # valid JSON, one item short: not used for the item it has either
    entry.write_text(json.dumps(data))
    result = eval_json(project, "-n", "1")[0]
    assert f"warning: judge cache entry {entry} is damaged (verdicts: item 2 not graded)" in result.output
    assert len(judge_server.requests) == 2


def test_each_sample_is_cached_under_its_own_index(tmp_path, judge_server):
    judge_server.push(tool_reply([("PASS", "a")]), tool_reply([("FAIL", "b")]), tool_reply([("PASS", "c")]))
    check = Check("llm_judge", {"rubric": ["is fine"]})
    artifact = Artifact("hello", "the agent's final output", "output", 5)

    def grade():
        judge = make_judge(judge_server, samples=3, cache=True)
        judge.cache = VerdictCache(tmp_path / FOLDER)
        return asyncio.run(judge.grade_artifact(check, artifact, "task")).judge

    first = grade()
    assert len(judge_server.requests) == 3 and first.items[0].votes == ("PASS", "FAIL", "PASS")
    second = grade()  # a new judge: another session
    assert len(judge_server.requests) == 3
    assert second.items[0].votes == ("PASS", "FAIL", "PASS")
    assert second.items[0].reasons == ("a", "b", "c")
    assert second.calls == 0 and second.cache.hits == 3


def test_the_same_session_does_not_serve_its_own_entries(tmp_path, judge_server):
    judge_server.default = tool_reply([("PASS", "a")])
    check = Check("llm_judge", {"rubric": ["is fine"]})
    artifact = Artifact("hello", "the agent's final output", "output", 5)
    judge = make_judge(judge_server)
    judge.cache = VerdictCache(tmp_path / FOLDER)

    async def twice():
        await judge.grade_artifact(check, artifact, "task")
        return await judge.grade_artifact(check, artifact, "task")

    assert asyncio.run(twice()).judge.calls == 1
    assert len(judge_server.requests) == 2


def test_show_names_prompt_cache_tokens(project, judge_server):
    judge_server.default = tool_reply([("PASS", "a"), ("PASS", "b")],
                                      usage={"input_tokens": 40, "output_tokens": 100, "cache_read_input_tokens": 0,
                                             "cache_creation_input_tokens": 1200})
    assert eval_json(project, "-n", "1")[0].exit_code == 0
    cost = (40 * 3 + 100 * 15 + 1200 * 3.75) / 1e6
    assert f"  judge usage: 40 in / 100 out tokens, prompt cache 1200 written / 0 read, ${cost:.4f}" \
        in scarbook(project, "show", "judge-me").output


def test_judge_cache_must_be_a_flag(tmp_path):
    from scarbook.errors import ConfigError
    from scarbook.judge import JudgeSettings

    assert JudgeSettings.from_dict({"cache": False}, tmp_path / "scarbook.yaml").cache is False
    with pytest.raises(ConfigError) as raised:
        JudgeSettings.from_dict({"cache": "off"}, tmp_path / "scarbook.yaml")
    assert "judge.cache must be true or false, not a string" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        JudgeSettings.from_dict({"caches": False}, tmp_path / "scarbook.yaml")
    assert "unknown key judge.caches" in str(raised.value)


def test_concurrent_writers_and_readers_never_see_half_an_entry(tmp_path):
    import threading

    from scarbook.judge.verdict import ItemVerdict
    from scarbook.models import Usage

    key = SampleKey("the artifact", "out.txt", None, None, ("one", "two"), "claude-sonnet-4-6",
                    "https://api.anthropic.com", "p", 0.0, 1024, 0)
    writers = [VerdictCache(tmp_path / FOLDER) for _ in range(4)]  # four sessions at once
    reader = VerdictCache(tmp_path / FOLDER)
    verdicts = [ItemVerdict(1, "PASS", "x" * 5000), ItemVerdict(2, "FAIL", "y" * 5000)]
    stop = threading.Event()

    def write(cache):
        while not stop.is_set():
            cache.put(key, verdicts, Usage(1000, 100, cost_usd=0.0045), "2026-12-04T00:00:00+00:00")

    threads = [threading.Thread(target=write, args=(c,)) for c in writers]
    for t in threads:
        t.start()
    try:
        seen = [reader.get(key, 2) for _ in range(300)]
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert reader.warnings == []
    assert any(s is not None for s in seen)
    assert all(s is None or [v.verdict for v in s.verdicts] == ["PASS", "FAIL"] for s in seen)
    assert not list((tmp_path / FOLDER).glob("**/.*.tmp"))  # no temp file left behind
