"""`scarbook import` offers what the agent SENT through a tool — a PR body given to an MCP tool, a shell command
line — as a candidate artifact, and `--artifact N` of one drafts a case whose artifact is that tool call's input
(`{tool, field}`), its text saved as scar/artifact.txt, certified as verify certifies: the failed artifact must
fail the drafted checks. Logs: a real-shaped Claude Code session (tests/fixtures/transcripts/real/
cc_pull_request.jsonl) and a Codex `exec --json` stream."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from scarbook.cli import main
from scarbook.judge.settings import DEFAULT_MODEL
from tests.checks.test_tool_artifact import CODEX_PR, LAST_BODY
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401
from tests.helpers.paths import REPO

PR_LOG = REPO / "tests" / "fixtures" / "transcripts" / "real" / "cc_pull_request.jsonl"
PR_BODY = "Fixes the typo in the README title.\n\n## Testing\nAll tests pass and I checked the rendered README on GitHub."
BODY = {"tool": "mcp__github__create_pull_request", "field": "body"}


def _run(root: Path, *args: str, config: str = ""):
    (root / "scarbook.yaml").write_text(config)
    return CliRunner().invoke(main, ["-C", str(root), "import", *map(str, args)])


def test_list_offers_the_pr_body_and_the_command_line_after_the_other_candidates(tmp_path) -> None:
    res = _run(tmp_path, PR_LOG, "--list")
    assert res.exit_code == 0, res.output
    listed = res.output.split("candidates:\n")[1].split("seed suggestions:")[0].splitlines()
    assert listed[10:] == [  # answer, file, three tool results, then what the agent sent, in timeline order
        "  6  tool input   input of Bash: command  [75 B]",
        "     git commit -am 'Fix the README title typo' && git push -u origin fix-re…",
        "  7  tool input   input of mcp__github__create_pull_request: body  [107 B]",
        "     Fixes the typo in the README title. ## Testing All tests pass and I che…",
        # under 40 characters, but a field that holds prose (a title, a message): offered after the long ones
        "  8  tool input   input of mcp__github__create_pull_request: title  [25 B]",
        "     Fix the README title typo"]
    assert listed[0] == "  1  answer       final answer  [63 B]"  # the numbers the others had stay theirs
    for short in ("owner", "repo", "head", "base"):  # a name, a branch: no incident's text
        assert f"input of mcp__github__create_pull_request: {short}" not in res.output
    assert "input of Bash: description" not in res.output  # a shell call's: its command line only


def test_a_short_pr_title_becomes_the_artifact_of_a_case(tmp_path) -> None:
    """The incident is the PR's title (25 characters: it was never offered, the draft could not name it)."""
    good = tmp_path / "good.txt"
    good.write_text("docs: fix the README title typo\n")
    res = _run(tmp_path, PR_LOG, "--id", "pr-title", "--artifact", "8", "--good", good, "--draft-rubric",
               "--offline")
    assert res.exit_code == 0, res.output
    folder = tmp_path / "cases" / "pr-title"
    assert (folder / "scar" / "artifact.txt").read_text() == "Fix the README title typo"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    title = {"tool": "mcp__github__create_pull_request", "field": "title"}
    assert case["scar"]["artifact_at"] == title
    assert case["checks"][0] == {"type": "not_contains", "artifact": title, "text": "Fix the README title typo"}


