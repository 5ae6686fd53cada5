"""Issue 35.1: a case's rubric drafted from its incident — `scarbook rubric draft` against the real judge SDK and
the loopback Messages API server. The cost is said first; every proposal goes through lint and is certified
on its own; the catching ones are written, a blind and a strict item are dropped with the reason; a reply
that breaks the schema, proposes an item over 300 characters or a rule check that does not parse writes
nothing; without a key (or --offline) rule checks come from the failed and good artifacts alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cases.lint import lint_case
from scarbook.cases.verifications import VerificationStore
from scarbook.cli import main
from scarbook.models.rubric import implicit_item_id
from tests.helpers.judge_server import JudgeServer, judge_server, tool_reply  # noqa: F401

CASE = """\
# filed from the incident of 14 Nov
id: c1
task: Extract the first line of README.md and write it to tmp.txt
seed: {README.md: "# tiny-agent\\nmore\\n"}
checks:
  - {type: file_exists, path: tmp.txt}
scar:
  failed_artifact: scar/artifact.txt
  good_artifact: scar/good.txt
  artifact_at: tmp.txt
"""
CATCHING = "tmp.txt holds only the first line of README.md"
BLIND = "tmp.txt names the project tiny-agent"
STRICT = "tmp.txt ends with a line that explains the project"
VAGUE = "the first line is of good quality"
DECIDED = 'tmp.txt does not contain the text "more"'
DRAFT = {"items": [CATCHING, BLIND, STRICT, VAGUE, DECIDED],
         "checks": [{"type": "line_count", "path": "tmp.txt", "equals": 1},
                    {"type": "contains", "path": "tmp.txt", "text": "# tiny-agent"}]}


def project(tmp_path: Path, judge_server, monkeypatch, *, key: bool = True, failed: str = "# tiny-agent\nmore\n",
            good: str = "# tiny-agent\n", case: str = CASE) -> Path:
    if key:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    else:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    folder = tmp_path / "cases" / "c1"
    (folder / "scar").mkdir(parents=True)
    (folder / "scar" / "artifact.txt").write_text(failed)
    (folder / "scar" / "good.txt").write_text(good)
    (folder / "case.yaml").write_text(case)
    (tmp_path / "scarbook.yaml").write_text(f"judge: {{base_url: {judge_server.url}, max_retries: 0}}\n")
    return tmp_path


def draft(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), "rubric", "draft", "c1", *args])


def test_the_draft_keeps_what_catches_and_drops_a_blind_a_strict_and_a_vague_item_with_why(
        tmp_path, judge_server, monkeypatch):
    root = project(tmp_path, judge_server, monkeypatch)
    # the draft, then the 3 items left after lint judged 3 times on the failed artifact and 3 on the good one
    judge_server.push(tool_reply(tool_input=DRAFT, name="propose_rubric"),
                      *[tool_reply([("FAIL", "two lines"), ("PASS", "named"), ("FAIL", "no explanation")])] * 3,
                      *[tool_reply([("PASS", "one line"), ("PASS", "named"), ("FAIL", "no explanation")])] * 3)
    res = draft(root, "--note", "wrote the whole README")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("drafting: 1 judge call to claude-sonnet-4-6, at most $")
    assert lines[0].split("; ")[1].startswith("certifying the proposed items: 6 calls (3 on each artifact), about $")
    assert lines[1].startswith("drafted by claude-sonnet-4-6 for $")
    body = "\n".join(lines[2:])
    assert body.startswith(f"""\
  keep  item {CATCHING}
        catching: fails the failed artifact all 3 times, passes the good one all 3 times
  drop  item {BLIND}
        blind: passes the failed artifact all 3 times: it does not see the incident
  drop  item {STRICT}
        strict: fails the good artifact all 3 times: a right result would fail it too
  drop  item {VAGUE}
        lint vague-item: """)
    assert f"""\
  drop  item {DECIDED}
        lint rule-decidable: {DECIDED!r} can be decided by a not_contains check, with no judge call — add \
{{type: not_contains, path: tmp.txt, text: more}} before the judge
  keep  line_count {{type: line_count, path: 'tmp.txt', equals: 1}}
        catching: fails the failed artifact, passes the good one
  drop  contains {{type: contains, path: 'tmp.txt', text: '# tiny-agent'}}
        blind: passes the failed artifact: it does not see the incident
  keep  not_contains {{type: not_contains, path: 'tmp.txt', text: 'more'}}
        catching: fails the failed artifact, passes the good one
  has   file_exists {{type: file_exists, path: 'tmp.txt'}}
        blind: passes the failed artifact: it does not see the incident
