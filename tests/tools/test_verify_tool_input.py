"""Verify of a case whose artifact is a tool call's input: the scar's artifact is put as the input of the agent's
last call to that tool, so the checks that read it must fail the failed artifact and pass the good one."""

from __future__ import annotations

from pathlib import Path

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


def test_a_check_that_reads_the_wrong_tool_misses_the_scar(tmp_path) -> None:
    """The scar holds no Bash call to read (and no transcript): the check has nothing to fail on."""
    _case(tmp_path, "  - {type: not_contains, artifact: {tool: Bash, field: command}, text: All tests pass}\n")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "pr"])
    assert (res.exit_code, res.output) == (1, "pr  misses the scar: every check passes the failed artifact — the case "
                                              "would not have caught the incident; sharpen the checks or rubric\n")