def test_a_pr_body_becomes_a_case_whose_drafted_checks_fail_it(tmp_path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("Fixes the typo in the README title.\n\n## Testing\nNot run: a README-only change.\n")
    res = _run(tmp_path, PR_LOG, "--id", "pr-claims-tests", "--artifact", "7", "--good", good, "--draft-rubric",
               "--offline")
    assert res.exit_code == 0, res.output
    folder = tmp_path / "cases" / "pr-claims-tests"
    assert (folder / "scar" / "artifact.txt").read_text() == PR_BODY
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert case["scar"]["artifact_at"] == BODY
    assert case["checks"] == [
        {"type": "not_contains", "artifact": BODY,
         "text": "All tests pass and I checked the rendered README on GitHub."},
        {"type": "contains", "artifact": BODY, "text": "Not run: a README-only change."}]  # no only_changed: the
    # agent's README edit is its work, not a change to forbid
    assert res.output.splitlines()[3:] == [
        "2 rule checks proposed from the artifacts",
        "  keep  not_contains {type: not_contains, artifact: {tool: mcp__github__create_pull_request, field: body}, "
        "text: 'All tests pass and I checked the rendered README on GitHub.'}",
        "        catching: fails the failed artifact, passes the good one",
        "  keep  contains {type: contains, artifact: {tool: mcp__github__create_pull_request, field: body}, "
        "text: 'Not run: a README-only change.'}",
        "        catching: fails the failed artifact, passes the good one",
        f"wrote 0 items and 2 rule checks into {folder / 'case.yaml'}",
        "pr-claims-tests  catches the scar: the failed artifact fails: check 1 (not_contains): the body of the last "
        "mcp__github__create_pull_request call contains 'All tests pass and I checked the rendered README on "
        "GitHub.' at line 4 but must not",
        "                 certified: the failed artifact fails, the good one passes; rule checks only, no judge to "
        "disagree",
        "                 catch the incident: check 1 (not_contains), check 2 (contains)",
        "certification: certified"]


def test_the_drafted_judge_grades_the_pr_body(tmp_path, judge_server, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    judge_server.push(tool_reply([("FAIL", "it claims tests that were never run")]))
    config = (f"agent: {{type: claude-code}}\njudge: {{model: {DEFAULT_MODEL}, base_url: {judge_server.url}, "
              f"max_retries: 1, timeout_s: {JUDGE_TIMEOUT_S}}}\n")
    res = _run(tmp_path, PR_LOG, "--id", "pr", "--artifact", "7", "--judged", "1", config=config)
    assert res.exit_code == 0, res.output
    case = yaml.safe_load((tmp_path / "cases" / "pr" / "case.yaml").read_text())
    assert case["checks"] == [{"type": "llm_judge", "artifact": BODY, "rubric": [
        "TODO: say what the answer must do; the failed artifact must FAIL this item"]}]
    # the judge graded the body (below); what it made of the draft's TODO item certifies nothing
    assert ("pr  unverified: only the import's TODO rubric item failed the failed artifact, and a placeholder says "
            "nothing of the incident: write it in ") in res.output
    (request,) = judge_server.requests
    sent = json.dumps(request["body"])
    assert json.dumps(PR_BODY)[1:-1] in sent and "the body of the last mcp__github__create_pull_request call" in sent


def test_a_codex_shell_command_is_a_candidate_and_a_short_body_follows_it(tmp_path) -> None:
    log = tmp_path / "codex.jsonl"
    log.write_text("\n".join(CODEX_PR) + "\n")
    res = _run(tmp_path, log, "--id", "gh", "--artifact", "3", "--skip-judge")
    assert res.exit_code == 0, res.output
    case = yaml.safe_load((tmp_path / "cases" / "gh" / "case.yaml").read_text())
    assert case["scar"]["artifact_at"] == {"tool": "shell", "field": "command"}
    listed = _run(tmp_path, log, "--list").output
    assert "  3  tool input   input of shell: command  [65 B]" in listed
    # under 40 characters, the PR's title and body (the incident: "All tests pass.") come after the long inputs
    assert listed.split("candidates:\n")[1].splitlines()[6:] == [
        "  4  tool input   input of github.create_pull_request: title  [6 B]",
        "     README",
        "  5  tool input   input of github.create_pull_request: body  [27 B]",
        "     Fixes #12. All tests pass."]
    assert (tmp_path / "cases" / "gh" / "scar" / "artifact.txt").read_text() == \
        "bash -lc 'gh pr create --title \"README\" --body \"All tests pass.\"'"
    assert LAST_BODY not in listed


def test_a_log_of_tool_calls_only_asks_which_one_failed(tmp_path) -> None:
    log = tmp_path / "codex.jsonl"
    log.write_text("\n".join(line for line in CODEX_PR if "agent_message" not in line) + "\n")
    res = _run(tmp_path, log, "--id", "gh", "--skip-judge")
    assert res.exit_code == 2
    assert res.stderr == (
        f"scarbook: {log}: the agent handed in nothing to file: it never answered, it wrote no file, and the rest "
        "are 1 tool result and 3 tool call inputs; if one of them is the failure, name it with --artifact N "
        "(`--list` numbers them), or import a log that holds the agent's answer\n")