wrote 1 item and 2 rule checks into {root / 'cases' / 'c1' / 'case.yaml'}; next: `scarbook verify c1`""" in body
    case = load_case(root / "cases" / "c1")
    assert [c.to_dict() for c in case.checks] == [
        {"type": "file_exists", "path": "tmp.txt"},
        {"type": "line_count", "path": "tmp.txt", "equals": 1},
        {"type": "not_contains", "path": "tmp.txt", "text": "more"},
        {"type": "llm_judge", "artifact": "tmp.txt", "rubric": [CATCHING]}]
    assert lint_case(case) == []  # lint-clean
    assert "# filed from the incident of 14 Nov" in (root / "cases" / "c1" / "case.yaml").read_text()  # comments kept
    draft_body = judge_server.requests[0]["body"]
    assert draft_body["tool_choice"] == {"type": "tool", "name": "propose_rubric"}
    sent = draft_body["messages"][0]["content"]
    assert "wrote the whole README" in sent and "# tiny-agent\nmore\n" in sent and "Extract the first line" in sent
    assert len(judge_server.requests) == 7


def test_a_second_draft_of_the_same_incident_comes_from_the_draft_cache(tmp_path, judge_server, monkeypatch):
    root = project(tmp_path, judge_server, monkeypatch)
    reply = {"items": [], "checks": [{"type": "line_count", "path": "tmp.txt", "equals": 1}]}
    judge_server.push(tool_reply(tool_input=reply, name="propose_rubric"))
    assert draft(root).exit_code == 0
    res = draft(root)
    assert res.stdout.splitlines()[1] == "drafted by claude-sonnet-4-6 (from the draft cache: no call)"
    assert len(judge_server.requests) == 1  # rule checks only: no item to judge


def test_a_draft_from_another_endpoint_is_asked_there_not_read_from_the_cache(tmp_path, judge_server, monkeypatch):
    """The draft cache's key held the model but not where it was reached: a second vendor's endpoint behind the
    same model name was never asked; the first one's draft came back "from the draft cache"."""
    root = project(tmp_path, judge_server, monkeypatch)
    reply = {"items": [], "checks": [{"type": "line_count", "path": "tmp.txt", "equals": 1}]}
    judge_server.push(tool_reply(tool_input=reply, name="propose_rubric"))
    assert draft(root).exit_code == 0
    other = JudgeServer().start()
    try:
        other.push(tool_reply(tool_input=reply, name="propose_rubric"))
        (root / "scarbook.yaml").write_text(f"judge: {{base_url: {other.url}, max_retries: 0}}\n")
        res = draft(root)
        assert res.exit_code == 0, res.output
        assert res.stdout.splitlines()[1].startswith("drafted by claude-sonnet-4-6 for $")
        assert (len(judge_server.requests), len(other.requests)) == (1, 1)
    finally:
        other.stop()


BAD = [
    ({"items": "tmp.txt holds one line", "checks": []}, "items must be a list of strings"),
    ({"items": ["x" * 301], "checks": []},
     "item 1 is 301 characters long (at most 300: a rubric item is one observable property)"),
    ({"items": [], "checks": [{"type": "line_count", "path": "tmp.txt"}]},
     "rule check 1 does not parse: line_count check needs one of: equals, min, max"),
    ({"items": [], "checks": [{"type": "llm_judge", "rubric": ["x"]}]},
     "rule check 1 is 'llm_judge', not one of: contains, not_contains, json_valid, line_count, only_changed, command"),
    ({"items": [], "checks": [{"type": "contains", "path": "../x", "text": "a"}]},
     "rule check 1 does not parse: contains.path: "),
    ({"items": [], "checks": []}, "it proposes no item and no rule check"),
]


