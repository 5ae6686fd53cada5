"""Each rule check on a real workspace: pass and fail with the one-line detail a person acts on."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from scarbook.checks import CheckContext, run_check, run_checks
from scarbook.fs import safefs
from scarbook.models import Case, Check, WorkspaceDiff


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "tmp.txt").write_text("# tiny-agent\n")
    (root / "README.md").write_text("# tiny-agent\n\nA minimal AI agent.\nline four\n")
    (root / "config.json").write_text('{"debug": false, "retries": 3, "servers": [{"name": "a/b"}]}')
    (root / "broken.json").write_text('{"debug": false,\n}')
    (root / "sub").mkdir()
    os.mkfifo(root / "fifo")  # an agent may leave one; reading it must not block the check
    return root


def ctx_for(ws: Path, output: str = "", diff: WorkspaceDiff | None = None) -> CheckContext:
    return CheckContext(case=Case(id="c", task="t"), workspace=ws, output=output, diff=diff or WorkspaceDiff())


async def outcome(ws: Path, ctype: str, output: str = "", diff: WorkspaceDiff | None = None, **params):
    r = await run_check(Check(ctype, params), ctx_for(ws, output, diff))
    return r.status, r.detail


CASES = [
    ("file_exists", {"path": "tmp.txt"}, "pass", "tmp.txt exists (13 bytes)"),
    ("file_exists", {"path": "nope.txt"}, "fail", "nope.txt does not exist"),
    ("file_exists", {"path": "sub"}, "fail", "sub is a directory, not a file"),
    ("file_absent", {"path": "nope.txt"}, "pass", "nope.txt is absent"),
    ("file_absent", {"path": "tmp.txt"}, "fail", "tmp.txt exists but must not"),
    ("contains", {"path": "tmp.txt", "text": "# tiny"}, "pass", "tmp.txt contains '# tiny'"),
    ("contains", {"path": "tmp.txt", "text": "agent v2"}, "fail",
     "tmp.txt does not contain 'agent v2' (starts: '# tiny-agent\\n')"),
    ("contains", {"path": "missing.txt", "text": "x"}, "fail", "missing.txt does not exist"),
    ("contains", {"path": "sub", "text": "x"}, "fail", "sub is a directory, not a file"),
    ("contains", {"path": "tmp.txt/x", "text": "x"}, "fail", "tmp.txt/x does not exist"),
    ("contains", {"path": "fifo", "text": "x"}, "fail", "fifo is not a regular file"),  # and does not hang
    ("not_contains", {"path": "README.md", "text": "secret"}, "pass", "README.md does not contain 'secret'"),
    ("not_contains", {"path": "README.md", "text": "minimal"}, "fail",
     "README.md contains 'minimal' at line 3 but must not"),
    ("regex", {"path": "README.md", "pattern": r"^A \w+ AI"}, "pass", "README.md matches /^A \\w+ AI/ at 'A minimal AI'"),
    ("regex", {"path": "README.md", "pattern": r"^v\d+$"}, "fail", "README.md does not match /^v\\d+$/"),
    ("regex", {"path": "README.md", "pattern": "("}, "fail",
     "pattern '(' is not a valid regular expression: missing ), unterminated subpattern at position 0"),
    ("line_count", {"path": "tmp.txt", "equals": 1}, "pass", "tmp.txt has 1 line"),
    ("line_count", {"path": "README.md", "equals": 1}, "fail", "README.md has 4 lines, expected exactly 1"),
    ("line_count", {"path": "README.md", "min": 5}, "fail", "README.md has 4 lines, expected at least 5"),
    ("line_count", {"path": "README.md", "max": 3}, "fail", "README.md has 4 lines, expected at most 3"),
    ("line_count", {"path": "README.md", "min": 2, "max": 4}, "pass", "README.md has 4 lines"),
    ("json_valid", {"path": "config.json"}, "pass", "config.json is valid JSON"),
    ("json_valid", {"path": "broken.json"}, "fail",
     "broken.json is not valid JSON: Expecting property name enclosed in double quotes at line 2 column 1"),
    ("json_valid", {"path": "config.json", "pointer": "/retries", "equals": 3}, "pass", "config.json/retries = 3"),
    ("json_valid", {"path": "config.json", "pointer": "/debug", "equals": True}, "fail",
     "config.json/debug is false, expected true"),
    ("json_valid", {"path": "config.json", "pointer": "/servers/0/name", "equals": "a/b"}, "pass",
     'config.json/servers/0/name = "a/b"'),
    ("json_valid", {"path": "config.json", "pointer": "/servers/3"}, "fail", "JSON pointer /servers/3: no index '3'"),
    # '²' is a digit to str.isdigit, not to int: the check crashed with a ValueError
    ("json_valid", {"path": "config.json", "pointer": "/servers/²"}, "fail", "JSON pointer /servers/²: no index '²'"),
    ("json_valid", {"path": "config.json", "pointer": "/colour"}, "fail", "JSON pointer /colour: no key 'colour'"),
    ("output_contains", {"text": "one line"}, "pass", "output contains 'one line'"),
    ("output_contains", {"text": "two lines"}, "fail",
     "output does not contain 'two lines' (output starts: 'done — the file contains one line')"),
    ("output_regex", {"pattern": r"contains (one|1) line"}, "pass",
     "output matches /contains (one|1) line/ at 'contains one line'"),
    ("output_regex", {"pattern": r"^wrote \d+ lines"}, "fail", "output does not match /^wrote \\d+ lines/"),
]


@pytest.fixture(params=["dirfd", "portable"])
def fs_mode(request, monkeypatch) -> str:
    """Each file check also runs through safefs's portable path (what Windows takes), forced here."""
    monkeypatch.setattr(safefs, "MODE", request.param)
    return request.param


