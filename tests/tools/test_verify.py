"""Scar verification: a case must fail its own failed artifact (and pass its good one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cases.verifications import CATCHES, MISSES, REJECTS_GOOD, UNVERIFIED, VerificationStore
from scarbook.cli import main
from scarbook.models.rubric import implicit_item_id
from scarbook.tools.verify import verify_case
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.paths import REPO

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")


def write_case(root: Path, body: str, files: dict[str, str]) -> Path:
    folder = root / "cases" / "c1"
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    (folder / "case.yaml").write_text(body)
    return folder


SHARP = """\
id: c1
task: Extract the first line of README.md and write it to tmp.txt
seed: {README.md: "# tiny-agent\\nmore\\n"}
checks:
  - {type: file_exists, path: tmp.txt}
  - {type: line_count, path: tmp.txt, equals: 1}
scar:
  failed_artifact: scar/artifact.txt
  good_artifact: scar/good.txt
"""
VAGUE = SHARP.replace("  - {type: line_count, path: tmp.txt, equals: 1}\n", "")


async def test_sharp_case_catches_its_scar(tmp_path):
    folder = write_case(tmp_path, SHARP, {"scar/artifact.txt": "# tiny-agent\nmore\n", "scar/good.txt": "# tiny-agent\n"})
    v = await verify_case(load_case(folder))
    assert v.outcome == CATCHES
    assert v.failed_verdict == "fail" and v.good_verdict == "pass"
    assert v.detail == "the failed artifact fails: check 2 (line_count): tmp.txt has 2 lines, expected exactly 1"


async def test_vague_case_misses_its_scar(tmp_path):
    folder = write_case(tmp_path, VAGUE, {"scar/artifact.txt": "# tiny-agent\nmore\n", "scar/good.txt": "# tiny-agent\n"})
    v = await verify_case(load_case(folder))
    assert v.outcome == MISSES
    assert v.detail.startswith("every check passes the failed artifact")


async def test_case_that_rejects_its_good_artifact(tmp_path):
    folder = write_case(tmp_path, SHARP, {"scar/artifact.txt": "a\nb\n", "scar/good.txt": "one\ntwo\n"})
    v = await verify_case(load_case(folder))
    assert v.outcome == REJECTS_GOOD
    assert v.detail == "the good artifact fails too: check 2 (line_count): tmp.txt has 2 lines, expected exactly 1"


async def test_output_artifact_is_judged_as_the_final_output(tmp_path):
    body = """\
id: c1
task: say hi
checks:
  - {type: output_regex, pattern: "^hi$"}
scar:
  failed_artifact: scar/out.txt
  artifact_at: output
"""
    folder = write_case(tmp_path, body, {"scar/out.txt": "hello there"})
    v = await verify_case(load_case(folder))
    assert v.outcome == CATCHES
    assert "output does not match /^hi$/" in v.detail


async def test_case_without_scar_is_unverified(tmp_path):
    folder = write_case(tmp_path, "id: c1\ntask: t\nchecks:\n  - {type: file_exists, path: a}\n", {})
    v = await verify_case(load_case(folder))
    assert v.outcome == UNVERIFIED
    assert v.detail == "no scar.failed_artifact to verify against"


def test_verify_cli_exit_codes_and_badge(tmp_path):
    write_case(tmp_path, VAGUE, {"scar/artifact.txt": "# tiny-agent\nmore\n", "scar/good.txt": "# tiny-agent\n"})
    (tmp_path / "scarbook.yaml").write_text("")  # a project (every command needs one)
    runner = CliRunner()
    res = runner.invoke(main, ["-C", str(tmp_path), "verify"])
    assert res.exit_code == 1, res.output
    assert "c1  misses the scar: every check passes the failed artifact" in res.output
    store = VerificationStore(tmp_path / "workspaces")
    case = load_case(tmp_path / "cases" / "c1")
    assert store.badge(case, store.load()) == "misses"
    (tmp_path / "cases" / "c1" / "case.yaml").write_text(SHARP)
    res = runner.invoke(main, ["-C", str(tmp_path), "verify"])
    assert res.exit_code == 0, res.output
    # issue 24.4: a good artifact that passes too, and no judge to be unstable: certified (was: verified)
    assert store.badge(load_case(tmp_path / "cases" / "c1"), store.load()) == "certified"


def test_bundled_cases_all_catch_their_scars(tmp_path):
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    (tmp_path / "scarbook.yaml").write_text("")  # a project (every command needs one)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify"])
    assert res.exit_code == 0, res.output
    assert res.output.count("catches the scar") == 4


JUDGED = "  - type: llm_judge\n    artifact: tmp.txt\n    rubric: [tmp.txt holds only the first line]\n"


def test_rule_checks_decide_verify_without_a_judge_key(tmp_path, monkeypatch):
    """No key: a scar the rule checks catch is verified; only one that needs the judge stays unverified,
    and the collection is not refused as a whole (was: exit 2 for every case)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    files = {"scar/artifact.txt": "# tiny-agent\nmore\n", "scar/good.txt": "# tiny-agent\n"}
    write_case(tmp_path, SHARP.replace("scar:\n", JUDGED + "scar:\n"), files)
    other = tmp_path / "cases" / "c2"
    shutil.copytree(tmp_path / "cases" / "c1", other)
    (other / "case.yaml").write_text(VAGUE.replace("id: c1", "id: c2").replace("scar:\n", JUDGED + "scar:\n"))
    (tmp_path / "scarbook.yaml").write_text("")  # a project (every command needs one)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify"])
    assert (res.exit_code, res.stdout) == (0, (
        "c1  catches the scar: the failed artifact fails: check 2 (line_count): tmp.txt has 2 lines, expected "
        "exactly 1\n"
        "    catch the incident: check 2 (line_count)\n"  # issue 35.2: which checks catch it (no judge: no item)
        "c2  unverified: the rule checks pass the failed artifact and the llm_judge check did not run (no judge): "
        "only the judge can catch this scar\n"))
    assert res.stderr == ("verify: no judge key in $ANTHROPIC_API_KEY: llm_judge checks are skipped; a scar only "
                          "the judge can catch stays unverified\n")


