"""Issue 35.2: verify certifies each rubric item and rule check, not only the case — against the real judge
SDK and the loopback Messages API server. Catching, blind, strict and split are told apart; a case none of
whose items or checks catch the incident is not certified; without a good artifact items are certified
against the failed one only, and say so."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cases.verifications import VerificationStore
from scarbook.cli import main
from scarbook.models import ItemFinding
from scarbook.models.rubric import implicit_item_id
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401

ITEMS = ["tmp.txt holds only the first line", "tmp.txt starts with a heading", "tmp.txt is empty"]
CASE = """\
id: c1
task: Extract the first line of README.md and write it to tmp.txt
seed: {{README.md: "# tiny-agent\\nmore\\n"}}
checks:
  - {{type: file_exists, path: tmp.txt}}
  - type: llm_judge
    artifact: tmp.txt
    rubric: {rubric}
scar:
  failed_artifact: scar/artifact.txt
{good}"""


def project(tmp_path: Path, judge_server, monkeypatch, items: list[str], good: bool = True) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    folder = tmp_path / "cases" / "c1"
    (folder / "scar").mkdir(parents=True)
    (folder / "scar" / "artifact.txt").write_text("# tiny-agent\nmore\n")
    (folder / "scar" / "good.txt").write_text("# tiny-agent\n")
    (folder / "case.yaml").write_text(CASE.format(rubric=json.dumps(items),
                                                  good="  good_artifact: scar/good.txt\n" if good else ""))
    (tmp_path / "scarbook.yaml").write_text(f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n")
    return tmp_path


def test_each_item_is_catching_blind_or_strict_and_verify_says_which_catch(tmp_path, judge_server, monkeypatch):
    root = project(tmp_path, judge_server, monkeypatch, ITEMS)
    # on the failed artifact: item 1 FAIL, item 2 PASS (blind), item 3 FAIL; on the good one: 1 PASS, 2 PASS, 3 FAIL
    judge_server.push(*[tool_reply([("FAIL", "two lines"), ("PASS", "heading"), ("FAIL", "not empty")])] * 3,
                      *[tool_reply([("PASS", "one line"), ("PASS", "heading"), ("FAIL", "not empty")])] * 3)
    res = CliRunner().invoke(main, ["-C", str(root), "verify"])
    a, b, c = (implicit_item_id(t) for t in ITEMS)
    assert res.stdout.splitlines()[1:] == [
        f"    catch the incident: item {a}",
        f"    item {b} blind: passes the failed artifact all 3 times: it does not see the incident",
        f"    item {c} strict: fails the good artifact all 3 times: a right result would fail it too",
    ]
    assert res.stdout.startswith("c1  rejects the good artifact: the good artifact fails too: ")
    v = VerificationStore(root / "workspaces").load()["c1"]
    found = {i.item_id or i.kind: i.finding for i in v.items}
    assert found == {"file_exists": ItemFinding.BLIND, a: ItemFinding.CATCHING, b: ItemFinding.BLIND,
                     c: ItemFinding.STRICT}
    [item] = [i for i in v.items if i.item_id == a]
    assert (item.failed_votes, item.good_votes) == (["FAIL"] * 3, ["PASS"] * 3)
    assert len(judge_server.requests) == 6  # the items are judged together: K calls per artifact


def test_a_split_item_is_named_and_the_judge_is_asked_even_when_a_rule_check_fails_first(
        tmp_path, judge_server, monkeypatch):
    """The rule check fails the failed artifact first (the case's verdict short-circuits), yet the judge
    still grades it K times so each item is certified; item 2 splits."""
    root = project(tmp_path, judge_server, monkeypatch, ITEMS[:2])
    case = root / "cases" / "c1" / "case.yaml"
    case.write_text(case.read_text().replace("{type: file_exists, path: tmp.txt}",
                                             "{type: line_count, path: tmp.txt, equals: 1}"))
    judge_server.push(tool_reply([("FAIL", "x"), ("FAIL", "x")]), tool_reply([("FAIL", "x"), ("PASS", "x")]),
                      tool_reply([("FAIL", "x"), ("FAIL", "x")]), *[tool_reply([("PASS", "x"), ("PASS", "x")])] * 3)
    res = CliRunner().invoke(main, ["-C", str(root), "verify"])
    b = implicit_item_id(ITEMS[1])
    # the case's verdict never changed, while item 2's did: the certified line speaks of the case alone
    assert res.stdout.splitlines()[1] == ("    certified: the failed artifact fails, the good one passes; the judge gave "
                                          "the case the same verdict all 3 times")
    assert res.stdout.splitlines()[2:] == [
        f"    catch the incident: check 1 (line_count), item {implicit_item_id(ITEMS[0])}",
        f"    item {b} split: its 3 verdicts on the failed artifact disagree: FAIL, PASS, FAIL"]
    assert len(judge_server.requests) == 6


def test_a_case_none_of_whose_items_or_checks_catch_is_not_certified(tmp_path, judge_server, monkeypatch):
    """Two items that each fail the failed artifact only some of the time: the case fails it every time, but
    nothing catches the incident on its own — not certified, and it says why."""
    root = project(tmp_path, judge_server, monkeypatch, ITEMS[:2])
    judge_server.push(tool_reply([("FAIL", "x"), ("PASS", "x")]), tool_reply([("PASS", "x"), ("FAIL", "x")]),
                      tool_reply([("FAIL", "x"), ("PASS", "x")]), *[tool_reply([("PASS", "x"), ("PASS", "x")])] * 3)
    res = CliRunner().invoke(main, ["-C", str(root), "verify"])
    first = res.stdout.splitlines()[0]
    assert first.startswith("c1  catches the scar: ")
    assert first.endswith("; but no rubric item or rule check catches the incident on its own (each item's finding "
                          "says why), so the case cannot be certified")
    store = VerificationStore(root / "workspaces")
    assert store.badge(load_case(root / "cases" / "c1"), store.load()) == "verified"  # never certified


def test_without_a_good_artifact_items_are_certified_against_the_failed_one_only(tmp_path, judge_server, monkeypatch):
    root = project(tmp_path, judge_server, monkeypatch, ITEMS[:1], good=False)
    judge_server.push(*[tool_reply([("FAIL", "two lines")])] * 3)
    assert CliRunner().invoke(main, ["-C", str(root), "verify"]).exit_code == 0
    v = VerificationStore(root / "workspaces").load()["c1"]
    [item] = [i for i in v.items if i.item_id]
    assert (item.finding, item.why) == (ItemFinding.CATCHING, "fails the failed artifact all 3 times (the scar has "
                                                              "no good artifact: only the failed one was checked)")
    assert len(judge_server.requests) == 3
