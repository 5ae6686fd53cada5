"""A run that leaves many files costs its checks time in proportion, never the square. only_changed looked
each changed file up in a list of the changed files: a real agent that made 30,000 empty files (a second
or two of its time) held the check about 15 s on a quiet machine — 200,000 files, ten minutes, with no
timeout over a rule check. Unconfined and sandboxed (the workspace is the agent's in both)."""

from __future__ import annotations

import pytest

from tests.helpers.hostile_project import eval_json, inline_agent

AGENT = """
import os
os.mkdir("m")
for i in range(30_000):
    open(f"m/{i:05}", "w").close()
open("out.txt", "w").write("done")
"""


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_only_changed_over_30000_new_files_takes_no_time(project, isolation) -> None:
    inline_agent(project, AGENT, isolation, "  - {type: only_changed, paths: [out.txt]}\n", timeout_s=120)
    _, _, (run,) = eval_json(project, 1)
    (check,) = run["checks"]
    assert (run["status"], check["detail"]) == (
        "fail", "changed outside the allowed list: created m/00000, m/00001, m/00002, m/00003, m/00004 …")
    assert check["duration_s"] < 3, check["duration_s"]  # (15 s before, on a quiet machine; now milliseconds)