# -- certification (issue 24.4): judged K times, --reproduce N, badges --------------------------------

JUDGE_ONLY = """\
id: c1
task: Extract the first line of README.md and write it to tmp.txt
seed: {README.md: "# tiny-agent\\nmore\\n"}
checks:
  - type: llm_judge
    artifact: tmp.txt
    rubric: [tmp.txt holds only the first line]
scar:
  failed_artifact: scar/artifact.txt
  good_artifact: scar/good.txt
"""


def _judged_project(tmp_path, judge_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    write_case(tmp_path, JUDGE_ONLY, {"scar/artifact.txt": "# tiny-agent\nmore\n", "scar/good.txt": "# tiny-agent\n"})
    (tmp_path / "scarbook.yaml").write_text(f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n")


def test_a_judge_that_changes_its_mind_is_shown_not_certified(tmp_path, judge_server, monkeypatch):
    _judged_project(tmp_path, judge_server, monkeypatch)
    judge_server.push(tool_reply([("FAIL", "two lines")]), tool_reply([("PASS", "fine")]),
                      tool_reply([("FAIL", "two lines")]), *[tool_reply([("PASS", "one line")])] * 3)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify"])
    assert res.exit_code == 1, res.output
    assert res.stdout == ("c1  judge unstable on this case: asked 3 times, the failed "
                          "artifact was judged fail, pass, fail; the good artifact pass, pass, pass\n"
                          # issue 35.2: each item says what it did
                          f"    item {implicit_item_id('tmp.txt holds only the first line')} split: its 3 verdicts "
                          "on the failed artifact disagree: FAIL, PASS, FAIL\n")
    assert len(judge_server.requests) == 6
    store = VerificationStore(tmp_path / "workspaces")
    assert store.badge(load_case(tmp_path / "cases" / "c1"), store.load()) == "judge unstable"


def test_a_stable_judge_certifies(tmp_path, judge_server, monkeypatch):
    _judged_project(tmp_path, judge_server, monkeypatch)
    judge_server.push(*[tool_reply([("FAIL", "two lines")])] * 3, *[tool_reply([("PASS", "one line")])] * 3)
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "--judged", "3"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[1] == ("    certified: the failed artifact fails, the good one passes; the judge gave "
                                          "the case the same verdict all 3 times")
    store = VerificationStore(tmp_path / "workspaces")
    v = store.load()["c1"]
    assert (v.failed_votes, v.good_votes, v.judge_stable) == (["fail"] * 3, ["pass"] * 3, True)
    assert store.badge(load_case(tmp_path / "cases" / "c1"), store.load()) == "certified"


def test_bundled_cases_certify_from_the_cli_and_reproduce_records_how_often(tmp_path, monkeypatch):
    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    shutil.copy(REPO / "scarbook.yaml", tmp_path / "scarbook.yaml")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "write-one-line", "--reproduce", "10"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("write-one-line  catches the scar: the failed artifact fails: ")
    assert lines[1] == ("                certified: the failed artifact fails, the good one passes; rule checks only, "
                        "no judge to disagree")
    assert lines[2] == "                catch the incident: check 3 (line_count)"  # issue 35.2
    assert lines[3].startswith("write-one-line  reproduced the incident in 1 of 10 runs (session ")
    case = load_case(tmp_path / "cases" / "write-one-line")
    rep = case.scar.reproduced
    assert (rep["runs"], rep["fails"], rep["agent"]) == (10, 1, "demo") and rep["date"] and rep["session"]
    assert "reproduced:" in (tmp_path / "cases" / "write-one-line" / "case.yaml").read_text()


def test_a_big_scar_artifact_is_read_up_to_max_read_bytes_and_over_it_is_an_error_naming_its_size(tmp_path):
    """verify ignored scarbook.yaml's max_read_bytes (a rule check read 20 MB whatever it said, and the error said to
    raise it), and it cut a failed artifact at 50 MB: the error named the cut copy's size as the artifact's."""
    big = "# tiny-agent " + "x" * 60_000_000 + "\nmore\n"
    write_case(tmp_path, SHARP, {"scar/artifact.txt": big, "scar/good.txt": "# tiny-agent\n"})
    (tmp_path / "scarbook.yaml").write_text("")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "c1"])
    assert res.exit_code == 3, res.output
    assert res.stdout == ("c1  error: could not reach a verdict on the failed artifact: scar/artifact.txt is "
                          "60,000,019 bytes, more than the 50,000,000 verify reads (max_read_bytes in scarbook.yaml, "
                          "at least 50,000,000): not checked — raise max_read_bytes to check it\n")
    (tmp_path / "scarbook.yaml").write_text("max_read_bytes: 100000000\n")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", "c1"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("c1  catches the scar: the failed artifact fails: check 2 (line_count): tmp.txt has "
                                 "2 lines, expected exactly 1\n")
