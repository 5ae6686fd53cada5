"""`scarbook rubric stats` and `scarbook lint` on a planted history (issue 35.3): the figures and flags in
words, damaged history lines skipped and counted, and lint's hints from the figures."""

from __future__ import annotations

import json

from scarbook.text import pct
from tests.helpers.item_history import plant_bundled


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