@pytest.mark.parametrize(("reply", "said"), BAD)
def test_a_reply_that_is_not_what_was_asked_is_a_clear_message_and_writes_nothing(
        tmp_path, judge_server, monkeypatch, reply, said):
    root = project(tmp_path, judge_server, monkeypatch)
    before = (root / "cases" / "c1" / "case.yaml").read_bytes()
    judge_server.push(tool_reply(tool_input=reply, name="propose_rubric"))
    res = draft(root)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"scarbook: the judge's draft for c1 is not usable: {said}")
    assert res.stderr.rstrip().endswith("— nothing was written; draft again, or propose rule checks offline with "
                                        "--offline")
    assert "Traceback" not in res.output
    assert (root / "cases" / "c1" / "case.yaml").read_bytes() == before
    assert len(judge_server.requests) == 1  # nothing certified


def test_without_a_key_rule_checks_come_from_the_artifacts_and_fail_the_failed_one_pass_the_good_one(
        tmp_path, judge_server, monkeypatch):
    failed = '{"name": "tiny", "items": [1, 2\nwrote it all\n'
    good = '{"name": "tiny", "items": [1, 2]}\n'
    root = project(tmp_path, judge_server, monkeypatch, key=False, failed=failed, good=good,
                   case=CASE.replace("tmp.txt", "out.json"))
    res = draft(root)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[:2] == [
        "the rubric is not drafted (no judge key in $ANTHROPIC_API_KEY): rule checks are proposed from the failed "
        "and good artifacts alone", "3 rule checks proposed from the artifacts"]
    case = load_case(root / "cases" / "c1")
    assert [c.to_dict() for c in case.checks] == [
        {"type": "file_exists", "path": "out.json"},
        {"type": "not_contains", "path": "out.json", "text": "wrote it all"},
        {"type": "contains", "path": "out.json", "text": '{"name": "tiny", "items": [1, 2]}'},
        {"type": "json_valid", "path": "out.json"}]
    assert judge_server.requests == []
    # the case now catches its incident: the failed artifact fails every proposed check, the good one passes
    res = CliRunner().invoke(main, ["-C", str(root), "verify", "c1"])
    assert res.exit_code == 0 and "certified: the failed artifact fails, the good one passes" in res.stdout
    v = VerificationStore(root / "workspaces").load()["c1"]
    assert [(i.kind, i.failed_votes, i.good_votes) for i in v.items][1:] == [
        ("not_contains", ["fail"], ["pass"]), ("contains", ["fail"], ["pass"]), ("json_valid", ["fail"], ["pass"])]


@pytest.mark.parametrize(("key", "args", "judge_fix"), [
    (True, ("--offline",), "leave out --offline"),
    (False, (), "set $ANTHROPIC_API_KEY"),
])
def test_an_offline_draft_that_catches_nothing_says_what_would_not_to_add_a_note_no_one_reads(
        tmp_path, judge_server, monkeypatch, key, args, judge_fix):
    """Offline, with no good artifact, nothing is proposed, and the advice was "add a --note on what went wrong":
    offline, a note is read by no one (the same command with --note said it again). It now names what helps."""
    root = project(tmp_path, judge_server, monkeypatch, key=key, case=CASE.replace("  good_artifact: scar/good.txt\n", ""))
    for note in ((), ("--note", "it wrote the whole README")):
        res = draft(root, *args, *note)
        assert res.exit_code == 1, res.output
        assert res.stdout.splitlines()[1:] == [
            "0 rule checks proposed from the artifacts",
            "nothing catches the incident: case.yaml is unchanged — add a good artifact (scar.good_artifact in "
            f"{root / 'cases' / 'c1' / 'case.yaml'} names a right result: the lines the failed one lacks or adds "
            f"become rule checks), let the judge draft ({judge_fix}; a --note tells it what went wrong), or write the "
            "checks by hand"]
    assert judge_server.requests == []
    shown = CliRunner().invoke(main, ["rubric", "draft", "--help"]).stdout
    assert "(offline, no one does)" in " ".join(shown.split())
    assert not [line for line in shown.splitlines() if "--note" in line and "--offline" in line]  # no such example


