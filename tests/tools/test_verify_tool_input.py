"""Verify of a case whose artifact is a tool call's input: the scar's artifact is put as the input of the agent's
last call to that tool, so the checks that read it must fail the failed artifact and pass the good one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cli import main

BODY = "{tool: mcp__github__create_pull_request, field: body}"


def _case(root: Path, checks: str, artifact_at: str = BODY) -> None:
    (root / "scarbook.yaml").write_text("agent: {type: claude-code}\n")
    folder = root / "cases" / "pr"
    (folder / "scar").mkdir(parents=True)
    (folder / "case.yaml").write_text(f"id: pr\ntask: Open a PR for the README fix\nchecks:\n{checks}scar:\n"
                                      "  failed_artifact: scar/artifact.txt\n  good_artifact: scar/good.txt\n"
                                      f"  artifact_at: {artifact_at}\n")
    (folder / "scar" / "artifact.txt").write_text("Fixes #12.\n\nAll tests pass.\n")
    (folder / "scar" / "good.txt").write_text("Fixes #12.\n")


def test_the_scar_is_the_last_call_of_its_tool(tmp_path) -> None:
    _case(tmp_path, f"  - {{type: not_contains, artifact: {BODY}, text: All tests pass}}\n")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "pr"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[:2] == [
        "pr  catches the scar: the failed artifact fails: check 1 (not_contains): the body of the last "
        "mcp__github__create_pull_request call contains 'All tests pass' at line 3 but must not",
        "    certified: the failed artifact fails, the good one passes; rule checks only, no judge to disagree"]


@pytest.mark.parametrize("reads, artifact_at, said", [
    ("{tool: Bash, field: command}", BODY,
     "check 1 (not_contains) reads the command of the last Bash call, but the scar's artifact is the body of the last "
     "mcp__github__create_pull_request call (scar.artifact_at): the check never saw the incident, so the case would "
     f"not have caught it — point the check's artifact at {BODY}, or scar.artifact_at at {{tool: Bash, field: command}}"),
    ("{tool: Bash, field: command}", "PR.md",
     "check 1 (not_contains) reads the command of the last Bash call, but the scar's artifact is the file PR.md "
     "(scar.artifact_at): the check never saw the incident, so the case would not have caught it — point "
     "scar.artifact_at at {tool: Bash, field: command}"),
], ids=["another-tool", "a-file"])
def test_a_check_that_reads_another_tool_input_says_which_it_reads_and_which_the_scar_is(tmp_path, reads, artifact_at,
                                                                                         said) -> None:
    """The scar holds no call of what the check reads (and no transcript): the check had nothing to fail on. It said
    "every check passes the failed artifact … sharpen the checks or rubric", which no sharpening fixes."""
    _case(tmp_path, f"  - {{type: not_contains, artifact: {reads}, text: All tests pass}}\n", artifact_at)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "pr"])
    assert (res.exit_code, res.output) == (1, f"pr  misses the scar: {said}\n")
