"""The one certification path (session/certify.py) that `scarbook verify`, `scarbook import`'s draft
certification and the TUI's verify all call: the judge chosen one way (no key: no judge is built and the
missing key is named; the key read from the environment the face passes), every result stored for the
library's badge — and the CLI and the TUI, on the same case, store the same certification. The real judge
SDK against tests/helpers/judge_server.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cases.verifications import CATCHES, UNVERIFIED, VerificationStore
from scarbook.cli import main
from scarbook.project import Project
from scarbook.session.certify import verify_cases
from scarbook.tui.app import make_app
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.tui_fixtures import SIZE, library_loaded, move_library_cursor, wait_until

SCAR = {"scar/artifact.txt": "# tiny-agent\nmore\n", "scar/good.txt": "# tiny-agent\n"}
RULES = """\
id: by-rules
task: Extract the first line of README.md and write it to tmp.txt
checks:
  - {type: line_count, path: tmp.txt, equals: 1}
scar: {failed_artifact: scar/artifact.txt, good_artifact: scar/good.txt}
"""
JUDGED = """\
id: by-judge
task: Extract the first line of README.md and write it to tmp.txt
checks:
  - type: llm_judge
    artifact: tmp.txt
    rubric: [tmp.txt holds only the first line]
scar: {failed_artifact: scar/artifact.txt, good_artifact: scar/good.txt}
"""


def make_project(root: Path, url: str) -> Project:
    for body in (RULES, JUDGED):
        folder = root / "cases" / body.split("\n", 1)[0].removeprefix("id: ")
        (folder / "scar").mkdir(parents=True)
        (folder / "case.yaml").write_text(body)
        for rel, text in SCAR.items():
            (folder / rel).write_text(text)
    (root / "scarbook.yaml").write_text(f"judge: {{base_url: {url}, max_retries: 0}}\n")
    return Project.open(root)


def stored(root: Path) -> dict:
    return {cid: (v.outcome, v.detail, v.failed_votes, v.good_votes, v.judge_stable, v.certified)
            for cid, v in VerificationStore(root / "workspaces").load().items()}


async def test_without_a_key_no_judge_is_built_and_the_rule_checks_decide(tmp_path, judge_server) -> None:
    project = make_project(tmp_path, judge_server.url)
    verified = await verify_cases(project, project.load_cases().cases, env={})
    assert verified.judge_missing == "no judge key in $ANTHROPIC_API_KEY"
    assert {v.case_id: v.outcome for v in verified.results} == {"by-rules": CATCHES, "by-judge": UNVERIFIED}
    assert judge_server.requests == []
    assert set(stored(tmp_path)) == {"by-rules", "by-judge"}  # both kept for the library's badge


async def test_the_key_is_read_from_the_environment_the_face_passes(tmp_path, judge_server, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # not this process's: the one given
    project = make_project(tmp_path, judge_server.url)
    judge_server.push(*[tool_reply([("FAIL", "two lines")])] * 3, *[tool_reply([("PASS", "one line")])] * 3)
    case = project.load_cases().by_id()["by-judge"]
    verified = await verify_cases(project, [case], env={"ANTHROPIC_API_KEY": "sk-given"}, times=3)
    assert verified.judge_missing == ""
    [v] = verified.results
    assert (v.outcome, v.failed_votes, v.good_votes, v.certified) == (CATCHES, ["fail"] * 3, ["pass"] * 3, True)
    assert {r["headers"].get("authorization") for r in judge_server.requests} == {"Bearer sk-given"}
    assert len(judge_server.requests) == 6


async def test_skip_judge_builds_no_judge_even_with_a_key(tmp_path, judge_server) -> None:
    project = make_project(tmp_path, judge_server.url)
    verified = await verify_cases(project, project.load_cases().cases, skip_judge=True,
                                  env={"ANTHROPIC_API_KEY": "sk-given"})
    assert verified.judge_missing == "" and judge_server.requests == []
    assert {v.case_id: v.outcome for v in verified.results} == {"by-rules": CATCHES, "by-judge": UNVERIFIED}


@pytest.mark.parametrize("key", ["sk-test", ""])
async def test_the_cli_and_the_tui_store_the_same_certification(tmp_path, judge_server, monkeypatch, key) -> None:
    """`scarbook verify by-judge` and the library's c on by-judge: the same record (outcome, detail, the
    judge's votes, certified), with the key and without it."""
    replies = [*[tool_reply([("FAIL", "two lines")])] * 3, *[tool_reply([("PASS", "one line")])] * 3]
    cli_root, tui_root = tmp_path / "cli", tmp_path / "tui"
    make_project(cli_root, judge_server.url)
    make_project(tui_root, judge_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)

    judge_server.push(*replies)
    result = await asyncio.to_thread(CliRunner().invoke, main, ["-C", str(cli_root), "verify", "by-judge",
                                                                 "--judged", "3"], catch_exceptions=False)
    assert result.exit_code == 0, result.output

    judge_server.push(*replies)
    app = make_app(tui_root)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await move_library_cursor(pilot, "by-judge")
        await pilot.press("c")
        await wait_until(pilot, lambda: any(n.title.startswith("by-judge: ") for n in app._notifications),
                         what="the verify notification")
    assert stored(tui_root) == stored(cli_root)
    assert stored(cli_root)["by-judge"][0] == (CATCHES if key else UNVERIFIED)
    assert len(judge_server.requests) == (12 if key else 0)
