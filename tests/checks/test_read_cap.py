"""Issue 33.10: a file over the rule checks' read cap fails its check naming the file, its size and the
setting that raises the cap — never a pass on the part that was read (a fail, not an error: the agent made
the file; tests/checks/test_agent_made_errors.py). A real agent process writes a
21 MB artifact whose forbidden word and extra lines come after the first 20 MB."""

from __future__ import annotations

import json
import sys
import textwrap

BIG = 21_000_000
AGENT = r'''
import sys
with open("out.txt", "w") as f:
    f.write("a" * 20_999_990 + "\nFORBIDDEN")
print("done")
'''


def _project(project, extra: str = "") -> None:
    agent = project.root / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]}}
        runs: 1
        concurrency: 1
        timeout_s: 60
        """) + extra)
    project.case("forbidden", "id: forbidden\ntask: t\nchecks:\n  - {type: not_contains, path: out.txt, text: FORBIDDEN}\n")
    project.case("one-line", "id: one-line\ntask: t\nchecks:\n  - {type: line_count, path: out.txt, max: 1}\n")


def _runs(project) -> tuple[int, dict]:
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out))
    return result.exit_code, {r["case_id"]: r for r in json.loads(out.read_text())["runs"]}


def test_a_file_over_the_read_cap_fails_its_check_naming_it_never_a_pass(project) -> None:
    _project(project)
    code, runs = _runs(project)
    assert code == 1
    for cid in ("forbidden", "one-line"):
        run = runs[cid]
        assert run["status"] == "fail", run
        check = run["checks"][0]
        assert check["status"] == "fail"
        assert check["detail"] == (f"out.txt is {BIG:,} bytes, more than the 20,000,000 a rule check reads: failed "
                                   "unread — raise max_read_bytes in scarbook.yaml to check it")
        assert run["cause"]["kind"] == "case", run["cause"]


def test_max_read_bytes_raises_the_cap(project) -> None:
    _project(project, "max_read_bytes: 30000000\n")
    code, runs = _runs(project)
    assert code == 1
    assert runs["forbidden"]["checks"][0]["detail"] == "out.txt contains 'FORBIDDEN' at line 2 but must not"
    assert runs["one-line"]["checks"][0]["detail"] == "out.txt has 2 lines, expected at most 1"
