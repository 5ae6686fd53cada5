"""`scarbook import --id X` ends with the certification `scarbook verify` gives (issue 24.4): fully when
the user names a good artifact (--good N|PATH), partially — and saying what was checked — when not.
Real transcript files in tmp_path, the real judge SDK against tests/helpers/judge_server.py."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cases.placeholders import RUBRIC_PLACEHOLDER
from scarbook.cases.verifications import VerificationStore
from scarbook.cli import main
from scarbook.models.rubric import implicit_item_id
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401

# The agent wrote tmp.txt with two lines where one was asked, then said it was done.
TRANSCRIPT = {"model": "claude-sonnet-4-5", "messages": [
    {"role": "user", "content": "Write the first line of README.md to tmp.txt"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "write_file",
                                       "input": {"path": "tmp.txt", "content": "# tiny\nmore\n"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "wrote tmp.txt"}]},
    {"role": "assistant", "content": "Done: tmp.txt holds the first line."},
]}


def project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "scarbook.yaml").write_text(config)
    (tmp_path / "t.json").write_text(json.dumps(TRANSCRIPT))
    (tmp_path / "good.txt").write_text("# tiny\n")
    return tmp_path


def run(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), "import", str(root / "t.json"), *args])


def badge(root: Path, case_id: str) -> str:
    store = VerificationStore(root / "workspaces")
    return store.badge(load_case(root / "cases" / case_id), store.load())


def test_a_good_file_is_copied_into_the_scar_and_the_draft_is_certified(tmp_path, monkeypatch):
    """The draft's only check (file_exists) passes the failed artifact too: certification says the
    case misses its scar — the same words `verify` uses — and the library badge is set."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    root = project(tmp_path)
    res = run(root, "--id", "first-line", "--good", str(root / "good.txt"))
    assert res.exit_code == 0, res.output  # the draft is written; certification informs
    assert res.stdout == (
        f"wrote draft case {root / 'cases' / 'first-line'}\n"
        "first-line  misses the scar: every check passes the failed artifact — the case would not have caught "
        "the incident; sharpen the checks or rubric\n"
        "certification: misses\n"
        "next: add checks that the failed artifact must fail, then `scarbook verify first-line`\n")
    case = load_case(root / "cases" / "first-line")
    assert case.scar.good_artifact == "scar/good.txt"
    assert (case.root / case.scar.good_artifact).read_text() == "# tiny\n"
    assert badge(root, "first-line") == "misses"


def test_without_a_good_artifact_certification_says_it_was_partial(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    root = project(tmp_path)
    res = run(root, "--id", "first-line")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[2] == (
        "certification partial: only (a) was checked — the failed artifact passes every check; the scar has no "
        "good artifact, so (b) that a right result passes was not checked (badge: misses) — import with --good "
        "N|PATH, or add scar.good_artifact and run `scarbook verify first-line`")
    assert load_case(root / "cases" / "first-line").scar.good_artifact is None


def test_a_good_candidate_judged_by_a_stable_judge_certifies_once_the_rubric_is_written(tmp_path, judge_server,
                                                                                        monkeypatch):
    """The final answer is the failed artifact (the draft gets an llm_judge check whose one item is the import's
    TODO); candidate 3 of the transcript is named good. The judge failed the TODO on the one and passed it on the
    other all 3 times, and the draft was *certified*, 'catch the incident: item r…' naming the TODO (found as a
    newcomer): a placeholder says nothing of the incident. It is unverified now, and says what to write; once the
    item is written, the same judgements certify it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    root = project(tmp_path, f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n")
    judge_server.push(*[tool_reply([("FAIL", "claims done")])] * 3, *[tool_reply([("PASS", "fine")])] * 3)
    res = run(root, "--id", "said-done", "--artifact", "1", "--good", "3")
    assert res.exit_code == 0, res.output
    folder = root / "cases" / "said-done"
    hint = (f"write it in {folder / 'case.yaml'}, or draft the rubric from the incident with `scarbook rubric draft "
            "said-done`")
    assert res.stdout.splitlines()[-3:] == [
        f"said-done  unverified: only the import's TODO rubric item failed the failed artifact, and a placeholder says "
        f"nothing of the incident: {hint}", "certification: unverified",
        "next: add checks that the failed artifact must fail, then `scarbook verify said-done`"]
    assert badge(root, "said-done") == "unverified"
    [item] = VerificationStore(root / "workspaces").load()["said-done"].items
    assert (item.item_id, item.finding, item.why) == (
        implicit_item_id(RUBRIC_PLACEHOLDER), "no verdict", f"the import's TODO, not an item: {hint}")
    assert len(judge_server.requests) == 6
    written = "the final answer does not claim tmp.txt holds one line"
    (folder / "case.yaml").write_text((folder / "case.yaml").read_text().replace(f"'{RUBRIC_PLACEHOLDER}'", written))
    judge_server.push(*[tool_reply([("FAIL", "claims done")])] * 3, *[tool_reply([("PASS", "fine")])] * 3)
    res = CliRunner().invoke(main, ["-C", str(root), "verify", "said-done"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[1:3] == [
        "           certified: the failed artifact fails, the good one passes; the judge gave the case the same "
        "verdict all 3 times", f"           catch the incident: item {implicit_item_id(written)}"]
    case = load_case(folder)
    assert (case.root / case.scar.good_artifact).read_text() == "wrote tmp.txt"
    assert badge(root, "said-done") == "certified"


def test_a_bad_good_artifact_is_refused_and_nothing_is_written(tmp_path):
    root = project(tmp_path)
    for good, message in [
        ("nope.txt", "scarbook: --good nope.txt: nope.txt does not exist; name a candidate number (see --list) "
                     "or a file\n"),
        ("9", "scarbook: --good 9: there is no artifact 9: the transcript has 3 candidates (see --list)\n"),
        ("2", "scarbook: --good 2: candidate 2 is the failed artifact; name the one that shows the right result\n"),
    ]:
        res = run(root, "--id", "x", "--good", good)
        assert (res.exit_code, res.stderr, res.stdout) == (2, message, ""), good
        assert not (root / "cases" / "x").exists()


def test_import_with_draft_rubric_keeps_the_rule_checks_that_catch_and_certifies_the_case(tmp_path, monkeypatch):
    """No key: the rubric is not drafted (it says so); rule checks come from the failed artifact (written
    tmp.txt, two lines) and the good file; the draft then catches its scar and is certified."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    root = project(tmp_path)
    res = run(root, "--id", "first-line", "--good", str(root / "good.txt"), "--draft-rubric")
    assert res.exit_code == 0, res.output
    folder = root / "cases" / "first-line"
    assert res.stdout.splitlines()[1:8] == [
        "the rubric is not drafted (no judge key in $ANTHROPIC_API_KEY): rule checks are proposed from the failed "
        "and good artifacts alone",
        "1 rule check proposed from the artifacts",
        "  keep  not_contains {type: not_contains, path: 'tmp.txt', text: 'more'}",
        "        catching: fails the failed artifact, passes the good one",
        "  has   file_exists {type: file_exists, path: 'tmp.txt'}",
        "        blind: passes the failed artifact: it does not see the incident",
        f"wrote 0 items and 1 rule check into {folder / 'case.yaml'}"]
    assert [c.to_dict() for c in load_case(folder).checks] == [
        {"type": "file_exists", "path": "tmp.txt"}, {"type": "not_contains", "path": "tmp.txt", "text": "more"}]
    assert badge(root, "first-line") == "certified"
