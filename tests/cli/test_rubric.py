"""`scarbook rubric stats` and `scarbook lint` on a planted history (issue 35.3): the figures and flags in
words, damaged history lines skipped and counted, and lint's hints from the figures."""

from __future__ import annotations

import json

from scarbook.text import pct
from tests.helpers.item_history import plant_bundled
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401


def test_rubric_stats_prints_each_items_figures_and_flags(project) -> None:
    _, _, ids = plant_bundled(project)
    res = project.cli("rubric", "stats", "review-api-claims")
    assert res.exit_code == 0, res.output
    pad = " " * len(ids["x"])
    assert res.stdout.splitlines() == [
        "review-api-claims  (2 items)",
        f"  {ids['x']}  the review names the cache_control claim as unsourced",
        f"  {pad}  120 runs judged (3 sessions) · FAIL 100% (95%: 97–100%) · only failing item 90×",
        f"  {pad}  always fails: failed in every one of 120 runs over 3 sessions",
        f"  {ids['y']}  the review lists each assertion by name",
        f"  {pad}  120 runs judged (3 sessions) · FAIL 25% (95%: 18–33%) · only failing item 0×",
        "120 runs read; 2 damaged history lines skipped (named above)",
    ]
    assert res.stderr.count("history: history file ") == 2  # each damaged line named, with its fix


def test_rubric_stats_json_and_lint_use_the_figures(project) -> None:
    _, _, ids = plant_bundled(project)
    doc = json.loads(project.cli("rubric", "stats", "write-one-line", "--json").stdout)
    [d] = [i for i in doc["cases"]["write-one-line"] if i["id"] == ids["d"]]
    assert (d["repeated"], d["disputed"], d["flags"]) == (380, 60, ["unstable"])
    lint = project.cli("lint", "write-one-line")
    assert lint.exit_code == 0, lint.output
    lines = lint.stdout.splitlines()
    assert ("write-one-line check 1 item 3 [dead-item] 'the final answer names tmp.txt' is dead: never failed in 380 "
            "runs over 4 sessions") in lines
    assert ("write-one-line check 1 item 4 [unstable-item] 'the final answer does not claim a line count it did not "
            "check' is unstable: the judge's repeated judgements disagreed on 60 of 380 artifacts") in lines
    assert sum("[redundant-item]" in line for line in lines) == 2
    assert sum("[judge-unreliable]" in line for line in lines) == 1
    assert pct(60 / 380) == "16%" and "repeats disagree 60/380" in project.cli("rubric", "stats").stdout


def test_rubric_stats_without_history_says_never_judged(project) -> None:
    project.bundled()
    path = project.cases_dir / "write-one-line" / "case.yaml"
    path.write_text(path.read_text().replace("checks:\n", "checks:\n  - type: llm_judge\n    rubric: [tmp.txt has one "
                                                           "line]\n", 1))
    res = project.cli("rubric", "stats")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[2:] == [" " * 11 + "never judged yet", "0 runs read"]


def test_a_rejudged_run_counts_once_and_its_regrading_is_a_repeat(project, judge_server, monkeypatch) -> None:
    """`scarbook rejudge` grades a session's kept artifacts again: each run counts once in its items' figures
    (with its latest verdict, in the session that ran it) — three rejudges of one session are not 3 sessions
    of runs towards *dead* — and the judgements of one artifact before and after are repeats that disagree."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.config("agent: {type: command, argv: [sh, -c, 'echo hi > out.txt']}\nisolation: none\n"
                   f"judge: {{base_url: {judge_server.url}, max_retries: 0, cache: false}}\n", gate=None)
    project.case("c1", "id: c1\ntask: write hi to out.txt\nchecks:\n  - type: llm_judge\n    artifact: out.txt\n"
                       "    rubric: [out.txt says hi]\n")
    judge_server.default = tool_reply([("PASS", "says hi")])
    first = project.cli("eval", "--runs", "2", "-q")
    assert first.exit_code == 0, first.output
    judge_server.default = tool_reply([("FAIL", "no greeting")])
    for _ in range(3):
        assert project.cli("rejudge", "latest", "-q").exit_code == 1
    doc = json.loads(project.cli("rubric", "stats", "--json").stdout)
    [item] = doc["cases"]["c1"]
    assert (item["runs_judged"], item["fails"], item["sessions"]) == (2, 2, 1)  # the latest verdicts: FAIL
    assert (item["repeated"], item["disputed"], item["flags"]) == (1, 1, ["unstable"])  # one out.txt, judged 8 times
    assert doc["runs_read"] == 8


def test_verify_judged_k_counts_as_repeats_of_each_scar_artifact_and_not_as_runs(project, judge_server,
                                                                                  monkeypatch) -> None:
    """`verify --judged 3` judges the failed and the good artifact 3 times each: two artifacts judged more
    than once for every item, item 2's verdicts on the failed one split — a repeat that disagrees — and no run
    judged (a verification is not a run)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project.config(f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n", gate=None)
    folder = project.case("c1", "id: c1\ntask: write the first line of README.md to tmp.txt\nchecks:\n"
                                "  - type: llm_judge\n    artifact: tmp.txt\n"
                                "    rubric: [tmp.txt holds only the first line, tmp.txt starts with a heading]\n"
                                "scar:\n  failed_artifact: scar/artifact.txt\n  good_artifact: scar/good.txt\n"
                                "  artifact_at: tmp.txt\n").parent
    (folder / "scar").mkdir()
    (folder / "scar" / "artifact.txt").write_text("# tiny\nmore\n")
    (folder / "scar" / "good.txt").write_text("# tiny\n")
    judge_server.push(tool_reply([("FAIL", "x"), ("FAIL", "x")]), tool_reply([("FAIL", "x"), ("PASS", "x")]),
                      tool_reply([("FAIL", "x"), ("FAIL", "x")]), *[tool_reply([("PASS", "x"), ("PASS", "x")])] * 3)
    assert project.cli("verify", "--judged", "3").exit_code == 0
    doc = json.loads(project.cli("rubric", "stats", "--json").stdout)
    first, second = doc["cases"]["c1"]
    assert (first["runs_judged"], first["repeated"], first["disputed"], first["flags"]) == (0, 2, 0, [])
    assert (second["runs_judged"], second["repeated"], second["disputed"], second["flags"]) == (0, 2, 1, ["unstable"])
