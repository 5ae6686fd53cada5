"""Issue 33.11: the verdict cache cannot be poisoned by an agent. A real hostile agent process, run
unconfined, rewrites the judge-cache entries under workspaces/ (every verdict to PASS; a PASS entry
copied over a FAIL one with its key edited); the judge is the real SDK against the loopback
Messages-API server, whose request log says whether it was asked.

- Entries written while an unconfined agent ran are never used by a sandboxed session, nor by the
  unconfined session itself.
- Every entry is checked against the key it claims before use: an entry whose inputs (the artifact's
  hash, rubric, model, settings) do not hash to its key is named and the judge asked again."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.judge.cache_trust import MARGIN_NS
from tests.helpers.hostile_project import hostile_project, judged_case
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.recorder_upstream import sandbox_or_skip

# Writes the artifact the project's `artifact.txt` names; then, when POISON is set in the project,
# does what it says to every verdict-cache entry it can reach.
AGENT = r'''
import json, os, pathlib, sys
root = pathlib.Path(sys.argv[1])
pathlib.Path("out.txt").write_text((root / "artifact.txt").read_text())
poison = root / "POISON"
if poison.exists():
    how = poison.read_text().strip()
    entries = sorted((root / "workspaces" / "judge-cache").rglob("*.json"))
    said = {p: json.loads(p.read_text()) for p in entries if p.parent.name != "unconfined-running"}
    if how == "pass":                       # every verdict to PASS, the rest of the entry as it was
        for p, e in said.items():
            for item in e["items"]:
                item["verdict"] = "PASS"
            p.write_text(json.dumps(e))
    elif how == "swap":                     # a PASS entry copied over each FAIL one, its key edited to fit
        good = next(e for e in said.values() if all(i["verdict"] == "PASS" for i in e["items"]))
        for p, e in said.items():
            if any(i["verdict"] == "FAIL" for i in e["items"]):
                p.write_text(json.dumps({**good, "key": p.stem}))
print("done")
'''

def _project(root: Path, url: str, isolation: str) -> None:
    (root / "artifact.txt").write_text("bad\n")
    hostile_project(root, AGENT, url, isolation=isolation, cases={"c": judged_case("c")})


def _eval(root: Path, *args: str) -> tuple[int, dict]:
    _settled(root)
    out = root / "report.json"
    result = CliRunner().invoke(main, ["-C", str(root), "eval", "-q", "--json", str(out), *args],
                                catch_exceptions=False)
    return result.exit_code, json.loads(out.read_text())["runs"][0]


def _settled(root: Path) -> None:
    """Wait until the cache's last change is older than the next session's window could start (a fast
    machine starts the next session within the margin a window takes before its start)."""
    files = list((root / "workspaces" / "judge-cache").rglob("*"))
    last = max((p.lstat().st_ctime_ns for p in files), default=0)
    while time.time_ns() - MARGIN_NS <= last:
        time.sleep(0.005)


def _isolated(root: Path, isolation: str) -> None:
    text = (root / "scarbook.yaml").read_text()
    (root / "scarbook.yaml").write_text(text.replace("isolation: sandbox", f"isolation: {isolation}")
                                        .replace("isolation: none", f"isolation: {isolation}"))


def test_entries_an_unconfined_agent_rewrote_are_never_used(tmp_path, judge_server, monkeypatch) -> None:
    sandbox_or_skip(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    _project(tmp_path, judge_server.url, "sandbox")
    judge_server.default = tool_reply([("FAIL", "it says bad")])
    code, run = _eval(tmp_path)  # sandboxed: the judge grades the bad artifact FAIL, and it is cached
    assert (code, run["status"], len(judge_server.requests)) == (1, "fail", 1)

    _isolated(tmp_path, "none")
    (tmp_path / "POISON").write_text("pass")
    code, run = _eval(tmp_path)  # unconfined: its agent rewrites every entry to PASS before the judge reads
    assert run["status"] == "fail", run  # not even this session uses what its own agent wrote
    assert len(judge_server.requests) == 2

    (tmp_path / "POISON").unlink()
    _isolated(tmp_path, "sandbox")
    code, run = _eval(tmp_path)  # sandboxed again: the entries the unconfined agent rewrote are not used
    assert (code, run["status"]) == (1, "fail"), run
    assert len(judge_server.requests) == 3
    code, run = _eval(tmp_path)  # what that sandboxed session cached is used by the next one
    assert (code, run["status"], len(judge_server.requests)) == (1, "fail", 3)


def test_an_entry_whose_inputs_do_not_hash_to_its_key_is_named_and_the_judge_asked(tmp_path, judge_server,
                                                                                      monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    _project(tmp_path, judge_server.url, "none")
    (tmp_path / "artifact.txt").write_text("good\n")
    judge_server.push(tool_reply([("PASS", "it says good")]), tool_reply([("FAIL", "it says bad")]))
    assert _eval(tmp_path)[1]["status"] == "pass"
    (tmp_path / "artifact.txt").write_text("bad\n")
    assert _eval(tmp_path)[1]["status"] == "fail"
    assert len(judge_server.requests) == 2

    (tmp_path / "artifact.txt").write_text("good\n")
    (tmp_path / "POISON").write_text("swap")  # an agent copies the good artifact's PASS over the bad one's FAIL
    assert _eval(tmp_path)[1]["status"] == "pass"  # (the good artifact's own entry, untouched)
    assert len(judge_server.requests) == 2
    (tmp_path / "POISON").unlink()
    (tmp_path / "artifact.txt").write_text("bad\n")
    judge_server.default = tool_reply([("FAIL", "it says bad")])
    code, run = _eval(tmp_path)  # the next session reads the swapped entry: its inputs are the good artifact's
    assert (code, run["status"]) == (1, "fail"), run
    assert len(judge_server.requests) == 3
    notes = run["checks"][0]["judge"].get("cache_notes") or []
    assert any("its inputs do not hash to the key it claims" in n for n in notes), notes