@pytest.mark.parametrize("ctype,params,status,detail", CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
async def test_rule_check(ws: Path, fs_mode: str, ctype: str, params: dict, status: str, detail: str) -> None:
    got = await outcome(ws, ctype, output="done — the file contains one line", **params)
    assert got == (status, detail)


async def test_only_changed(ws: Path) -> None:
    ok = WorkspaceDiff(created=["tmp.txt"])
    assert await outcome(ws, "only_changed", diff=ok, paths=["tmp.txt"]) == ("pass", "only tmp.txt changed")
    assert await outcome(ws, "only_changed", paths=["tmp.txt"]) == ("pass", "nothing changed")
    bad = WorkspaceDiff(created=["tmp.txt", "notes.md"], modified=["README.md"], deleted=["old.txt"])
    assert await outcome(ws, "only_changed", diff=bad, paths=["tmp.txt"]) == (
        "fail", "changed outside the allowed list: created notes.md; modified README.md; deleted old.txt")
    globbed = WorkspaceDiff(created=["out/a.txt", "out/b.txt"])
    assert await outcome(ws, "only_changed", diff=globbed, paths=["out/*"]) == ("pass", "only out/* changed")


async def test_command_exit_codes_and_timeout(ws: Path) -> None:
    assert await outcome(ws, "command", run="test -f tmp.txt") == ("pass", "command 'test -f tmp.txt' exited 0")
    assert await outcome(ws, "command", run="echo first; echo 'it broke' >&2; exit 1") == (
        "fail", "command \"echo first; echo 'it broke' >&2; exit 1\" exited 1: it broke")
    start = time.monotonic()
    status, detail = await outcome(ws, "command", run="sleep 30", timeout_s=1)
    assert (status, detail) == ("fail", "command 'sleep 30' timed out after 1s")
    assert time.monotonic() - start < 5


async def test_command_runs_in_the_workspace(ws: Path) -> None:
    assert (await outcome(ws, "command", run="pwd > where.txt"))[0] == "pass"
    assert (ws / "where.txt").read_text().strip() == str(ws)


async def test_a_check_never_follows_a_symlink_in_or_out(ws: Path, tmp_path: Path, fs_mode: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("# tiny-agent\n")
    os.symlink(secret, ws / "link.txt")  # what an agent could do at run time
    os.symlink("tmp.txt", ws / "inside.txt")  # even to a file inside: a link can be swapped at any time
    os.symlink(tmp_path, ws / "d")
    for ctype, params in (("file_exists", {}), ("contains", {"text": "tiny"}), ("line_count", {"equals": 1})):
        assert await outcome(ws, ctype, path="link.txt", **params) == ("fail", "link.txt is a symlink")
        assert await outcome(ws, ctype, path="inside.txt", **params) == ("fail", "inside.txt is a symlink")
        assert await outcome(ws, ctype, path="d/secret.txt", **params) == ("fail", "d is a symlink")
    assert await outcome(ws, "file_absent", path="link.txt") == ("fail", "link.txt exists but must not")
    assert await outcome(ws, "file_absent", path="d/secret.txt") == ("fail", "d is a symlink")


async def test_a_large_file_is_read_whole_up_to_the_cap(ws: Path) -> None:
    (ws / "big.txt").write_bytes(b"a" * 3_000_000 + b"needle")
    assert await outcome(ws, "contains", path="big.txt", text="needle") == ("pass", "big.txt contains 'needle'")


async def test_check_on_a_deleted_workspace_fails_not_errors(tmp_path: Path, fs_mode: str) -> None:
    gone = tmp_path / "gone"
    assert await outcome(gone, "file_exists", path="tmp.txt") == ("fail", "tmp.txt does not exist")
    status, detail = await outcome(gone, "command", run="true")
    assert status == "fail" and detail.startswith("could not read the workspace: ")


async def test_short_circuit_skips_later_checks(ws: Path) -> None:
    checks = [Check("file_exists", {"path": "tmp.txt"}), Check("line_count", {"path": "README.md", "equals": 1}),
              Check("contains", {"path": "tmp.txt", "text": "tiny"}), Check("command", {"run": "touch ran.txt"})]
    seen = []
    results = await run_checks(checks, ctx_for(ws), on_result=seen.append)
    assert [(r.index, r.status) for r in results] == [(0, "pass"), (1, "fail"), (2, "skipped"), (3, "skipped")]
    assert results[2].detail == "not run: check 2 (line_count) did not pass"
    assert not (ws / "ran.txt").exists()  # the skipped command really did not run
    assert seen == results


async def test_judge_check_without_judge_is_skipped(ws: Path) -> None:
    results = await run_checks([Check("file_exists", {"path": "tmp.txt"}), Check("llm_judge", {"rubric": ["x"]})],
                               ctx_for(ws))
    assert [(r.status, r.detail) for r in results][1] == ("skipped", "judge skipped (--skip-judge)")