def test_offline_with_a_key_asks_no_judge_and_an_answer_artifact_gets_output_checks(tmp_path, judge_server,
                                                                                     monkeypatch):
    case = CASE.replace("  artifact_at: tmp.txt\n", "  artifact_at: output\n").replace(
        "  - {type: file_exists, path: tmp.txt}\n",
        "  - type: llm_judge\n    rubric: ['TODO: say what the answer must do; the failed artifact must FAIL this item']\n")
    root = project(tmp_path, judge_server, monkeypatch, failed="Done: one line written.\nAll tests pass.\n",
                   good="I wrote 2 lines, not one.\n", case=case)
    res = draft(root, "--offline")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("the rubric is not drafted (--offline): ")
    checks = [c.to_dict() for c in load_case(root / "cases" / "c1").checks]
    assert checks == [  # the TODO item went with its judge check: the rule checks catch the incident
        {"type": "output_regex", "pattern": r"\A(?![\s\S]*Done:\ one\ line\ written\.)"},
        {"type": "output_regex", "pattern": r"\A(?![\s\S]*All\ tests\ pass\.)"},
        {"type": "output_contains", "text": "I wrote 2 lines, not one."}]
    assert judge_server.requests == []


def test_a_case_without_a_failed_artifact_cannot_be_drafted(tmp_path, judge_server, monkeypatch):
    root = project(tmp_path, judge_server, monkeypatch, case=CASE.split("scar:")[0])
    res = draft(root)
    assert res.exit_code == 2
    assert res.stderr == ("scarbook: cannot draft a rubric for c1: it has no scar.failed_artifact — add the failed "
                          "artifact under scar: in its case.yaml (scarbook import writes one)\n")


def test_item_ids_of_kept_items_are_their_words_ids(tmp_path, judge_server, monkeypatch):
    """A kept item starts its stats fresh: its id is its words' id until the first judged session writes it."""
    root = project(tmp_path, judge_server, monkeypatch)
    judge_server.push(tool_reply(tool_input={"items": [CATCHING], "checks": []}, name="propose_rubric"),
                      *[tool_reply([("FAIL", "two lines")])] * 3, *[tool_reply([("PASS", "one")])] * 3)
    assert draft(root).exit_code == 0
    [judge] = load_case(root / "cases" / "c1").judge_checks
    assert judge.rubric_ids == [implicit_item_id(CATCHING)]
    assert json.loads(json.dumps(judge.to_dict()))["rubric"] == [CATCHING]


def test_a_reply_without_the_tool_call_or_an_unreachable_judge_writes_nothing(tmp_path, judge_server, monkeypatch):
    from tests.helpers.judge_server import status_reply, text_reply

    root = project(tmp_path, judge_server, monkeypatch)
    before = (root / "cases" / "c1" / "case.yaml").read_bytes()
    judge_server.push(text_reply("Here are some rubric items: ..."), status_reply(529, "overloaded"))
    res = draft(root)
    assert (res.exit_code, res.stderr) == (2, "scarbook: the judge's draft for c1 is not usable: no propose_rubric "
                                              "tool call in the reply — nothing was written; draft again, or propose "
                                              "rule checks offline with --offline\n")
    res = draft(root)
    assert res.exit_code == 2
    assert res.stderr == ("scarbook: the judge could not draft c1: judge answered HTTP 529: overloaded — nothing was "
                          "written\n")
    assert (root / "cases" / "c1" / "case.yaml").read_bytes() == before


def test_a_reply_that_repeats_an_item_or_hides_escapes_in_one_keeps_each_item_once_in_plain_words(
        tmp_path, judge_server, monkeypatch):
    """The judge's reply is untrusted text. An item proposed twice was certified once and its twin listed as
    `has` — an item the case already had, which it did not; an item holding terminal escapes was printed clean
    but written into case.yaml with them, to reach every terminal that shows the rubric."""
    root = project(tmp_path, judge_server, monkeypatch)
    reply = {"items": [CATCHING, f"  {CATCHING} ", CATCHING, "\x1b[2J\x1b[31m" + BLIND]}
    judge_server.push(tool_reply(tool_input=reply, name="propose_rubric"),
                      *[tool_reply([("FAIL", "two lines"), ("FAIL", "not named")])] * 3,
                      *[tool_reply([("PASS", "one line"), ("PASS", "named")])] * 3)
    res = draft(root)
    assert res.exit_code == 0, res.output
    assert "\n".join(res.stdout.splitlines()[2:]) == f"""\
  keep  item {CATCHING}
        catching: fails the failed artifact all 3 times, passes the good one all 3 times
  drop  item {CATCHING}
        lint duplicate-item: {CATCHING!r} repeats check 2 item 1 — remove one copy: a duplicate doubles its weight \
and its cost
  drop  item {CATCHING}
        lint duplicate-item: {CATCHING!r} repeats check 2 item 1 — remove one copy: a duplicate doubles its weight \
and its cost
  keep  item {BLIND}
        catching: fails the failed artifact all 3 times, passes the good one all 3 times
  has   file_exists {{type: file_exists, path: 'tmp.txt'}}
        blind: passes the failed artifact: it does not see the incident
wrote 2 items and 0 rule checks into {root / 'cases' / 'c1' / 'case.yaml'}; next: `scarbook verify c1`"""
    case = load_case(root / "cases" / "c1")
    assert case.rubric_items == [CATCHING, BLIND]
    assert "\\e" not in (root / "cases" / "c1" / "case.yaml").read_text()


def test_a_key_the_judge_rejects_says_to_draft_offline_not_skip_judge(tmp_path, judge_server, monkeypatch):
    """Drafting has no --skip-judge: a rejected key (401) says what drafting can do without the judge."""
    from tests.helpers.judge_server import status_reply

    root = project(tmp_path, judge_server, monkeypatch)
    before = (root / "cases" / "c1" / "case.yaml").read_bytes()
    judge_server.push(status_reply(401, "invalid x-api-key"))
    res = draft(root)
    assert (res.exit_code, res.stderr) == (2, (
        f"scarbook: the judge at {judge_server.url} rejected the API key in ANTHROPIC_API_KEY (HTTP 401); the draft "
        "stopped: check ANTHROPIC_API_KEY (and judge.api_key_env / judge.base_url in scarbook.yaml) or draft without "
        "the judge: `scarbook rubric draft c1 --offline` proposes rule checks from the artifacts — nothing was "
        "written\n"))
    assert (root / "cases" / "c1" / "case.yaml").read_bytes() == before


def test_an_artifact_longer_than_the_judge_reads_is_drafted_from_what_the_judge_grades(tmp_path, judge_server,
                                                                                        monkeypatch):
    """A failed artifact of 300 kB (a long log filed whole) was sent whole in the draft call — priced so, and past any
    model's prompt for a log of a few MB — while each verdict sees its first judge.max_artifact_bytes. The draft
    now sees what the judge grades, says so before the call, and the prompt says it outside the artifact."""
    failed = "# tiny-agent\n" + "more\n" * 60_000
    root = project(tmp_path, judge_server, monkeypatch, failed=failed)
    judge_server.push(tool_reply(tool_input={"items": [], "checks": [
        {"type": "not_contains", "path": "tmp.txt", "text": "more"}]}, name="propose_rubric"))
    res = draft(root)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("drafting: 1 judge call to claude-sonnet-4-6, at most $0.1077; ")  # (was $0.2576)
    assert lines[1] == ("the failed artifact is 300,013 bytes: the judge is shown the first 100,000 of it, as when it "
                        "grades (judge.max_artifact_bytes)")
    sent = judge_server.requests[0]["body"]["messages"][0]["content"]
    assert "\n[scarbook note, outside the artifact: it is 300013 bytes; its first 100000 are shown, as the judge is " \
           "shown them when it grades]\n" in sent
    assert 100_000 < len(sent) < 102_000
    assert [c.to_dict() for c in load_case(root / "cases" / "c1").checks][1] == \
        {"type": "not_contains", "path": "tmp.txt", "text": "more"}
